"""The brief as a person reads it (the CLI, ``saturate show``, the Markdown report): a heading per part when there
are several, each sentence with its citation and how the sources bear it out (``reading.brief``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

NOTHING = "(nothing in the sources addresses this)"


def brief_text(brief: Sequence[Mapping[str, Any]]) -> list[str]:
    """The brief as lines to print: a heading per part (when there are several), each sentence with its
    citation and mark."""
    lines: list[str] = []
    several = len(brief) > 1
    for part in brief:
        if several:
            lines.append(f"{part['part']}:")
        if not part["sentences"]:
            lines.append(("  " if several else "") + f"- {NOTHING}")
        for s in part["sentences"]:
            cite = "".join(f"[{n}]" for n in s["sources"])
            lines.append(f"{'  ' if several else ''}- {s['text']} {cite} {mark(s)}")
    return lines


def mark(s: Mapping[str, Any]) -> str:
    """How the sources bear a sentence out: "(confirmed by [3])", "(contradicted by [4])", "(single source)"."""
    if s.get("status") == "confirmed":
        return "(confirmed by " + ", ".join(f"[{n}]" for n in s.get("confirmed_by") or []) + ")"
    if s.get("status") == "contradicted":
        return "(contradicted by " + ", ".join(f"[{n}]" for n in s.get("contradicted_by") or []) + ")"
    return "(single source)"
