// Campaign console: live figures over server-sent events, a small SVG throughput chart,
// and live status on the list page. No libraries.
(function () {
  "use strict";

  function formatEta(seconds) {
    if (seconds === null || seconds === undefined) return "–";
    if (seconds < 60) return seconds + " s";
    const m = Math.floor(seconds / 60), s = seconds % 60;
    return m < 60 ? m + " min " + s + " s" : Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  // The page's one clock format, the same as the server's ``clock`` filter (UTC).
  function formatClock(value) {
    const moment = value instanceof Date ? value : new Date(value);
    if (isNaN(moment.getTime())) return String(value);
    return moment.toISOString().slice(0, 19).replace("T", " ") + " UTC";
  }

  function drawChart(points) {
    const rate = document.getElementById("chart-rate");
    const target = document.getElementById("chart-target");
    if (!rate || !points.length) return;
    const max = Math.max(1, ...points.map((p) => Math.max(p.rate, p.target)));
    const step = points.length > 1 ? 600 / (points.length - 1) : 600;
    const y = (v) => (155 - (v / max) * 140).toFixed(1);
    rate.setAttribute("points", points.map((p, i) => (i * step).toFixed(1) + "," + y(p.rate)).join(" "));
    target.setAttribute("points", points.map((p, i) => (i * step).toFixed(1) + "," + y(p.target)).join(" "));
    document.getElementById("chart-max").textContent = Math.round(max) + " msg/s";
  }

  function render(data) {
    const c = data.counters;
    document.querySelectorAll("[data-figure]").forEach((el) => {
      const name = el.dataset.figure;
      if (name === "eta") el.textContent = formatEta(c.eta_seconds);
      else if (name === "progress") el.textContent = c.progress + "%";
      else if (name in c) el.textContent = c[name];
    });
    const state = document.getElementById("campaign-state");
    // Which controls apply (and whether the last banner still holds) is the server's call:
    // when the state, or whether there are dead letters to retry, changes, ask it again.
    const dead = c.dead > 0 ? "1" : "0";
    if (data.state !== state.dataset.renderedState || dead !== state.dataset.renderedDead) {
      window.location.reload();
      return false;
    }
    state.textContent = data.state;
    state.className = "badge " + data.state;
    const reason = document.getElementById("pause-reason");
    reason.textContent = data.pause_reason;
    reason.hidden = !data.pause_reason;
    const list = document.getElementById("campaign-events");
    list.replaceChildren(...data.events.map((e) => {
      const li = document.createElement("li");
      const at = document.createElement("time");
      at.className = "muted";
      at.dataset.clock = "";
      at.textContent = formatClock(e.at);
      const kind = document.createElement("span");
      kind.className = "badge";
      kind.textContent = e.kind;
      li.append(at, " ", kind, " " + e.message);
      return li;
    }));
    drawChart(data.throughput);
    return true;
  }

  const figures = document.getElementById("campaign-figures");
  if (figures && window.EventSource) {
    const status = document.getElementById("stream-status");
    const source = new EventSource(figures.dataset.streamUrl);
    source.addEventListener("progress", (event) => {
      const data = JSON.parse(event.data);
      if (!render(data)) { source.close(); return; }
      status.textContent = "Live · updated " + formatClock(new Date());
      status.dataset.live = "1";
      if (data.state === "completed" || data.state === "cancelled") source.close();
    });
    source.onerror = () => { status.textContent = "Live updates reconnecting…"; };
  }

  const table = document.getElementById("campaign-list");
  if (table) {
    const refresh = async () => {
      try {
        const response = await fetch(table.dataset.statusUrl, { credentials: "same-origin" });
        const body = await response.json();
        body.campaigns.forEach((c) => {
          const row = table.querySelector('tr[data-campaign="' + c.id + '"]');
          if (!row) return;
          const badge = row.querySelector('[data-field="state"]');
          badge.textContent = c.state;
          badge.className = "badge " + c.state;
          row.querySelector('[data-field="progress"]').textContent = c.progress + "%";
          row.querySelector('[data-field="sent"]').textContent = c.sent;
          row.querySelector('[data-field="current_rate"]').textContent = c.current_rate + "/s";
        });
      } catch (err) { /* next tick */ }
    };
    setInterval(refresh, 2000);
  }
})();
