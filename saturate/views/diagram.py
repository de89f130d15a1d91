"""The graph diagram, offline: Mermaid and Graphviz DOT text, SVG and PNG pictures.

Everything comes from the compiled graph (default ``build_graph()``): LangGraph's
own view of its nodes and edges (``get_graph()``, a ``conditional`` flag per
edge) and the path maps of its routers (decision name → node), so the picture
follows build.py and nothing here names a node. Conditional edges are drawn
dashed, in another colour, labelled with the decisions that take them
(``next_round`` is written ``next round``). Any compiled graph can be drawn:
``from_graph(build_multi_graph())``.

Pictures need no network and no system package by default: a small layered
layout (longest-path layers, dummy points for long and back edges, barycentre
ordering) is computed here and drawn as SVG (written directly) and as PNG (the
same drawing through matplotlib's Agg backend). ``renderer="graphviz"`` hands
the DOT text to Graphviz's ``dot`` instead when it is installed.
LangGraph's ``draw_mermaid_png`` is never used: it calls a web service.

    from saturate.views.diagram import write_diagrams
    write_diagrams("docs/")   # saturate-graph.mmd, .dot, .svg, .png
"""

from __future__ import annotations

import html
import io
import math
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from saturate.state.errors import BadInput
from saturate.state.files import output_path, write_output

START, END = "__start__", "__end__"

FORMATS = ("mmd", "dot", "svg", "png")
DEFAULT_NAME = "saturate-graph"

# drawing constants (px)
FONT = 14
CHAR_W = FONT * 0.61  # DejaVu Sans Mono advance
NODE_H = 38
PAD_X = 18
LAYER_GAP = 34
LANE_GAP = 40  # between the widest node (or an inner lane's label) and a side lane
COL_GAP = 60
MARGIN = 28
EDGE = "#4b5563"
COND = "#7c3aed"
NODE_FILL = "#eef2ff"
NODE_STROKE = "#6366f1"
ROUTER_FILL = "#f5f3ff"
TERMINAL_FILL = "#1f2937"


@dataclass
class Diagram:
    nodes: list[str]
    edges: list[tuple[str, str, bool, str]]  # source, target, conditional, label

    @property
    def routers(self) -> set[str]:
        return {s for s, _, c, _ in self.edges if c}


def label(node: str) -> str:
    return {START: "START", END: "END"}.get(node, node)


def _compiled(compiled=None):
    if compiled is None:
        # heavy: LangGraph; the CLI imports this module for `saturate graph`'s flags and must start fast
        from saturate.graph.build import build_graph

        compiled = build_graph()
    return compiled


def node_metadata(compiled=None) -> dict[str, dict]:
    """Each node's metadata as given to ``add_node`` (``{"part": "round", "step": "searching"}``),
    in the graph's order, START and END left out (default graph: ``build_graph()``)."""
    g = _compiled(compiled).get_graph()
    return {n: dict(node.metadata or {}) for n, node in g.nodes.items() if n not in (START, END)}


def nodes_in_part(part: str, compiled=None) -> list[str]:
    """The nodes whose metadata says ``"part": part`` (e.g. ``"round"``), in the graph's order."""
    return [n for n, meta in node_metadata(compiled).items() if meta.get("part") == part]


def decision_text(decision: str) -> str:
    """A router's decision name as an edge label: ``need_more_search`` → ``need more search``."""
    return decision.replace("_", " ")


def edge_decisions(compiled=None) -> dict[tuple[str, str], list[str]]:
    """(source, target) → the router decisions that take that conditional edge, in path-map order.

    From the routers' path maps (``add_conditional_edges(node, router, {decision: target})``,
    kept on the compiled graph's builder) and from the decision LangGraph puts on the edge
    (``Edge.data``); a decision named after its target (a ``Send``) is no label, as in LangGraph."""
    compiled = _compiled(compiled)
    out: dict[tuple[str, str], list[str]] = {}
    branches = getattr(getattr(compiled, "builder", None), "branches", None) or {}
    for source, specs in branches.items():
        for spec in specs.values():
            for decision, target in (getattr(spec, "ends", None) or {}).items():
                names = out.setdefault((source, target), [])
                if decision != target and decision not in names:
                    names.append(str(decision))
    for e in compiled.get_graph().edges:
        if e.conditional and e.data is not None:
            names = out.setdefault((e.source, e.target), [])
            if str(e.data) not in names:
                names.append(str(e.data))
    return out


