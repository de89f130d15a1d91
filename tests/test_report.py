"""The session reports (HTML, self-contained; single-loop and multi-source) and the novelty chart (PNG), built from
the checkpoint history."""

from __future__ import annotations

import html
import logging
import re
from html import escape as html_escape
from html.parser import HTMLParser

import pytest

from saturate.cli import main
from saturate.graph import research, research_multi, session_state
from saturate.graph.api import InputError
from saturate.views.report import (
    load_session,
    novelty_chart,
    png_label_y,
    render_html,
    round_rows,
    write_chart,
    write_html,
)
from saturate.views.report_parts import LABEL_ASCENT, LABEL_DESCENT, label_baseline

from conftest import BRIDGE, bridge_sources

TASK = "How does photosynthesis convert light into chemical energy?"


class OneOutage:
    """The real corpus, except that search number ``at`` raises ``error``
    (RuntimeError: recorded; KeyboardInterrupt: a crash)."""

    def __init__(self, inner, at=3, error=None):
        self.inner, self.name, self.calls, self.at = inner, inner.name, 0, at
        self.error = error if error is not None else RuntimeError("simulated outage")

    def search(self, query, k):
        self.calls += 1
        if self.calls == self.at:
            raise self.error
        return self.inner.search(query, k)

    def fetch(self, result):
        return self.inner.fetch(result)


