// The segment editor: counts the members the typed rules would match, as they are typed.
(() => {
  const rules = document.getElementById("id_rules");
  const out = document.querySelector("[data-testid=segment-preview]");
  const token = document.querySelector("[name=csrfmiddlewaretoken]").value;
  let timer = null;
  async function preview() {
    const response = await fetch(out.dataset.previewUrl, {
      method: "POST", body: rules.value,
      headers: {"Content-Type": "application/json", "X-CSRFToken": token},
    });
    const body = await response.json();
    out.classList.toggle("error", !response.ok);
    out.textContent = response.ok ? `${body.count} subscribers match.` : `${body.error}${body.field ? " (" + body.field + ")" : ""}`;
  }
  rules.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(preview, 300); });
  preview();
})();
