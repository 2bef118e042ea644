// The template editor's live preview: renders the draft with the sample data as it is edited.
(() => {
  const form = document.getElementById("version-form");
  const pane = document.getElementById("preview");
  const data = document.getElementById("preview-data");
  let timer = null;
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  async function refresh() {
    const body = new FormData();
    body.append("csrfmiddlewaretoken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    body.append("content", form.querySelector("[name=content]").value);
    body.append("data", data.value);
    const layout = form.querySelector("[name=layout]");
    if (layout && layout.value) body.append("layout", layout.value);
    if (form.querySelector("[name=strict]").checked) body.append("strict", "on");
    const response = await fetch(pane.dataset.url, {method: "POST", body, credentials: "same-origin"});
    const result = await response.json();
    if (!response.ok) { pane.innerHTML = `<p class="error">${esc(result.error)}</p>`; return; }
    let html = `<p class="muted">${esc(result.channel)}</p><dl>`;
    for (const [k, v] of Object.entries(result.rendered)) {
      if (k === "html") continue;
      html += `<dt>${esc(k)}</dt><dd><pre>${esc(typeof v === "string" ? v : JSON.stringify(v, null, 2))}</pre></dd>`;
    }
    html += "</dl>";
    pane.innerHTML = html;
    if (result.rendered.html !== undefined) {
      const frame = document.createElement("iframe");
      frame.setAttribute("sandbox", "");
      frame.title = "HTML preview";
      frame.style.cssText = "width:100%;min-height:240px;border:1px solid #ddd";
      frame.srcdoc = result.rendered.html;
      pane.appendChild(frame);
    }
  }
  const schedule = () => { clearTimeout(timer); timer = setTimeout(refresh, 250); };
  form.addEventListener("input", schedule);
  data.addEventListener("input", schedule);
  refresh();
})();
