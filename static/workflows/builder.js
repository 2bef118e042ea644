// The journey builder's browser side: selection, keyboard, the system clipboard.
// Everything else (layout, validation, history) happens on the server: each edit is
// one request whose answer replaces the workspace fragment.
(() => {
  "use strict";
  const root = document.getElementById("builder");
  if (!root) return;
  const canEdit = root.dataset.canEdit === "1";
  const csrf = JSON.parse(root.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
  const state = { selected: [], anchor: null, connectFrom: null, edge: null, pasteTimer: null };

  const workspace = () => document.getElementById("builder-workspace");
  const canvas = () => workspace().querySelector(".builder-canvas");
  const revision = () => workspace().dataset.revision;
  const nodeEl = (id) => workspace().querySelector(`.node[data-node="${CSS.escape(id)}"]`);
  const nodes = () => Array.from(workspace().querySelectorAll(".node"));
  const typing = (el) => el && (el.closest("input, textarea, select, [contenteditable]") !== null);

  function alertMessage(text, code) {
    const box = document.getElementById("builder-alert");
    box.innerHTML = "";
    const div = document.createElement("div");
    div.className = "alert";
    div.setAttribute("role", "alert");
    div.dataset.testid = "alert";
    if (code) div.dataset.code = code;
    div.textContent = text;
    box.appendChild(div);
  }

  function send(op, values = {}) {
    if (!canEdit) return Promise.resolve();
    const data = { op, revision: revision(), selected: state.selected.join(","), ...values };
    return htmx.ajax("POST", root.dataset.editUrl, {
      target: "#builder-workspace", swap: "outerHTML", values: data, headers: { "X-CSRFToken": csrf },
    });
  }

  // --- selection ------------------------------------------------------------------------
  function paint() {
    const chosen = new Set(state.selected);
    nodes().forEach((el) => el.classList.toggle("selected", chosen.has(el.dataset.node)));
    workspace().querySelectorAll(".edge").forEach((el) => {
      const e = state.edge;
      el.classList.toggle("selected", !!e && el.dataset.edgeFrom === e.from && el.dataset.edgeHandle === e.handle && el.dataset.edgeTo === e.to);
    });
    workspace().querySelectorAll(".plus").forEach((el) => el.classList.toggle("armed", state.anchor && state.anchor.el === key(el)));
    workspace().querySelectorAll(".port").forEach((el) => {
      const armed = state.connectFrom && state.connectFrom.node === el.dataset.portNode && state.connectFrom.handle === el.dataset.portHandle;
      el.classList.toggle("armed", !!armed);
    });
    root.classList.toggle("inserting", !!state.anchor);
    root.classList.toggle("connecting", !!state.connectFrom);
    const hint = root.querySelector("[data-palette-hint]");
    if (hint) hint.textContent = state.anchor ? "Choose the node type to insert there." : state.connectFrom
      ? `Click the node that ${state.connectFrom.node} (${state.connectFrom.handle}) leads to; Esc cancels.`
      : "Choose a + on the canvas, then a node type; or add one on its own.";
  }

  function key(el) {
    return el.dataset.afterNode ? `after:${el.dataset.afterNode}:${el.dataset.afterHandle}`
      : `edge:${el.dataset.edgeFrom}:${el.dataset.edgeHandle}:${el.dataset.edgeTo}`;
  }

  function select(ids, { inspect = true } = {}) {
    state.selected = ids.filter((id) => nodeEl(id));
    state.edge = null;
    paint();
    if (inspect) loadInspector();
  }

  function loadInspector() {
    const params = new URLSearchParams();
    state.selected.forEach((id) => params.append("node", id));
    // hx-sync="this:replace" on the inspector: a newer selection's form aborts an older one in flight.
    const inspector = document.getElementById("builder-inspector");
    return htmx.ajax("GET", `${root.dataset.inspectorUrl}?${params}`, { source: inspector, target: inspector, swap: "innerHTML" });
  }

  function moveSelection(direction, extend) {
    const all = nodes();
    if (!all.length) return;
    const current = nodeEl(state.selected[state.selected.length - 1] || "");
    if (!current) return select([all[0].dataset.node]);
    const cx = +current.dataset.x, cy = +current.dataset.y;
    let best = null, bestScore = Infinity;
    for (const el of all) {
      if (el === current) continue;
      const dx = +el.dataset.x - cx, dy = +el.dataset.y - cy;
      const along = { ArrowDown: dy, ArrowUp: -dy, ArrowRight: dx, ArrowLeft: -dx }[direction];
      const across = direction === "ArrowDown" || direction === "ArrowUp" ? Math.abs(dx) : Math.abs(dy);
      if (along <= 0) continue;
      const score = along + across * 2;
      if (score < bestScore) { bestScore = score; best = el; }
    }
    if (!best) return;
    const id = best.dataset.node;
    select(extend ? [...state.selected.filter((s) => s !== id), id] : [id]);
    best.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  // --- clipboard ------------------------------------------------------------------------
  async function copySelection(cut) {
    if (!state.selected.length) return;
    const params = new URLSearchParams({ nodes: state.selected.join(",") });
    const answer = fetch(`${root.dataset.copyUrl}?${params}`, { credentials: "same-origin" }).then(async (r) => {
      const text = await r.text();
      if (!r.ok) throw new Error(JSON.parse(text).error || "Could not copy.");
      return text;
    });
    try {
      if (window.ClipboardItem && navigator.clipboard.write) {
        // A promise keeps the keystroke's permission to write while the server answers.
        await navigator.clipboard.write([new ClipboardItem({ "text/plain": answer.then((t) => new Blob([t], { type: "text/plain" })) })]);
      } else {
        await navigator.clipboard.writeText(await answer);
      }
    } catch (err) {
      return alertMessage(err && err.message && !/clipboard/i.test(err.name) ? err.message : "The browser did not let Tidings use the clipboard.", "clipboard");
    }
    const count = state.selected.length;
    if (cut) await send("delete", { nodes: state.selected.join(",") });
    else alertMessage(`Copied ${count} node${count === 1 ? "" : "s"}: paste them into any journey with Ctrl+V (⌘V).`, "copied");
  }

  function paste(text) {
    clearTimeout(state.pasteTimer);
    state.pasteTimer = null;
    send("paste", { payload: text || "" });
  }

  document.addEventListener("paste", (event) => {
    if (!canEdit || typing(event.target)) return;
    event.preventDefault();
    paste(event.clipboardData ? event.clipboardData.getData("text/plain") : "");
  });

  // --- pointer --------------------------------------------------------------------------
  document.addEventListener("click", (event) => {
    const t = event.target;
    if (!root.contains(t)) return;
    const action = t.closest("[data-action]");
    if (action) return runAction(action.dataset.action);
    const issue = t.closest("[data-focus-node]");
    if (issue) { select([issue.dataset.focusNode]); const el = nodeEl(issue.dataset.focusNode); if (el) el.scrollIntoView({ block: "center", inline: "center" }); canvas().focus(); return; }
    const palette = t.closest(".palette-item");
    if (palette) return insert(palette.dataset.type);
    const plus = t.closest(".plus");
    if (plus) { arm(plus); return; }
    const port = t.closest(".port");
    if (port && canEdit) { state.connectFrom = { node: port.dataset.portNode, handle: port.dataset.portHandle }; state.anchor = null; paint(); return; }
    const node = t.closest(".node");
    if (node) return clickNode(node.dataset.node, event.shiftKey || event.ctrlKey || event.metaKey);
    const edge = t.closest(".edge");
    if (edge) { state.edge = { from: edge.dataset.edgeFrom, handle: edge.dataset.edgeHandle, to: edge.dataset.edgeTo }; state.selected = []; paint(); canvas().focus(); return; }
    if (t.closest(".builder-canvas")) { state.anchor = null; state.connectFrom = null; select([], { inspect: true }); }
  });

  function arm(plus) {
    state.connectFrom = null;
    state.anchor = plus.dataset.afterNode
      ? { el: key(plus), after_node: plus.dataset.afterNode, after_handle: plus.dataset.afterHandle }
      : { el: key(plus), edge_from: plus.dataset.edgeFrom, edge_handle: plus.dataset.edgeHandle, edge_to: plus.dataset.edgeTo };
    paint();
    const first = root.querySelector(".palette-item");
    if (first) first.focus();
  }

  function clickNode(id, extend) {
    if (state.connectFrom) {
      const from = state.connectFrom;
      state.connectFrom = null;
      return send("connect", { node: from.node, handle: from.handle, target: id });
    }
    if (extend) {
      const has = state.selected.includes(id);
      return select(has ? state.selected.filter((s) => s !== id) : [...state.selected, id]);
    }
    select([id]);
    canvas().focus();
  }

  function insert(type) {
    const anchor = state.anchor || {};
    state.anchor = null;
    const { el, ...where } = anchor;
    return send("add", { type, ...where });
  }

  function runAction(name) {
    const ids = state.selected.join(",");
    if (name === "undo" || name === "redo") return send(name);
    if (name === "reload") return window.location.reload();
    if (name === "dismiss") { document.getElementById("builder-alert").innerHTML = ""; return; }
    if (name === "delete" && ids) return send("delete", { nodes: ids });
    if (name === "duplicate" && ids) return send("duplicate", { nodes: ids });
    if (name === "copy") return copySelection(false);
  }

  // --- keyboard -------------------------------------------------------------------------
  document.addEventListener("keydown", (event) => {
    const mod = event.ctrlKey || event.metaKey;
    const k = event.key;
    if (typing(event.target)) {
      if (k === "Escape") { event.target.blur(); canvas().focus(); }
      return;
    }
    if (k === "Escape") { state.anchor = null; state.connectFrom = null; select([]); return; }
    if (k.startsWith("Arrow")) { event.preventDefault(); moveSelection(k, event.shiftKey); return; }
    if (!canEdit) return;
    if (mod && (k === "z" || k === "Z")) { event.preventDefault(); send(event.shiftKey ? "redo" : "undo"); return; }
    if (mod && (k === "y" || k === "Y")) { event.preventDefault(); send("redo"); return; }
    if (mod && (k === "c" || k === "C")) { if (state.selected.length) { event.preventDefault(); copySelection(false); } return; }
    if (mod && (k === "x" || k === "X")) { if (state.selected.length) { event.preventDefault(); copySelection(true); } return; }
    if (mod && (k === "v" || k === "V")) {
      // The paste event normally follows; where the browser sends none, read the clipboard.
      state.pasteTimer = setTimeout(async () => {
        try { paste(await navigator.clipboard.readText()); } catch (err) { alertMessage("The browser did not let Tidings read the clipboard.", "clipboard"); }
      }, 150);
      return;
    }
    if (mod && (k === "d" || k === "D")) { event.preventDefault(); runAction("duplicate"); return; }
    if (k === "Delete" || k === "Backspace") {
      event.preventDefault();
      if (state.edge) { const e = state.edge; state.edge = null; send("disconnect", { node: e.from, handle: e.handle, target: e.to }); }
      else runAction("delete");
      return;
    }
    if (mod || event.altKey) return;
    const current = state.selected[state.selected.length - 1];
    if (k === "Enter") {
      const focused = document.activeElement;
      if (focused && focused.classList && focused.classList.contains("plus")) { event.preventDefault(); arm(focused); return; }
      if (focused && focused.classList && focused.classList.contains("port")) { event.preventDefault(); focused.dispatchEvent(new MouseEvent("click", { bubbles: true })); return; }
      if (state.connectFrom && current) { event.preventDefault(); clickNode(current, false); return; }
      if (current) { event.preventDefault(); openForm(); }
      return;
    }
    if (k === "F2" && current) { event.preventDefault(); openForm("#node-label"); return; }
    if ((k === "a" || k === "A" || k === "+") && current) {
      event.preventDefault();
      const plus = workspace().querySelector(`.port-plus[data-after-node="${CSS.escape(current)}"]`)
        || workspace().querySelector(`.edge-plus[data-edge-from="${CSS.escape(current)}"]`);
      if (plus) arm(plus);
      return;
    }
    if ((k === "c" || k === "C") && current) {
      const port = workspace().querySelector(`.port:not(.connected)[data-port-node="${CSS.escape(current)}"]`)
        || workspace().querySelector(`.port[data-port-node="${CSS.escape(current)}"]`);
      if (port) { state.connectFrom = { node: port.dataset.portNode, handle: port.dataset.portHandle }; paint(); }
    }
  });

  async function openForm(selector) {
    const inspector = document.getElementById("builder-inspector");
    const shown = inspector.querySelector('input[name="node"]');
    if (!shown || shown.value !== state.selected[state.selected.length - 1]) await loadInspector();
    const target = inspector.querySelector(selector || "#node-label");
    if (target) { target.focus(); if (target.select) target.select(); }
  }

  // --- after every swap -----------------------------------------------------------------
  function showOps(scope) {
    // A predicate row shows the input its operator needs (both still post; the server reads the right one).
    scope.querySelectorAll(".predicate-row").forEach((row) => {
      const op = row.querySelector("[data-op]");
      if (!op) return;
      row.querySelectorAll("[data-for-ops]").forEach((input) => { input.hidden = !input.dataset.forOps.split(" ").includes(op.value); });
    });
  }
  document.addEventListener("change", (event) => {
    if (event.target.matches && event.target.matches("[data-op]")) showOps(event.target.closest(".predicate-rows"));
  });

  let shown = workspace();
  document.body.addEventListener("htmx:afterSwap", () => {
    const ws = workspace();
    if (ws !== shown) {
      shown = ws;
      const focus = (ws.dataset.focus || "").split(",").filter(Boolean);
      state.selected = focus.length ? focus : state.selected.filter((id) => nodeEl(id));
      state.edge = null;
      paint();
      if (!typing(document.activeElement)) canvas().focus({ preventScroll: true });
    }
    showOps(document);
  });
  document.body.addEventListener("htmx:beforeSwap", (event) => {
    // A refusal answers a message for the alert box (the server says where with HX-Retarget).
    if (event.detail.xhr.status === 0) alertMessage("The server did not answer; nothing was changed.", "offline");
  });

  const initial = (workspace().dataset.focus || "").split(",").filter(Boolean);
  state.selected = initial;
  paint();
  showOps(document);
})();
