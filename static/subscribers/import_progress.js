// An import's page: polls its status until the job finishes.
(() => {
  const card = document.querySelector("[data-testid=import-progress]");
  const bar = card.querySelector(".progress");
  async function poll() {
    const response = await fetch(card.dataset.statusUrl, {headers: {"Accept": "application/json"}});
    if (!response.ok) return setTimeout(poll, 2000);
    const job = await response.json();
    for (const el of card.querySelectorAll("[data-field]")) {
      const value = job[el.dataset.field];
      el.textContent = value === null || value === undefined ? "?" : value;
    }
    card.querySelector("[data-field=status]").className = `badge ${job.status}`;
    bar.firstElementChild.style.width = `${job.percent}%`;
    bar.setAttribute("aria-valuenow", job.percent);
    const list = card.querySelector("[data-testid=import-errors]");
    list.replaceChildren(...job.errors.map((e) => Object.assign(document.createElement("li"), {textContent: `Line ${e.line}: ${e.message}`})));
    if (job.status === "pending" || job.status === "running") setTimeout(poll, 500);
  }
  poll();
})();
