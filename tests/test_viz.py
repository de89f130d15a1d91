"""The graph diagram (Mermaid, DOT, SVG, PNG; offline) and the live progress from LangGraph's stream modes."""

from __future__ import annotations

import io
import json
import operator
import shutil
import socket
import xml.etree.ElementTree as ET
from typing import Annotated, Literal, TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph

from saturate.cli import main
from saturate.graph import research
from saturate.graph.build import build_graph
from saturate.graph.build_multi import build_multi_graph
from saturate.views import diagram, report
from saturate.views.progress import Progress

from conftest import run_cli

TASK = "How does photosynthesis convert light into chemical energy?"  # on the embedded corpus, always there

NODES = [n for n in build_graph().get_graph().nodes]
CONDITIONAL = {(e.source, e.target) for e in build_graph().get_graph().edges if e.conditional}
PLAIN = {(e.source, e.target) for e in build_graph().get_graph().edges if not e.conditional}
SVG_NS = "{http://www.w3.org/2000/svg}"
# the decisions of build.py's routers, as the diagram writes them
SINGLE_LOOP_LABELS = {
    ("gate", "compress"): "accepted",
    ("gate", "enrich"): "stopped",
    ("compress", "plan_query"): "next round",
    ("compress", "enrich"): "capped",
    ("decide", "plan_query"): "need more search",
    ("decide", "__end__"): "result",
    ("plan_query", "search"): "planned",
    ("plan_query", "review_plan"): "review",
    ("decide", "review_answer"): "review",
    ("review_answer", "plan_query"): "more search",
    ("review_answer", "__end__"): "approved",
}


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_graph_command_writes_every_format_offline(tmp_path, no_network, capsys):
    assert main(["graph", "--out", str(tmp_path)]) == 0
    written = capsys.readouterr().out.split()
    assert sorted(written) == sorted(str(tmp_path / f"saturate-graph.{f}") for f in ("mmd", "dot", "svg", "png"))

    # SVG: well-formed, one node group per graph node with its name, one edge group per edge
    root = ET.parse(tmp_path / "saturate-graph.svg").getroot()
    width = root.get("width")
    assert root.tag == f"{SVG_NS}svg" and width is not None and float(width) > 100
    groups = list(root.iter(f"{SVG_NS}g"))
    nodes = {g.get("data-node"): "".join(g.itertext()).strip() for g in groups if g.get("class") == "node"}
    assert set(nodes) == set(NODES)
    for n, text in nodes.items():
        assert n is not None
        assert text == {"__start__": "START", "__end__": "END"}.get(n, n)
    edges = {
        (g.get("data-source"), g.get("data-target")): g for g in groups if (g.get("class") or "").startswith("edge")
    }
    assert set(edges) == CONDITIONAL | PLAIN
    for key, g in edges.items():  # conditional edges are drawn dashed, in another colour, labelled
        path = g.find(f"{SVG_NS}path")
        assert path is not None
        if key in CONDITIONAL:
            source, target = key
            assert source is not None and target is not None
            assert g.get("class") == "edge conditional" and path.get("stroke-dasharray")
            assert path.get("stroke") == diagram.COND
            assert "".join(g.itertext()).strip() == SINGLE_LOOP_LABELS[(source, target)]  # the router's decision
        else:
            assert g.get("class") == "edge" and not path.get("stroke-dasharray") and path.get("stroke") == diagram.EDGE
            assert "".join(g.itertext()).strip() == ""

    # PNG: a valid image, big enough to read, listing every node in its metadata
    from PIL import Image
    from PIL.PngImagePlugin import PngImageFile

    img = Image.open(tmp_path / "saturate-graph.png")
    img.verify()
    img = Image.open(tmp_path / "saturate-graph.png")
    assert isinstance(img, PngImageFile)
    assert img.format == "PNG" and img.size[0] > 600 and img.size[1] > 800
    assert img.text["Description"].split()[1:] == NODES
    colors = img.convert("RGB").getcolors(1 << 20)
    assert colors is not None and len(colors) > 20  # drawn, not blank

    mmd = (tmp_path / "saturate-graph.mmd").read_text()
    assert mmd.startswith("flowchart TD")
    for s, t in CONDITIONAL:
        assert f'{s} -.->|"{SINGLE_LOOP_LABELS[(s, t)]}"| {t}' in mmd
    for s, t in PLAIN:
        assert f"{s} --> {t}" in mmd
    dot = (tmp_path / "saturate-graph.dot").read_text()
    for n in NODES:
        assert f'"{n}"' in dot
    assert dot.count("style=dashed") == len(CONDITIONAL)
    for lab in SINGLE_LOOP_LABELS.values():
        assert f'label=" {lab} "' in dot


