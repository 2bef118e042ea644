// The template and layout editors: Tab in a code field inserts spaces (Escape, then Tab,
// moves on), and the SMS body counts characters and segments while one types, the way
// apps/delivery/console/sms_segments.py does.
(() => {
  const INDENT = "  ";
  let leaving = false;
  document.addEventListener("keydown", (event) => {
    const area = event.target;
    if (!(area instanceof HTMLTextAreaElement) || !area.hasAttribute("data-code-editor")) return;
    if (event.key === "Escape") { leaving = true; return; }
    if (event.key !== "Tab" || event.shiftKey || event.ctrlKey || event.altKey || event.metaKey || leaving) {
      leaving = false;
      return;
    }
    event.preventDefault();
    area.setRangeText(INDENT, area.selectionStart, area.selectionEnd, "end");
    area.dispatchEvent(new Event("input", {bubbles: true}));
  });

  const BASIC = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
  const EXTENSION = "^{}\\[~]|€\f";
  function smsCount(text) {
    const chars = Array.from(text);
    const gsm = chars.every((c) => BASIC.includes(c) || EXTENSION.includes(c));
    const units = gsm ? chars.reduce((n, c) => n + (EXTENSION.includes(c) ? 2 : 1), 0) : text.length;
    const [single, multi] = gsm ? [160, 153] : [70, 67];
    const segments = units === 0 ? 0 : units <= single ? 1 : Math.ceil(units / multi);
    return {encoding: gsm ? "GSM-7" : "UCS-2", units, segments};
  }
  function showCount(area) {
    const out = area.parentElement.querySelector("[data-sms-count]");
    if (!out) return;
    const {encoding, units, segments} = smsCount(area.value.replace(/\r\n/g, "\n"));
    out.textContent = `${units} characters · ${encoding} · ${segments} segment${segments === 1 ? "" : "s"}` +
      (area.value.includes("{{") ? " (before variables are filled in)" : "");
  }
  document.addEventListener("input", (event) => {
    if (event.target instanceof HTMLTextAreaElement && event.target.hasAttribute("data-sms-counter")) showCount(event.target);
  });
  document.querySelectorAll("textarea[data-sms-counter]").forEach(showCount);
})();
