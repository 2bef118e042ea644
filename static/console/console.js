// Small progressive enhancements for the console; every page works without them.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy-target]");
  if (!button) return;
  const input = document.getElementById(button.dataset.copyTarget);
  if (!input) return;
  try {
    await navigator.clipboard.writeText(input.value);
  } catch (err) {
    input.select();
    document.execCommand("copy");
  }
  const note = button.parentElement.querySelector(".copied");
  if (note) note.hidden = false;
});

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
});

document.addEventListener("change", (event) => {
  const field = event.target;
  if (field.matches && field.matches("[data-submit-on-change]") && field.form) field.form.submit();
});
