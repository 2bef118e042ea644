"""The canvas as SVG markup, written directly rather than through the template engine.

A 100-node journey is a few thousand attributes; Django's template engine spends most of
an edit's time resolving them one by one. Every text that comes from a draft (ids,
labels, handles, issue messages) goes through ``escape``.
"""

from __future__ import annotations

from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.workflows.builder.layout import CHANNEL, NODE_H, NODE_W, Layout


def _truncate(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def canvas_svg(drawn: Layout, nodes: list[Any], *, can_edit: bool) -> SafeString:
    out = [
        f'<svg class="canvas-svg" xmlns="http://www.w3.org/2000/svg" width="{drawn.width}" height="{drawn.height}" '
        f'viewBox="0 0 {drawn.width} {drawn.height}" role="group" aria-label="Journey graph">',
        '<defs><marker id="builder-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#7a8494"/></marker></defs>',
    ]
    for r in drawn.routes:
        source, handle, target = escape(r.source), escape(r.handle), escape(r.target)
        ends = f'data-edge-from="{source}" data-edge-handle="{handle}" data-edge-to="{target}"'
        out.append(f'<g class="edge{" back" if r.back else ""}" {ends}>')
        out.append(f'<path class="edge-hit" d="{r.path}"/>')
        out.append(f'<path class="edge-line" d="{r.path}" marker-end="url(#builder-arrow)"/>')
        if can_edit:
            x, y = r.plus
            out.append(
                f'<g class="plus edge-plus" tabindex="0" role="button" aria-label="Insert a node between '
                f'{source} and {target}" {ends}><circle cx="{x}" cy="{y}" r="9"/>'
                f'<text x="{x}" y="{y}" dy="4" text-anchor="middle">+</text></g>'
            )
        out.append("</g>")
    for n in nodes:
        b = n.box
        title = " · ".join(n.issues) if n.issues else "Valid"
        out.append(
            f'<g class="node {n.state}" data-node="{escape(n.id)}" data-type="{escape(n.type)}" data-x="{b.cx}" '
            f'data-y="{b.y}" data-state="{n.state}" role="button" aria-label="{escape(n.name)}, {escape(n.title)}, '
            f'{n.state}"><rect class="node-box" x="{b.x}" y="{b.y}" width="{NODE_W}" height="{NODE_H}" rx="9"/>'
            f'<rect class="node-stripe type-{escape(n.type)}" x="{b.x}" y="{b.y}" width="6" height="{NODE_H}" rx="3"/>'
            f'<text class="node-name" x="{b.x + 14}" y="{b.y + 22}">{escape(_truncate(n.name, 22))}</text>'
            f'<text class="node-sub" x="{b.x + 14}" y="{b.y + 41}">{escape(n.subtitle)}</text>'
            f'<circle class="node-state" cx="{b.right - 12}" cy="{b.y + 12}" r="5" data-testid="node-state">'
            f"<title>{escape(title)}</title></circle></g>"
        )
    for p in drawn.ports:
        node, handle = escape(p.node), escape(p.handle)
        focus = (
            f' tabindex="0" role="button" aria-label="Connect {node} by {handle}: then choose a node"'
            if can_edit
            else ""
        )
        label = f'<text class="port-label" x="{p.x + 7}" y="{p.y + 15}">{handle}</text>' if p.handle != "next" else ""
        out.append(
            f'<g class="port{" connected" if p.connected else ""}" data-port-node="{node}" data-port-handle="{handle}"'
            f'{focus}><circle cx="{p.x}" cy="{p.y}" r="5"/>{label}</g>'
        )
        if can_edit and not p.connected:
            cy = p.y + CHANNEL // 2
            out.append(
                f'<g class="plus port-plus" tabindex="0" role="button" aria-label="Add a node after {node} ({handle})" '
                f'data-after-node="{node}" data-after-handle="{handle}"><line x1="{p.x}" y1="{p.y + 7}" x2="{p.x}" '
                f'y2="{cy - 9}"/><circle cx="{p.x}" cy="{cy}" r="9"/><text x="{p.x}" y="{cy}" dy="4" '
                f'text-anchor="middle">+</text></g>'
            )
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every draft-supplied text above is escaped
