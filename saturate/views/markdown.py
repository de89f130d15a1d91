"""A session as plain Markdown (``saturate show THREAD --md FILE``): the answer with its citations as links, the
sources, the rounds (query, novelty, decision and why) and the stop reason; a multi-source session with its
sources' tags and who found them, and each source's queries and loop.

It reads the same view as the HTML report (``report.load_session``) and writes GitHub-flavoured Markdown
(pipe tables) that also reads well in a notes app. Every text from a search result, a page or a model
(titles, queries, answers) is untrusted: a link in it is removed (GitHub makes a link of a bare URL) and Markdown's
special characters are escaped so that it shows as written and cannot open a link, an image or HTML; links are only
the sources' own http(s) URLs, percent-encoded where Markdown would end them.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from saturate.state.errors import BadInput
from saturate.state.files import write_output
from saturate.state.text import printable, scrub_urls
from saturate.views.brief import NOTHING, mark

_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")
_CITATION = re.compile(r"\[(\d{1,3})\]")


def _escaped(value: object, allowed: frozenset[str] = frozenset()) -> str:
    # links first (``scrub_urls``: "[link removed]"), then Markdown's special characters: GitHub's renderer makes a
    # link of a bare "https://…", "www.…" or mail address in plain text (its autolink extension): removed, not escaped
    said = scrub_urls(str(value or ""), allowed)[0]
    return _SPECIAL.sub(r"\\\1", printable(said, newlines=False))


def text(value: object) -> str:
    """Untrusted text as Markdown that shows it as written: one line, special characters escaped."""
    return _escaped(value).strip()


def cell(value: object) -> str:
    """A table cell: ``text`` (a pipe escaped) or an em dash when empty."""
    return text(value) or "—"


def url(value: str) -> str:
    """A link target: an http(s) URL with spaces, parentheses and angle brackets percent-encoded; '' otherwise."""
    value = (value or "").strip()
    if not value.lower().startswith(("http://", "https://")):
        return ""
    return quote(value, safe=":/?#@!$&'*+,;=%-._~[]")


def link(title: str, target: str) -> str:
    """``[title](url)``, or the escaped title alone when the URL is not a web address."""
    shown = text(title) or _escaped(target, frozenset({target})).strip()
    href = url(target)
    return f"[{shown}]({href})" if href else shown


def cited(answer: str, sources: list[dict]) -> str:
    """The answer escaped, each ``[n]`` naming a source made a link to it (others left as text)."""
    by_n = {int(s["n"]): s.get("url", "") for s in sources if s.get("n") is not None}
    own = frozenset(u for u in by_n.values() if u)  # the sources' own URLs an answer may name
    out, at = [], 0
    for m in _CITATION.finditer(answer or ""):
        out.append(_escaped(answer[at : m.start()], own))
        n = int(m.group(1))
        href = url(by_n.get(n, ""))
        out.append(f"[\\[{n}\\]]({href})" if href else f"\\[{n}\\]")
        at = m.end()
    out.append(_escaped(answer[at:], own))
    return "".join(out).strip()


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _number(value: object, fmt: str = "{:.2f}") -> str:
    return fmt.format(value) if isinstance(value, (int, float)) else "—"


def render_markdown(view: dict) -> str:
    """The Markdown of a session view (either kind)."""
    return _multi(view) if view.get("kind") == "multi" else _single(view)


def _answer_lines(view: dict) -> list[str]:
    result = view.get("result") or {}
    if not result:
        pending = ", ".join(view.get("next") or []) or "—"
        return ["**Not finished**: the next step is " + text(pending) + f" (`saturate resume {view['thread']}`).", ""]
    lines = [f"**Answer** ({text(result.get('outcome', 'answer'))}): {cited(result.get('answer', ''), _sources(view))}"]
    if result.get("short_answer"):
        lines += ["", f"**Short answer**: {text(result['short_answer'])}"]
    if result.get("brief"):
        lines += ["", "## Brief", ""]
        several = len(result["brief"]) > 1
        for part in result["brief"]:
            if several:
                lines += [f"**{text(str(part.get('part', '')))}**", ""]
            if not part.get("sentences"):
                lines.append(f"- {text(NOTHING)}")
            for s in part.get("sentences") or []:
                cites = "".join(f"[{int(n)}]" for n in s.get("sources") or [])
                said = cited(str(s.get("text", "")) + " " + cites, _sources(view))
                lines.append(f"- {said} {text(mark(s))}")
            lines.append("")
    return lines + [""]


def _sources(view: dict) -> list[dict]:
    return list((view.get("result") or {}).get("sources") or [])


def _single(view: dict) -> str:
    settings, result = view.get("settings") or {}, view.get("result") or {}
    lines = [f"# {text(view['task'])}", ""]
    lines += _answer_lines(view)
    if _sources(view):
        lines += ["## Sources", ""]
        for s in _sources(view):
            excerpt = text(s.get("excerpt", ""))[:300]
            lines.append(
                f"{s['n']}. {link(s.get('title', ''), s.get('url', ''))}" + (f" — {excerpt}" if excerpt else "")
            )
        lines.append("")
    lines += ["## Rounds", ""]
    rows = []
    for rec in view.get("records") or []:
        rows.append(
            [
                str(rec.get("round")),
                cell(rec.get("query")),
                cell(rec.get("source")),
                f"{rec.get('new', 0)}/{rec.get('total', 0)}",
                _number(rec.get("novelty")),
                cell(rec.get("decision")),
                cell(rec.get("reason")),
            ]
        )
    lines += _table(["round", "query", "source", "new/total", "novelty", "decision", "why"], rows) if rows else ["none"]
    lines += ["", "## Stop", "", text(result.get("stop_reason") or "not stopped yet") or "—", ""]
    lines += [
        f"Thread `{view['thread']}` · source {text(settings.get('source'))} · mode {text(settings.get('mode'))} · "
        f"threshold {text(settings.get('novelty_threshold'))} · {len(view.get('records') or [])} rounds",
        "",
    ]
    return "\n".join(lines)


def _multi(view: dict) -> str:
    from saturate.views.report_multi import events_by_source, incremental_pct, source_entries

    result = view.get("result") or {}
    lines = [f"# {text(view['task'])}", ""]
    lines += _answer_lines(view)
    entries = source_entries(view)
    if entries:
        lines += ["## Sources", ""]
        rows = []
        for s in entries:
            found = ", ".join(sorted({str(f.get("source")) for f in s.get("found_by") or []}))
            tag = s.get("tag") or ""
            if s.get("with"):
                tag += " (with " + ", ".join(f"[{n}]" for n in s["with"]) + ")"
            rows.append([str(s["n"]), link(s.get("title", ""), s.get("url", "")), cell(tag), cell(found)])
        lines += _table(["#", "source", "tag", "found by"], rows) + [""]
    lines += ["## Queries by source", ""]
    for name, events in events_by_source(view).items():
        loop = next((lp for lp in view.get("loops") or [] if lp.get("source") == name), {})
        stop = f" — stopped: {text(loop.get('stop_reason'))}" if loop.get("stop_reason") else ""
        lines += [f"### {text(name)}{stop}", ""]
        if loop.get("reasoning"):
            lines += [text(loop["reasoning"]), ""]
        rows = [
            [
                str(ev.get("query_no", i + 1)),
                cell(ev.get("phase", "loop")),
                cell(ev.get("query")),
                f"{ev.get('total', 0) - (ev.get('duplicates') or 0)}/{ev.get('total', 0)}",
                _number(incremental_pct(ev), "{:.0f} %"),
            ]
            for i, (_, ev) in enumerate(events)
        ]
        lines += (_table(["#", "phase", "query", "new/total", "incremental"], rows) if rows else ["no queries"]) + [""]
    lines += ["## Stop", "", text(result.get("stop_reason") or "not stopped yet") or "—", ""]
    lines += [
        f"Thread `{view['thread']}` · {len(view.get('sources') or [])} sources · {len(view['audit'])} queries",
        "",
    ]
    return "\n".join(lines)


def write_markdown_view(view: dict, path: str | Path) -> Path:
    return write_output(path, render_markdown(view), "output file", BadInput)  # a FIFO, a device: one line
