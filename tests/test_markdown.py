"""``saturate show THREAD --md FILE``: a session as Markdown, rendered here with markdown-it-py (tables on, as on
GitHub) to check its links and tables; untrusted text cannot add a link, an image or HTML."""

from __future__ import annotations

from markdown_it import MarkdownIt

from saturate.cli import main
from saturate.graph import research, research_multi, session_state
from saturate.views.markdown import cited, render_markdown, text
from saturate.views.report import load_session

from conftest import BRIDGE, bridge_sources

TASK = "How does photosynthesis convert light into chemical energy?"


def rendered(md: str):
    """(the HTML, its tokens) as a GitHub-like renderer sees the Markdown."""
    parser = MarkdownIt("commonmark").enable("table")
    return parser.render(md), parser.parse(md)


def links(tokens) -> list[str]:
    out = []
    for t in tokens:
        for child in t.children or []:
            if child.type == "link_open":
                out.append(child.attrGet("href"))
    return out


def table_rows(tokens, table: int = 0) -> list[list[str]]:
    """The rows (header first) of the ``table``-th table, as the texts of their cells."""
    rows, row, n, inside = [], None, -1, False
    for i, t in enumerate(tokens):
        if t.type == "table_open":
            n += 1
            inside = n == table
        elif t.type == "table_close":
            inside = False
        elif inside and t.type == "tr_open":
            row = []
        elif inside and t.type == "tr_close":
            rows.append(row)
        elif inside and t.type == "inline" and tokens[i - 1].type in ("th_open", "td_open"):
            assert row is not None  # a cell is inside a row
            row.append(t.content)
    return rows


def test_a_single_session_as_markdown(home, wiki_source, tmp_path, capsys):
    research(TASK, thread_id="md", source=wiki_source, seed=1, max_rounds=4, min_rounds=2)
    state = session_state("md")
    out = tmp_path / "notes" / "md.md"
    assert main(["show", "md", "--md", str(out)]) == 0
    assert f"wrote {out} ({len(state['records'])} rounds)" in capsys.readouterr().out
    md = out.read_text()
    html, tokens = rendered(md)
    result = state["result"]
    assert html.startswith(f"<h1>{TASK}</h1>")
    # the answer's citations are links to their sources, and every link is a retrieved source's URL
    urls = {s["url"] for s in result["sources"]}
    hrefs = links(tokens)
    assert set(hrefs) == urls and len(hrefs) > len(urls)  # each source listed once and cited at least once
    assert "<h2>Sources</h2>" in html and "<h2>Rounds</h2>" in html and "<h2>Stop</h2>" in html
    rows = table_rows(tokens)
    assert rows[0] == ["round", "query", "source", "new/total", "novelty", "decision", "why"]
    assert [r[0] for r in rows[1:]] == [str(r["round"]) for r in state["records"]]
    assert [r[5] for r in rows[1:]] == [r["decision"] for r in state["records"]]
    assert rows[1][1] == state["records"][0]["query"]  # escaped in the Markdown, as written once rendered
    assert result["stop_reason"][:40] in html


def test_a_multi_source_session_as_markdown(home, tmp_path):
    result = research_multi(BRIDGE, sources=bridge_sources(), thread_id="mm")
    view = load_session("mm")
    html, tokens = rendered(render_markdown(view))
    assert "<h2>Sources</h2>" in html and "<h2>Queries by source</h2>" in html
    sources = table_rows(tokens, 0)
    assert sources[0] == ["#", "source", "tag", "found by"] and len(sources) == len(result.sources) + 1
    assert set(links(tokens)) == {s.url for s in result.sources}
    # one table of queries per source, each query of the audit once
    per_source = [table_rows(tokens, i) for i in range(1, 1 + len(view["sources"]))]
    assert sum(len(t) - 1 for t in per_source) == len(view["audit"])
    assert all(f"<h3>{s['name']}" in html for s in view["sources"])


def test_untrusted_text_holds_no_bare_link_for_github_to_make_a_link_of():
    # GitHub's renderer links a bare URL, "www." name or mail address in plain text: such text leaves them out
    hostile = "see https://evil.example/a, www.evil.example, EVIL.COM and john@evil.example | ok"
    assert "evil" not in text(hostile).lower() and text(hostile).count("link removed") == 4
    # an answer may still name a source's own URL (as text), never another
    sources = [{"n": 1, "url": "https://a.example/x"}]
    answer = cited("Read https://a.example/x [1], not https://evil.example/y.", sources)
    assert "https://a.example/x" in answer and "evil" not in answer


def test_untrusted_text_cannot_add_links_images_or_html():
    hostile = "Click [here](http://evil.example/x) ![img](http://evil.example/i.png) <script>alert(1)</script> | a"
    html, tokens = rendered(f"{text(hostile)}\n")
    assert "<script>" not in html and "<img" not in html and not links(tokens)
    assert "[here]([link removed])" in html  # shown as written, its link removed
    # a citation becomes a link only when it names a source with a web URL
    answer = cited(
        "It is Victoria Falls [1], not [7] [2].",
        [{"n": 1, "url": "https://a.example/V F (falls)"}, {"n": 2, "url": "javascript:alert(1)"}],
    )
    html, tokens = rendered(answer + "\n")
    assert links(tokens) == ["https://a.example/V%20F%20%28falls%29"]
    assert html == '<p>It is Victoria Falls <a href="https://a.example/V%20F%20%28falls%29">[1]</a>, not [7] [2].</p>\n'