def from_graph(compiled=None) -> Diagram:
    """Nodes and edges of a compiled graph (default: ``build_graph()``), conditional edges
    labelled with their decisions."""
    compiled = _compiled(compiled)
    g = compiled.get_graph()
    decisions = edge_decisions(compiled)
    nodes = list(g.nodes)
    edges = [
        (
            e.source,
            e.target,
            bool(e.conditional),
            " · ".join(decision_text(d) for d in decisions.get((e.source, e.target), [])) if e.conditional else "",
        )
        for e in g.edges
    ]
    return Diagram(nodes, edges)


# ---------------------------------------------------------------- text formats


def mermaid(d: Diagram | None = None) -> str:
    """Mermaid flowchart; conditional edges are dotted (``-.->``) and labelled."""
    d = d or from_graph()
    lines = ["flowchart TD"]
    for n in d.nodes:
        if n in (START, END):
            lines.append(f"    {n}([{label(n)}]):::terminal")
        elif n in d.routers:
            lines.append(f"    {n}({n}):::router")
        else:
            lines.append(f"    {n}({n})")
    for s, t, cond, lab in d.edges:
        arrow = "-.->" if cond else "-->"
        text = f'|"{lab}"|' if lab else ""
        lines.append(f"    {s} {arrow}{text} {t}")
    lines += [
        f"    classDef default fill:{NODE_FILL},stroke:{NODE_STROKE},color:#111827",
        f"    classDef terminal fill:{TERMINAL_FILL},stroke:{TERMINAL_FILL},color:#ffffff",
        f"    classDef router fill:{ROUTER_FILL},stroke:{COND},color:#111827",
        f"    linkStyle {','.join(str(i) for i, e in enumerate(d.edges) if e[2]) or '0'} "
        f"stroke:{COND},stroke-dasharray:6 4",
    ]
    return "\n".join(lines) + "\n"