def test_mermaid_to_stdout_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["graph", "--print"]) == 0
    assert capsys.readouterr().out.startswith("flowchart TD") and not list(tmp_path.iterdir())


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed (apt-get install graphviz)")
def test_graphviz_renderer(tmp_path, capsys):
    assert main(["graph", "--out", str(tmp_path), "--renderer", "graphviz", "--format", "svg", "--format", "png"]) == 0
    svg = (tmp_path / "saturate-graph.svg").read_text()
    ET.fromstring(svg)
    for n in NODES:
        assert f">{n}<" in svg
    assert (tmp_path / "saturate-graph.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graphviz_renderer_missing_is_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["graph", "--out", str(tmp_path), "--renderer", "graphviz", "--format", "svg"]) == 2
    assert "dot` is not installed" in capsys.readouterr().err


def test_layout_keeps_boxes_apart_and_inside():
    lay = diagram.layout(diagram.from_graph())
    boxes = list(lay.boxes.values())
    for i, (x1, y1, w1, h1) in enumerate(boxes):
        assert w1 / 2 <= x1 <= lay.width - w1 / 2 and h1 / 2 <= y1 <= lay.height - h1 / 2
        for x2, y2, w2, h2 in boxes[i + 1 :]:
            assert abs(x1 - x2) >= (w1 + w2) / 2 or abs(y1 - y2) >= (h1 + h2) / 2
    for p in lay.paths:
        assert all(0 <= x <= lay.width and 0 <= y <= lay.height for x, y in p.points)


def test_multi_source_graph_is_drawn_by_the_same_code(tmp_path):
    compiled = build_multi_graph()
    d = diagram.from_graph(compiled)
    labels = {(s, t): lab for s, t, c, lab in d.edges if c}
    assert labels == {
        ("plan", "source_loop"): "",
        ("merge", "breadcrumbs"): "leads",
        ("merge", "triangulate"): "done",
        ("breadcrumbs", "triangulate"): "no leads",
        ("breadcrumbs", "follow"): "",
    }  # Sends: no label
    written = diagram.write_diagrams(tmp_path, compiled=compiled)
    root = ET.parse(tmp_path / "saturate-graph.svg").getroot()
    drawn = {g.get("data-node") for g in root.iter(f"{SVG_NS}g") if g.get("class") == "node"}
    assert drawn == set(compiled.get_graph().nodes) and len(written) == 4
    lay = diagram.layout(d)
    boxes = list(lay.boxes.values())
    for i, (x1, y1, w1, h1) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1 :]:
            assert abs(x1 - x2) >= (w1 + w2) / 2 or abs(y1 - y2) >= (h1 + h2) / 2
    for p in lay.paths:  # no edge runs through a box it does not start or end at
        for a, b in zip(p.points, p.points[1:], strict=False):
            for n, (x, y, w, h) in lay.boxes.items():
                if n in (p.source, p.target):
                    continue
                if a[1] == b[1] and abs(a[1] - y) < h / 2:
                    assert max(a[0], b[0]) <= x - w / 2 or min(a[0], b[0]) >= x + w / 2, (p.source, p.target, n)
                if a[0] == b[0] and abs(a[0] - x) < w / 2:
                    assert max(a[1], b[1]) <= y - h / 2 or min(a[1], b[1]) >= y + h / 2, (p.source, p.target, n)


# ---------------------------------------------------------------- the views read the topology from the graph


class ToyState(TypedDict, total=False):
    round: int
    current: dict
    records: Annotated[list[dict], operator.add]
    done: bool


def _toy_fetch(state: ToyState) -> dict:
    rnd = state.get("round", 0) + 1
    return {"round": rnd, "current": {"round": rnd}}


def _toy_judge(state: ToyState) -> dict:
    rnd = state.get("round", 0)  # set by _toy_fetch, which always runs first
    rec = {
        "round": rnd,
        "query": f"q{rnd}",
        "source": "toy",
        "total": 2,
        "new": 1,
        "novelty": 5.0,
        "decision": "accept",
    }
    get_stream_writer()({"event": "round", **rec})
    return {"records": [rec]}


def _toy_route(state: ToyState) -> Literal["more", "retry", "enough_now"]:
    return "more" if state.get("round", 0) < 2 else "enough_now"