class Tags(HTMLParser):
    """Every start tag with its attributes (to check what the page would load)."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.fixture
def session(home, wiki_source):
    # ε = 1: sub-threshold rounds after min_rounds pass through (round 3's search fails and scores 0)
    research(
        TASK,
        thread_id="rep",
        source=OneOutage(wiki_source),
        seed=1,
        max_rounds=4,
        min_rounds=2,
        novelty_threshold=3,
        novelty_epsilon=1.0,
        enrich_overlap_max=0.3,
        reader_stop_p=1.0,  # the novelty gate alone, so every decision kind shows (the reader's: tests/test_gate.py)
    )
    return session_state("rep")


def test_html_report_shows_the_whole_session(session, tmp_path):
    path = write_html("rep", tmp_path / "r.html")
    page = path.read_text()
    records, result = session["records"], session["result"]

    # task, settings, every round with its decision, ε passes marked, knowledge size, errors
    assert TASK in page
    rows = re.findall(r'<tr class="round" data-round="(\d+)" data-decision="(\w+)"', page)
    assert rows == [(str(r["round"]), r["decision"]) for r in records]
    assert re.findall(r'<g class="bar" data-round="(\d+)"', page) == [str(r["round"]) for r in records]
    assert "threshold 3" in page
    eps = [r for r in records if r["decision"] == "epsilon_pass"]
    assert eps and all(f"ε pass: draw {r['epsilon_draw']:.3f} &lt; ε 1" in page for r in eps)
    view = load_session("rep")
    for info in view["rounds"]:
        assert info["knowledge_after"] is not None and f"{info['knowledge_after']:,} chars" in page
    assert "simulated outage" in page and 'id="errors"' in page
    # accepted sources with links, enrichment skips, the result
    for s in result["sources"]:
        assert f'id="src-{s["n"]}"' in page and f'href="{s["url"]}"' in page
    assert any(p["status"] == "skipped" for p in session["pages"])
    for p in session["pages"]:
        assert f'data-status="{p["status"]}"' in page
    cited = re.findall(r"\[(\d+)\]", result["answer"])
    assert cited and all(f'href="#src-{n}">[{n}]</a>' in page for n in cited)  # citations link to the sources
    assert html.escape(result["stop_reason"].split(":")[0], quote=False) in page
    assert "<code>novelty_epsilon</code>" in page and "<code>1.0</code>" in page
    assert page.count('<tr class="step">') == len(view["steps"]) == len(load_session("rep")["steps"])

    # self-contained: no scripts, no style sheets or fonts or images from anywhere, a CSP that forbids loading
    parser = Tags()
    parser.feed(page)
    assert not [t for t, _ in parser.tags if t in ("script", "link", "iframe", "object", "embed", "img")]
    assert "@import" not in page and "url(" not in page.replace("url(#hatch)", "")
    assert "default-src 'none'" in page
    for tag, attrs in parser.tags:
        assert "src" not in attrs, (tag, attrs)
        if "href" in attrs:
            assert tag == "a" and (
                attrs["href"].startswith("#")
                or attrs["href"]
                in {s["url"] for s in result["sources"]}
                | set(p["url"] for p in session["pages"])
                | {u for r in records for u in r["new_urls"]}
            )


def test_report_escapes_what_it_shows(home, wiki_source):
    task = "photosynthesis <script>alert(1)</script> & light"
    research(task, thread_id="esc", source=wiki_source, seed=1, max_rounds=2)
    page = render_html(load_session("esc"))
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; light" in page


def test_novelty_chart_png(session, tmp_path):
    from PIL import Image

    path = write_chart("rep", tmp_path / "n.png")
    img = Image.open(path)
    img.verify()
    img = Image.open(path).convert("RGB")
    assert img.size[0] >= 700 and img.size[1] >= 400
    counted = img.getcolors(1 << 20)
    assert counted is not None
    colors = {c for _, c in counted}
    assert (22, 163, 74) in colors  # accept bars
    assert (217, 119, 6) in colors  # ε pass bars (hatched)
    # works from plain records too (notebooks): empty and fixed mode
    novelty_chart([], 3.0, tmp_path / "empty.png")
    novelty_chart(session["records"], 3.0, tmp_path / "fixed.png", mode="fixed")


def test_round_rows(session):
    rows = round_rows(load_session("rep"))
    assert [r["round"] for r in rows] == [r["round"] for r in session["records"]]
    assert rows[1]["query"] and rows[1]["query"] != TASK and rows[0]["accepted sources"] == 5


def test_show_html_and_chart_cli(session, tmp_path, capsys):
    assert (
        main(["show", "rep", "--html", str(tmp_path / "x" / "r.html"), "--chart", str(tmp_path / "x" / "n.png")]) == 0
    )
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'x' / 'r.html'} ({len(session['records'])} rounds)" in out
    assert (tmp_path / "x" / "r.html").stat().st_size > 5000
    assert (tmp_path / "x" / "n.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["show", "nope", "--html", str(tmp_path / "n.html")]) == 2
    assert "unknown thread 'nope'" in capsys.readouterr().err


def test_report_of_an_unfinished_session(home, wiki_source, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        research(
            TASK,
            thread_id="half",
            source=OneOutage(wiki_source, at=3, error=KeyboardInterrupt()),
            seed=1,
            max_rounds=5,
            min_rounds=5,
        )
    view = load_session("half")
    assert not view["result"] and view["next"] == ["search"]
    page = render_html(view)
    assert "not finished" in page and "saturate resume half" in page
    assert len(re.findall(r'<tr class="round"', page)) == len(view["records"]) >= 1


def test_unknown_thread(home):
    with pytest.raises(InputError):
        load_session("nope")


def test_thread_id_is_shown_as_typed(session, tmp_path):
    """No CSS upper-casing of ids: the kicker is not text-transformed and the id's own span undoes any."""
    page = write_html("rep", tmp_path / "r.html").read_text()
    found = re.search(r'<div class="kicker">(.*?)</div>', page)
    assert found is not None
    kicker = found.group(1)
    assert '<span class="id">rep</span>' in kicker
    css = {m.group(1).strip(): m.group(2) for m in re.finditer(r"([^{}]+)\{([^}]*)\}", page)}
    assert "text-transform" not in css[".kicker"] and "text-transform: none" in css[".id"]


def test_value_labels_are_lifted_over_reference_lines():
    line = 100.0
    for bar_top in [80, 95, 99, 100, 101, 104, 110, 116, 119, 125, 200]:
        y = label_baseline(bar_top, [line])
        assert y <= bar_top - 6  # never inside the bar
        assert y + LABEL_DESCENT < line or y - LABEL_ASCENT > line, (bar_top, y)  # never across the line
        if bar_top > line + 25 or bar_top < line:
            assert y == bar_top - 6  # far from the line: just above the bar
    y = label_baseline(104, [100.0, 93.0])  # lifted over the threshold, then over a fork's own threshold
    assert all(y + LABEL_DESCENT < ly or y - LABEL_ASCENT > ly for ly in (100.0, 93.0))
    # the PNG: a label that would cross the threshold starts above it; others sit just above their bar
    assert png_label_y(0.6, 1.0) > 1.0 and png_label_y(5.0, 1.0) == 5.2 and png_label_y(0.6, None) == 0.8


