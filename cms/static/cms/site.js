// Tidings public site: the code blocks' copy buttons. No inline scripts anywhere.
(function () {
  "use strict";
  function copyCode(button) {
    var figure = button.closest(".code-block");
    var code = figure ? figure.querySelector("pre") : null;
    if (!code) return;
    var text = code.innerText.replace(/\n$/, "");
    var done = function (label) {
      button.firstChild.nodeValue = label;
      window.setTimeout(function () { button.firstChild.nodeValue = "Copy"; }, 2000);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done("Copied"); }, function () { done("Press Ctrl+C"); });
    } else {
      done("Press Ctrl+C");
    }
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy-code]");
    if (button) copyCode(button);
  });
})();