def toy_graph(checkpointer=None):
    """Not saturate's graph: other node names, steps, parts and decisions. A view that restated
    build.py's topology (node names, step texts, edge labels, which nodes make a round) fails on it."""
    g = StateGraph(ToyState)
    g.add_node("fetch", _toy_fetch, metadata={"part": "round", "step": "fetching things"})
    g.add_node("judge", _toy_judge, metadata={"part": "round", "step": "weighing"})
    g.add_node("wrap", lambda state: {"done": True}, metadata={"part": "end", "step": "wrapping up"})
    g.add_edge(START, "fetch")
    g.add_edge("fetch", "judge")
    g.add_conditional_edges("judge", _toy_route, {"more": "fetch", "retry": "fetch", "enough_now": "wrap"})
    g.add_edge("wrap", END)
    return g.compile(checkpointer=checkpointer)


def test_views_follow_the_graph_they_are_given():
    from langgraph.checkpoint.memory import InMemorySaver
    from rich.console import Console

    from saturate.graph.timetravel import branch

    toy = toy_graph(InMemorySaver())

    # diagram: the labels are the path map's decisions (two decisions to one node: both)
    d = diagram.from_graph(toy)
    assert {(s, t): lab for s, t, c, lab in d.edges if c} == {
        ("judge", "fetch"): "more · retry",
        ("judge", "wrap"): "enough now",
    }
    assert '-.->|"enough now"| wrap' in diagram.mermaid(d)

    # progress: the spinner names the task that runs, in the toy's words, with the round it belongs to
    for strip in (False, True):  # True: task events without metadata (older LangGraph): read from the graph
        out = io.StringIO()
        progress = Progress(task="t", console=Console(file=out, force_terminal=False), graph=toy)
        said: list[str] = []
        config: RunnableConfig = {"configurable": {"thread_id": f"toy-{strip}"}}
        for mode, chunk in toy.stream({}, config, stream_mode=progress.stream_mode):
            if strip and mode == "tasks":
                assert isinstance(chunk, dict)
                chunk = {k: v for k, v in chunk.items() if k != "metadata"}
            progress((mode, chunk))
            if progress.status and (not said or said[-1] != progress.status):
                said.append(progress.status)
        assert said == [
            "fetching things",
            "round 1: weighing",
            "after round 1: fetching things",
            "round 2: weighing",
            "wrapping up",
        ]
        assert out.getvalue().splitlines() == [
            "round 1: 'q1' [toy] new 1/2  novelty 5.00  → accept",
            "round 2: 'q2' [toy] new 1/2  novelty 5.00  → accept",
        ]

    # report: a round's steps are the nodes the graph marks as part of a round
    assert report.round_nodes(toy) == ["fetch", "judge"]
    view = report.session_view("toy-False", branch(toy, "toy-False"), toy)
    assert [info["record"]["round"] for info in view["rounds"]] == [1, 2]
    for info in view["rounds"]:
        assert info["steps"] and {s["node"] for s in info["steps"]} <= {"fetch", "judge"}
        assert "wall_ms" in info


# ---------------------------------------------------------------- live progress


class Recorder(Progress):
    """Progress that also logs what it was fed and how much it had printed by then."""

    def __init__(self, **kw):
        self.out = io.StringIO()
        from rich.console import Console

        super().__init__(console=Console(file=self.out, highlight=False, soft_wrap=True, force_terminal=False), **kw)
        self.fed: list[tuple[str, str, int]] = []
        self.started: list[tuple[str, str | None]] = []

    def __call__(self, item):
        super().__call__(item)
        mode, chunk = item
        what = chunk.get("event") if mode == "custom" else chunk.get("name") if mode == "tasks" else ",".join(chunk)
        self.fed.append((mode, what, self.out.getvalue().count("\n")))
        if mode == "tasks" and "input" in chunk:  # a task starts: what the spinner says then
            self.started.append((chunk["name"], self.status))