def dot(d: Diagram | None = None) -> str:
    """Graphviz DOT; conditional edges dashed, coloured and labelled."""
    d = d or from_graph()

    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [
        "digraph saturate {",
        '  graph [rankdir=TB, fontname="DejaVu Sans Mono", nodesep=0.5, ranksep=0.45, bgcolor="white"];',
        f'  node [shape=box, style="rounded,filled", fillcolor="{NODE_FILL}", color="{NODE_STROKE}", '
        'fontname="DejaVu Sans Mono", fontsize=12];',
        f'  edge [color="{EDGE}", fontname="DejaVu Sans Mono", fontsize=10];',
    ]
    for n in d.nodes:
        if n in (START, END):
            lines.append(
                f'  {q(n)} [label={q(label(n))}, shape=oval, fillcolor="{TERMINAL_FILL}", fontcolor="white", '
                f'color="{TERMINAL_FILL}"];'
            )
        elif n in d.routers:
            lines.append(f'  {q(n)} [label={q(n)}, fillcolor="{ROUTER_FILL}", color="{COND}"];')
        else:
            lines.append(f"  {q(n)} [label={q(n)}];")
    for s, t, cond, lab in d.edges:
        attrs = [f'style=dashed, color="{COND}", fontcolor="{COND}"'] if cond else []
        if lab:
            attrs.append(f"label={q(' ' + lab + ' ')}")
        lines.append(f"  {q(s)} -> {q(t)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- layout


@dataclass
class EdgePath:
    source: str
    target: str
    conditional: bool
    label: str
    points: list[tuple[float, float]]  # polyline, drawn with rounded corners
    label_at: tuple[float, float, str] = (0.0, 0.0, "start")  # x, y, text-anchor


@dataclass
class Layout:
    width: float
    height: float
    boxes: dict[str, tuple[float, float, float, float]]  # node -> centre x, centre y, w, h
    paths: list[EdgePath] = field(default_factory=list)


def _back_edges(d: Diagram) -> set[tuple[str, str]]:
    """Edges closing a cycle in a depth-first walk from START (e.g. the loop back to the first step of a round)."""
    out: dict[str, list[str]] = {n: [] for n in d.nodes}
    for s, t, _, _ in d.edges:
        out[s].append(t)
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()

    def visit(n: str) -> None:
        state[n] = 1
        for m in out[n]:
            if state.get(m) == 1:
                back.add((n, m))
            elif m not in state:
                visit(m)
        state[n] = 2

    for root in [START] + d.nodes:
        if root in out and root not in state:
            visit(root)
    return back


def _text_w(text: str, size: float) -> float:
    return len(text) * size * 0.61


def layout(d: Diagram) -> Layout:
    """Top to bottom: the longest path START → END is a straight spine; every other edge
    that skips layers, or closes a loop, runs in a side lane (loops back on the left,
    forward skips on the right); other nodes take the nearest free column."""
    back = _back_edges(d)
    dag = [(t, s) if (s, t) in back else (s, t) for s, t, _, _ in d.edges]
    layer = {n: 0 for n in d.nodes}
    for _ in range(len(d.nodes)):  # longest-path layering (the graph is small)
        changed = False
        for s, t in dag:
            if layer[t] < layer[s] + 1:
                layer[t], changed = layer[s] + 1, True
        if not changed:
            break
    # the spine: longest path from START (to END when reachable)
    best: dict[str, tuple[int, str | None]] = {START: (0, None)} if START in layer else {}
    for n in sorted(d.nodes, key=lambda n: layer[n]):
        if n not in best:
            continue
        for s, t in dag:
            if s == n and best.get(t, (-1, None))[0] < best[n][0] + 1:
                best[t] = (best[n][0] + 1, n)
    tail = END if END in best else max(best, key=lambda n: best[n][0], default=None)
    spine: list[str] = []
    while tail is not None:
        spine.append(tail)
        tail = best[tail][1]
    col: dict[str, int] = {n: 0 for n in spine}
    occupied: dict[int, set[int]] = {}
    for n in spine:
        occupied.setdefault(layer[n], set()).add(0)
    for n in sorted((n for n in d.nodes if n not in col), key=lambda n: (layer[n], d.nodes.index(n))):
        nbrs = [col[m] for a, b in dag for m in ((a,) if b == n else (b,) if a == n else ()) if m in col]
        want = round(sum(nbrs) / len(nbrs)) if nbrs else 1
        used = occupied.setdefault(layer[n], set())
        c = next(c for k in range(0, 2 * len(d.nodes) + 2) for c in (want + k, want - k) if c not in used)
        col[n] = c
        used.add(c)
    node_w = {n: _text_w(label(n), FONT) + 2 * PAD_X for n in d.nodes}
    col_w = max(node_w.values()) + COL_GAP
    X = lambda c: c * col_w  # noqa: E731
    Y = lambda n: layer[n] * (NODE_H + LAYER_GAP)  # noqa: E731
    boxes: dict[str, tuple[float, float, float, float]] = {n: (X(col[n]), Y(n), node_w[n], NODE_H) for n in d.nodes}

    small = FONT - 3
    labels = {(s, t): lab for s, t, _, lab in d.edges}
    needs_lane = [(s, t) for s, t, _, _ in d.edges if (s, t) in back or abs(layer[s] - layer[t]) > 1]
    lane_x: dict[tuple[str, str], float] = {}

    def _beside(n: str, side: int) -> bool:
        """Another node in n's layer on that side (1: right, -1: left): a lane there would cross it."""
        return any(layer[m] == layer[n] and (col[m] - col[n]) * side > 0 for m in d.nodes)

    # the label of a vertical edge goes on its right, or on its left when an elbow leaves its source to the right
    label_side = {
        (s, t): -1
        if col[s] == col[t]
        and any(s2 == s and (s2, t2) not in needs_lane and col[t2] > col[s] for s2, t2, _, _ in d.edges)
        else 1
        for s, t, _, _ in d.edges
    }
    placed: list[tuple[int, int, int, float]] = []  # side, first layer, last layer, outer extent (with label)
    for s, t in sorted(needs_lane, key=lambda e: abs(layer[e[0]] - layer[e[1]])):
        lo, hi = sorted((layer[s], layer[t]))
        sign = -1 if (s, t) in back else 1  # loops back on the left, forward skips on the right
        if any(_beside(n, sign) for n in (s, t)) and not any(_beside(n, -sign) for n in (s, t)):
            sign = -sign  # ... unless a node beside an end is in the way and the other side is free
        edge = max(sign * boxes[n][0] + boxes[n][2] / 2 for n in d.nodes if lo <= layer[n] <= hi)
        for s2, t2, _, lab2 in d.edges:  # beyond the labels of the edges it runs beside, on that side
            if (
                lab2
                and (s2, t2) not in needs_lane
                and label_side[(s2, t2)] == sign
                and lo <= min(layer[s2], layer[t2])
                and max(layer[s2], layer[t2]) <= hi
            ):
                edge = max(edge, sign * boxes[s2][0] + 10 + _text_w(lab2, small))
        for side_, l2, h2, ext in placed:
            if side_ == sign and not (h2 < lo or l2 > hi):
                edge = max(edge, ext)
        x = sign * (edge + LANE_GAP)
        lane_x[(s, t)] = x
        placed.append((sign, lo, hi, sign * x + (8 + _text_w(labels[(s, t)], small) if labels[(s, t)] else 0)))
    ports: dict[tuple[str, int], list[tuple[str, str]]] = {}
    for (s, t), x in sorted(lane_x.items(), key=lambda kv: abs(kv[1])):
        for n in (s, t):
            ports.setdefault((n, 1 if x > boxes[n][0] else -1), []).append((s, t))

    def port(n: str, e: tuple[str, str], x: float) -> tuple[float, float]:
        bx, by, bw, _ = boxes[n]
        sign = 1 if x > bx else -1
        group = ports[(n, sign)]
        off = (group.index(e) - (len(group) - 1) / 2) * 9
        return (bx + sign * bw / 2, by + off)

    paths: list[EdgePath] = []
    for s, t, cond, lab in d.edges:
        sx, sy, _, sh = boxes[s]
        tx, ty, _, th = boxes[t]
        if (s, t) in lane_x:
            lx = lane_x[(s, t)]
            a, b = port(s, (s, t), lx), port(t, (s, t), lx)
            pts = [a, (lx, a[1]), (lx, b[1]), b]
            anchor = "start" if lx > sx else "end"
            label_at = (lx + (8 if anchor == "start" else -8), (sy + ty) / 2, anchor)
        elif sx == tx:
            pts = [(sx, sy + sh / 2), (tx, ty - th / 2)]
            side = label_side[(s, t)]
            label_at = (sx + 10 * side, (sy + sh / 2 + ty - th / 2) / 2 - 4, "start" if side > 0 else "end")
        else:
            ym = (sy + sh / 2 + ty - th / 2) / 2 + 6
            pts = [(sx, sy + sh / 2), (sx, ym), (tx, ym), (tx, ty - th / 2)]
            label_at = ((sx + tx) / 2, ym - 8, "middle")
        paths.append(EdgePath(s, t, cond, lab, pts, label_at))
    # bounding box, then shift everything to the margins
    xs = [x - w / 2 for x, _, w, _ in boxes.values()] + [x + w / 2 for x, _, w, _ in boxes.values()]
    for p in paths:
        xs += [x for x, _ in p.points]
        if p.label:
            x, _, anchor = p.label_at
            w = _text_w(p.label, small)
            xs += {"start": [x, x + w], "end": [x - w, x], "middle": [x - w / 2, x + w / 2]}[anchor]
    dx = MARGIN - min(xs)
    dy = MARGIN + NODE_H / 2
    boxes = {n: (x + dx, y + dy, w, h) for n, (x, y, w, h) in boxes.items()}
    for p in paths:
        p.points = [(x + dx, y + dy) for x, y in p.points]
        p.label_at = (p.label_at[0] + dx, p.label_at[1] + dy, p.label_at[2])
    width = max(xs) + dx + MARGIN
    height = max(y + h / 2 for _, y, _, h in boxes.values()) + MARGIN + 30  # + the legend
    return Layout(width, height, boxes, paths)


def rounded(points: list[tuple[float, float]], radius: float = 12.0) -> list[tuple]:
    """Path commands for a polyline with rounded corners: ("M", p), ("L", p), ("C", c1, c2, p)."""
    cmds: list[tuple] = [("M", points[0])]
    for i in range(1, len(points) - 1):
        (ax, ay), (px, py), (bx, by) = points[i - 1], points[i], points[i + 1]
        la = ((px - ax) ** 2 + (py - ay) ** 2) ** 0.5
        lb = ((bx - px) ** 2 + (by - py) ** 2) ** 0.5
        r = min(radius, la / 2, lb / 2)
        if r <= 0:
            cmds.append(("L", (px, py)))
            continue
        q0 = (px - (px - ax) / la * r, py - (py - ay) / la * r)
        q2 = (px + (bx - px) / lb * r, py + (by - py) / lb * r)
        c1 = (q0[0] + 2 / 3 * (px - q0[0]), q0[1] + 2 / 3 * (py - q0[1]))
        c2 = (q2[0] + 2 / 3 * (px - q2[0]), q2[1] + 2 / 3 * (py - q2[1]))
        cmds += [("L", q0), ("C", c1, c2, q2)]
    cmds.append(("L", points[-1]))
    return cmds


def _arrowhead(tip, before, size=9.0):

    ang = math.atan2(tip[1] - before[1], tip[0] - before[0])
    left = (tip[0] - size * math.cos(ang - 0.4), tip[1] - size * math.sin(ang - 0.4))
    right = (tip[0] - size * math.cos(ang + 0.4), tip[1] - size * math.sin(ang + 0.4))
    return [tip, left, right]


def _style(n: str, d: Diagram) -> tuple[str, str, str, float]:
    """fill, stroke, text colour, corner radius of a node."""
    if n in (START, END):
        return TERMINAL_FILL, TERMINAL_FILL, "#ffffff", NODE_H / 2
    if n in d.routers:
        return ROUTER_FILL, COND, "#111827", 8
    return NODE_FILL, NODE_STROKE, "#111827", 8


# ---------------------------------------------------------------- SVG and PNG


def svg(d: Diagram | None = None) -> str:
    """A standalone SVG (no scripts, no external fonts or images)."""
    d = d or from_graph()
    lay = layout(d)
    e = html.escape
    f = lambda p: f"{p[0]:.1f},{p[1]:.1f}"  # noqa: E731
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{lay.width:.0f}" height="{lay.height:.0f}" '
        f'viewBox="0 0 {lay.width:.0f} {lay.height:.0f}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        f'font-size="{FONT}">',
        "<title>saturate graph</title>",
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for p in lay.paths:
        dstr = " ".join(
            f"{c[0]}{f(c[1])}" if c[0] in "ML" else f"C{f(c[1])} {f(c[2])} {f(c[3])}" for c in rounded(p.points)
        )
        color = COND if p.conditional else EDGE
        dash = ' stroke-dasharray="6 4"' if p.conditional else ""
        cls = "edge conditional" if p.conditional else "edge"
        out.append(f'<g class="{cls}" data-source="{e(p.source)}" data-target="{e(p.target)}">')
        out.append(f'<path d="{dstr}" fill="none" stroke="{color}" stroke-width="1.6"{dash}/>')
        head = _arrowhead(p.points[-1], p.points[-2])
        out.append(f'<polygon points="{" ".join(f(q) for q in head)}" fill="{color}"/>')
        if p.label:
            x, y, anchor = p.label_at
            out.append(
                f'<text x="{x:.1f}" y="{y:.1f}" fill="{color}" font-size="{FONT - 3}" text-anchor="{anchor}" '
                f'dominant-baseline="middle">{e(p.label)}</text>'
            )
        out.append("</g>")
    for n, (x, y, w, h) in lay.boxes.items():
        fill, stroke, color, rx = _style(n, d)
        out.append(f'<g class="node" data-node="{e(n)}">')
        out.append(
            f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx:.1f}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.6"/>'
        )
        out.append(
            f'<text x="{x:.1f}" y="{y:.1f}" fill="{color}" text-anchor="middle" dominant-baseline="central">'
            f"{e(label(n))}</text>"
        )
        out.append("</g>")
    ly = lay.height - MARGIN / 2 - 6
    out.append(
        f'<g class="legend" font-size="{FONT - 3}">'
        f'<line x1="{MARGIN}" y1="{ly}" x2="{MARGIN + 34}" y2="{ly}" stroke="{EDGE}" stroke-width="1.6"/>'
        f'<text x="{MARGIN + 42}" y="{ly}" dominant-baseline="middle" fill="{EDGE}">edge</text>'
        f'<line x1="{MARGIN + 100}" y1="{ly}" x2="{MARGIN + 134}" y2="{ly}" stroke="{COND}" stroke-width="1.6" '
        'stroke-dasharray="6 4"/>'
        f'<text x="{MARGIN + 142}" y="{ly}" dominant-baseline="middle" fill="{COND}">conditional edge</text></g>'
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def png(path: str | Path, d: Diagram | None = None, scale: float = 2.0) -> Path:
    """The same drawing as :func:`svg`, rasterised by matplotlib (Agg, no display, no network)."""
    # heavy: matplotlib (~0.5 s), imported only when a PNG is drawn
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch, PathPatch, Polygon
    from matplotlib.path import Path as MPath

    d = d or from_graph()
    lay = layout(d)
    fig = Figure(figsize=(lay.width / 100, lay.height / 100), dpi=100 * scale)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, lay.width)
    ax.set_ylim(lay.height, 0)
    ax.axis("off")
    pt = 72 / 100  # px -> points at 100 px per inch
    dash = (0, (6 / 1.6, 4 / 1.6))
    family = "DejaVu Sans Mono"
    for p in lay.paths:
        verts, codes = [], []
        for c in rounded(p.points):
            if c[0] == "C":
                verts += [c[1], c[2], c[3]]
                codes += [MPath.CURVE4] * 3
            else:
                verts.append(c[1])
                codes.append(MPath.MOVETO if c[0] == "M" else MPath.LINETO)
        color = COND if p.conditional else EDGE
        ax.add_patch(
            PathPatch(
                MPath(verts, codes),
                fill=False,
                edgecolor=color,
                linewidth=1.6 * pt,
                linestyle=dash if p.conditional else "-",
            )
        )
        ax.add_patch(Polygon(_arrowhead(p.points[-1], p.points[-2]), closed=True, facecolor=color, edgecolor="none"))
        if p.label:
            x, y, anchor = p.label_at
            ax.text(
                x,
                y,
                p.label,
                color=color,
                fontsize=(FONT - 3) * pt,
                va="center",
                ha={"start": "left", "end": "right", "middle": "center"}[anchor],
                family=family,
            )
    for n, (x, y, w, h) in lay.boxes.items():
        fill, stroke, color, r = _style(n, d)
        ax.add_patch(
            FancyBboxPatch(
                (x - w / 2, y - h / 2),
                w,
                h,
                boxstyle=f"round,pad=0,rounding_size={r}",
                facecolor=fill,
                edgecolor=stroke,
                linewidth=1.6 * pt,
            )
        )
        ax.text(x, y, label(n), ha="center", va="center", fontsize=FONT * pt, color=color, family=family)
    ly = lay.height - MARGIN / 2 - 6
    ax.plot([MARGIN, MARGIN + 34], [ly, ly], color=EDGE, linewidth=1.6 * pt)
    ax.text(MARGIN + 42, ly, "edge", color=EDGE, fontsize=(FONT - 3) * pt, va="center", family=family)
    ax.plot([MARGIN + 100, MARGIN + 134], [ly, ly], color=COND, linewidth=1.6 * pt, linestyle=dash)
    ax.text(MARGIN + 142, ly, "conditional edge", color=COND, fontsize=(FONT - 3) * pt, va="center", family=family)
    drawn = io.BytesIO()  # drawn whole first, then written as every output file is (_write)
    fig.savefig(
        drawn,
        format="png",
        facecolor="white",
        metadata={"Title": "saturate graph", "Description": "nodes: " + " ".join(d.nodes)},
    )
    return _write(Path(path), drawn.getvalue())