def test_multi_source_report(home, tmp_path, caplog):
    result = research_multi(BRIDGE, sources=bridge_sources(), thread_id="Tri-Multi")
    state = session_state("Tri-Multi")
    with caplog.at_level(logging.WARNING):
        view = load_session("Tri-Multi")
    assert not caplog.records, [r.getMessage() for r in caplog.records]  # read with the graph that wrote it
    assert view["kind"] == "multi"
    page = write_html("Tri-Multi", tmp_path / "m.html").read_text()
    assert '<span class="id">Tri-Multi</span>' in page and BRIDGE in page

    # the loops per source: every query with its decision and reasoning, each loop's stop reason as written
    rows = re.findall(
        r'<tr class="query" id="q-(\d+)" data-source="([^"]+)" data-phase="(\w+)" data-action="(\w+)"', page
    )
    assert sorted(int(i) for i, *_ in rows) == list(range(len(state["audit"])))
    for i, src, phase, action in rows:
        ev = state["audit"][int(i)]
        assert (src, phase, action) == (ev["source"], ev["phase"], ev["action"])
    assert len(re.findall(r'<g class="bar"', page)) == len(state["audit"])
    for ev in state["audit"]:
        assert html_escape(ev["reasoning"]) in page
    for loop in state["loops"]:
        assert f">{loop['stop_reason']}</span> {html_escape(loop['reasoning'])}" in page
    assert html_escape(result.stop_reason) in page
    # the merged sources with who found them and their tags; the tag reasons; key actors
    for s in result.sources:
        li = re.search(rf'<li id="src-{s.n}" class="source" data-tag="(\w+)">(.*?)</li>', page, re.S)
        assert li and li.group(1) == s.tag
        assert all(f"<b>{f.source}</b>" in li.group(2) for f in s.found_by)
        assert html_escape(s.tag_reason) in li.group(2)
    assert result.tags["contradicted"] >= 1 and 'data-tag="contradicted"' in page
    actors = re.search(r'<h2 id="actors">.*?<h2', page, re.S)
    assert actors is not None and "John Bradfield" in actors.group(0)
    cited = set(re.findall(r"\[(\d+)\]", result.answer))
    assert cited and all(f'href="#src-{n}">[{n}]</a>' in page for n in cited)
    # self-contained like the single-loop report
    parser = Tags()
    parser.feed(page)
    assert not [t for t, _ in parser.tags if t in ("script", "link", "iframe", "object", "embed", "img")]
    assert all("src" not in attrs for _, attrs in parser.tags)


def test_multi_source_report_of_an_unfinished_session(home, tmp_path):
    class Crash:
        name = "press"

        def __init__(self, inner):
            self.inner = inner

        def search(self, query, k):
            raise KeyboardInterrupt("simulated crash")

        def fetch(self, result):
            return self.inner.fetch(result)

    sources = bridge_sources()
    with pytest.raises(KeyboardInterrupt):
        research_multi(BRIDGE, sources={"gov": sources["gov"], "press": Crash(sources["press"])}, thread_id="half-m")
    page = render_html(load_session("half-m"))
    assert "No result yet" in page and "saturate resume half-m" in page


def test_show_html_of_a_multi_source_session_cli(home, tmp_path, capsys):
    research_multi(BRIDGE, sources=bridge_sources(), thread_id="m-cli")
    state = session_state("m-cli")
    assert main(["show", "m-cli", "--html", str(tmp_path / "m.html")]) == 0
    cap = capsys.readouterr()
    assert f"wrote {tmp_path / 'm.html'} ({len(state['audit'])} queries over 2 sources)" in cap.out
    assert cap.err == ""  # no library warnings on the console
    assert (tmp_path / "m.html").stat().st_size > 5000
    # the PNG novelty chart is per round: refused for a multi-source session, after the HTML asked with it is written
    assert main(["show", "m-cli", "--html", str(tmp_path / "m2.html"), "--chart", str(tmp_path / "c.png")]) == 2
    assert "multi-source session" in capsys.readouterr().err
    assert (tmp_path / "m2.html").stat().st_size > 5000 and not (tmp_path / "c.png").exists()
