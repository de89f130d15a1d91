"""The graph diagram (Mermaid, DOT, SVG, PNG; offline) and the live progress from LangGraph's stream modes."""

from __future__ import annotations

import io
import json
import shutil
import socket
import xml.etree.ElementTree as ET

import pytest

from saturate.graph import research
from saturate.graph.views import diagram
from saturate.graph.build import build_graph
from saturate.graph.cli import main
from saturate.graph.views.progress import Progress

from test_cli import run_cli

TASK = "How does photosynthesis convert light into chemical energy?"  # on the embedded corpus, always there

NODES = [n for n in build_graph().get_graph().nodes]
CONDITIONAL = {(e.source, e.target) for e in build_graph().get_graph().edges if e.conditional}
PLAIN = {(e.source, e.target) for e in build_graph().get_graph().edges if not e.conditional}
SVG_NS = "{http://www.w3.org/2000/svg}"


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
    assert root.tag == f"{SVG_NS}svg" and float(root.get("width")) > 100
    groups = list(root.iter(f"{SVG_NS}g"))
    nodes = {g.get("data-node"): "".join(g.itertext()).strip() for g in groups if g.get("class") == "node"}
    assert set(nodes) == set(NODES)
    for n, text in nodes.items():
        assert text == {"__start__": "START", "__end__": "END"}.get(n, n)
    edges = {(g.get("data-source"), g.get("data-target")): g for g in groups if (g.get("class") or "").startswith("edge")}
    assert set(edges) == CONDITIONAL | PLAIN
    for key, g in edges.items():  # conditional edges are drawn dashed, in another colour, labelled
        path = g.find(f"{SVG_NS}path")
        if key in CONDITIONAL:
            assert g.get("class") == "edge conditional" and path.get("stroke-dasharray") and path.get("stroke") == diagram.COND
        else:
            assert g.get("class") == "edge" and not path.get("stroke-dasharray") and path.get("stroke") == diagram.EDGE
    assert "accept · epsilon_pass · cap" in ET.tostring(root, encoding="unicode")

    # PNG: a valid image, big enough to read, listing every node in its metadata
    from PIL import Image

    img = Image.open(tmp_path / "saturate-graph.png")
    img.verify()
    img = Image.open(tmp_path / "saturate-graph.png")
    assert img.format == "PNG" and img.size[0] > 600 and img.size[1] > 800
    assert img.text["Description"].split()[1:] == NODES
    assert len(img.convert("RGB").getcolors(1 << 20)) > 20  # drawn, not blank

    mmd = (tmp_path / "saturate-graph.mmd").read_text()
    assert mmd.startswith("flowchart TD")
    for s, t in CONDITIONAL:
        assert f"{s} -.->" in mmd and t in mmd
    for s, t in PLAIN:
        assert f"{s} --> {t}" in mmd
    dot = (tmp_path / "saturate-graph.dot").read_text()
    for n in NODES:
        assert f'"{n}"' in dot
    assert dot.count("style=dashed") == len(CONDITIONAL)


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
        for x2, y2, w2, h2 in boxes[i + 1:]:
            assert abs(x1 - x2) >= (w1 + w2) / 2 or abs(y1 - y2) >= (h1 + h2) / 2
    for p in lay.paths:
        assert all(0 <= x <= lay.width and 0 <= y <= lay.height for x, y in p.points)


# ---------------------------------------------------------------- live progress


class Recorder(Progress):
    """Progress that also logs what it was fed and how much it had printed by then."""

    def __init__(self, **kw):
        self.out = io.StringIO()
        from rich.console import Console

        super().__init__(console=Console(file=self.out, highlight=False, soft_wrap=True, force_terminal=False), **kw)
        self.fed: list[tuple[str, str, int]] = []

    def __call__(self, item):
        super().__call__(item)
        mode, chunk = item
        what = chunk.get("event") if mode == "custom" else ",".join(chunk)
        self.fed.append((mode, what, self.out.getvalue().count("\n")))


def test_progress_prints_each_round_when_its_gate_decides(home, wiki_source):
    progress = Recorder(task=TASK)
    assert progress.stream_mode == ["updates", "custom"]
    research(TASK, thread_id="live", source=wiki_source, seed=4, max_rounds=4, min_rounds=3, stream_handler=progress)
    lines = progress.out.getvalue().splitlines()
    rounds = [line for line in lines if line.startswith("round ")]
    assert [int(line.split(":")[0].split()[1]) for line in rounds] == [1, 2, 3, 4][: len(rounds)] and len(rounds) >= 2
    assert "novelty" in rounds[0] and "→" in rounds[0] and "[local:wikipedia]" in rounds[0]
    assert rounds[1].startswith("round 2: '<task> + ")
    # the line for round k is printed on the gate's custom event, before compress (or enrich) runs
    round_events = [i for i, (mode, what, _) in enumerate(progress.fed) if mode == "custom" and what == "round"]
    assert len(round_events) == len(rounds)
    for k, i in enumerate(round_events):
        assert progress.fed[i][2] == k + 1  # printed by then
        assert progress.fed[i - 1][2] == k  # not before
        assert progress.fed[i + 1][:2] == ("updates", "gate")
    assert [r["round"] for r in progress.rounds] == list(range(1, len(rounds) + 1))
    assert lines[-1].startswith("enrich: ")


def test_progress_falls_back_to_updates_without_custom_events():
    progress = Recorder(task="t", threshold=3.0)
    rec = {"round": 1, "query": "t", "source": "s", "total": 5, "new": 5, "novelty": 4.0, "decision": "accept", "errors": []}
    progress(("updates", {"gate": {"records": [rec]}}))
    progress(("custom", {"event": "round", **rec, "threshold": 3.0}))  # no double line
    assert progress.out.getvalue().splitlines() == ["round 1: 't' [s] new 5/5  novelty 4.00 ≥ 3  → accept"]


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
    assert all({"novelty", "threshold", "decision", "query", "source", "new", "total"} <= set(e) for e in events if e["event"] == "round")
    assert events[-1] == {"event": "step", "node": "decide", "outcome": "answer", "rounds": result["rounds"], "sources": len(result["sources"])}


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