# ---------------------------------------------------------------- files


class RendererError(RuntimeError):
    """The requested renderer is not available (e.g. Graphviz's dot is not installed)."""


def graphviz_render(dot_text: str, fmt: str, path: Path) -> Path:
    exe = shutil.which("dot")
    if exe is None:
        raise RendererError("Graphviz's `dot` is not installed (apt-get install graphviz); use the built-in renderer")
    # its output on stdout, written here as every output file is: `dot -o FIFO` would wait for a reader
    done = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode(), check=True, capture_output=True, timeout=60)
    return _write(path, done.stdout)


def _write(path: Path, content: str | bytes) -> Path:
    """An output file of the diagram; BadInput, one line, when ``path`` is a folder, a FIFO (its open() waited for a
    reader, forever), a socket or a device other than /dev/null (state/files.py)."""
    return write_output(path, content, "graph file", BadInput)


def write_diagrams(
    out_dir: str | Path = ".", name: str = DEFAULT_NAME, formats=FORMATS, renderer: str = "builtin", compiled=None
) -> list[Path]:
    """Write the diagram files; returns their paths. ``renderer``: ``builtin`` or ``graphviz`` (SVG/PNG only)."""
    if renderer not in ("builtin", "graphviz"):
        raise ValueError(f"unknown renderer {renderer!r}: builtin or graphviz")
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown diagram format(s) {unknown}: choose from {', '.join(FORMATS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for fmt in formats:  # each file checked before anything is drawn: a FIFO or a device there is one line
        output_path(out / f"{name}.{fmt}", "graph file", BadInput)
    d = from_graph(compiled)
    written = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        if fmt == "mmd":
            _write(path, mermaid(d))
        elif fmt == "dot":
            _write(path, dot(d))
        elif renderer == "graphviz":
            graphviz_render(dot(d), fmt, path)
        elif fmt == "svg":
            _write(path, svg(d))
        else:
            png(path, d)
        written.append(path)
    return written