def test_progress_prints_each_round_when_its_gate_decides(home, wiki_source):
    progress = Recorder(task=TASK)
    assert progress.stream_mode == ["updates", "custom", "tasks"]
    research(TASK, thread_id="live", source=wiki_source, seed=4, max_rounds=4, min_rounds=3, stream_handler=progress)
    lines = progress.out.getvalue().splitlines()
    rounds = [line for line in lines if line.startswith("round ")]
    assert [int(line.split(":")[0].split()[1]) for line in rounds] == [1, 2, 3, 4][: len(rounds)] and len(rounds) >= 2
    assert "novelty" in rounds[0] and "→" in rounds[0] and "[local:wikipedia]" in rounds[0]
    # the query of a slot or a part, and the slots or parts after it (this question has two parts)
    assert rounds[1].startswith("round 2: '") and "parts " in rounds[1]
    # the line for round k is printed on the gate's custom event, before compress (or enrich) runs
    round_events = [i for i, (mode, what, _) in enumerate(progress.fed) if mode == "custom" and what == "round"]
    assert len(round_events) == len(rounds)
    for k, i in enumerate(round_events):
        assert progress.fed[i][2] == k + 1  # printed by then
        assert progress.fed[i - 1][2] == k  # not before
        assert progress.fed[i + 1][:2] == ("updates", "gate")
    assert [r["round"] for r in progress.rounds] == list(range(1, len(rounds) + 1))
    assert lines[-1].startswith("enrich: ")
    # the spinner names the task LangGraph has just started, in the words of its node's metadata
    steps = {n: meta["step"] for n, meta in diagram.node_metadata(build_graph()).items()}
    assert [n for n, _ in progress.started][:3] == ["plan_query", "search", "assess_novelty"]
    for name, status in progress.started:
        assert status is not None, name
        assert status.endswith(steps[name]) or f"{steps[name]} (" in status, (name, status)
    assert ("search", "round 1: searching") in progress.started
    assert ("compress", "after round 1: merging into the knowledge state") in progress.started
    assert progress.started[-2:] == [("enrich", "fetching full pages"), ("decide", "writing the answer")]


def test_progress_falls_back_to_updates_without_custom_events():
    progress = Recorder(task="t", threshold=3.0)
    rec = {
        "round": 1,
        "query": "t",
        "source": "s",
        "total": 5,
        "new": 5,
        "novelty": 4.0,
        "decision": "accept",
        "errors": [],
    }
    progress(("updates", {"gate": {"records": [rec]}}))
    progress(("custom", {"event": "round", **rec, "threshold": 3.0}))  # no double line
    assert progress.out.getvalue().splitlines() == ["round 1: 't' [s] new 5/5  novelty 4.00 ≥ 3  → accept"]


@pytest.mark.slow
def test_cli_progress_modes(home):
    p = run_cli("research", TASK, "--seed", "4", "--thread", "p1", "--max-rounds", "3", home=home)
    assert p.returncode == 0, p.stderr
    rounds = [line for line in p.stderr.splitlines() if line.startswith("round ")]
    assert len(rounds) == 3 and "novelty" in rounds[0] and "→ cap" in rounds[2]

    for flag in ("--quiet", "--json"):  # scripts: nothing on stderr
        p = run_cli("research", TASK, "--seed", "4", "--thread", "p" + flag, flag, home=home)
        assert p.returncode == 0 and p.stderr == "", p.stderr

    p = run_cli("research", TASK, "--seed", "4", "--thread", "p2", "--json", "--events", home=home)
    events = [json.loads(line) for line in p.stderr.splitlines()]
    result = json.loads(p.stdout)
    assert [e["round"] for e in events if e["event"] == "round"] == list(range(1, result["rounds"] + 1))
    assert [e["round"] for e in events if e["event"] == "search"] == list(range(1, result["rounds"] + 1))
    assert all(
        {"novelty", "threshold", "decision", "query", "source", "new", "total"} <= set(e)
        for e in events
        if e["event"] == "round"
    )
    assert events[-1] == {
        "event": "step",
        "node": "decide",
        "outcome": "answer",
        "rounds": result["rounds"],
        "sources": len(result["sources"]),
    }


class StopAt:
    """The corpus, but KeyboardInterrupt on the n-th search (the session stays resumable)."""

    def __init__(self, inner, n):
        self.inner, self.name, self.n, self.calls = inner, inner.name, n, 0

    def search(self, query, k):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return self.inner.search(query, k)

    def fetch(self, r):
        return self.inner.fetch(r)


def test_resume_shows_progress(home, wiki_source):
    from saturate.graph import session_state

    with pytest.raises(KeyboardInterrupt):
        research(TASK, thread_id="cut", source=StopAt(wiki_source, 3), seed=4, max_rounds=4, min_rounds=4)
    done = len(session_state("cut")["records"])
    p = run_cli("resume", "cut", home=home)
    assert p.returncode == 0, p.stderr
    assert "resuming cut at search" in p.stderr
    shown = [line.split(":")[0] for line in p.stderr.splitlines() if line.startswith("round ")]
    assert shown == [f"round {n}" for n in range(done + 1, 5)] and shown
    p = run_cli("resume", "cut", "--quiet", home=home)
    assert p.returncode == 0 and p.stderr == ""
