"""The session report (HTML, self-contained) and the novelty chart (PNG), built from the checkpoint history."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from saturate.graph import research, session_state
from saturate.graph.api import InputError
from saturate.graph.cli import main
from saturate.graph.views.report import load_session, novelty_chart, render_html, round_rows, write_chart, write_html

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
    assert result["stop_reason"].split(":")[0] in page
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
    colors = {c for _, c in img.getcolors(1 << 20)}
    assert (22, 163, 74) in colors  # accept bars
    assert (217, 119, 6) in colors  # ε pass bars (hatched)
    # works from plain records too (notebooks): empty and fixed mode
    novelty_chart([], 3.0, tmp_path / "empty.png")
    novelty_chart(session["records"], 3.0, tmp_path / "fixed.png", mode="fixed")


def test_round_rows(session):
    rows = round_rows(load_session("rep"))
    assert [r["round"] for r in rows] == [r["round"] for r in session["records"]]
    assert rows[1]["query"].startswith("<task> + ") and rows[0]["accepted sources"] == 5


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
