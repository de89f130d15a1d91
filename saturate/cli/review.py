"""A session paused for a person (``review`` setting): the interactive prompt on a terminal, and the
``resume --approve | --edit FILE`` decisions for scripts.

On a terminal the CLI asks at each review point and resumes with the answer; anywhere else (a pipe, a script,
``--json``) it prints what waits for review and the commands that continue, and exits ``EXIT_REVIEW`` (4): the
pause is a checkpoint, so the session waits across restarts until ``saturate resume THREAD --approve`` or
``--edit FILE`` (the plan: the queries, one per line; the answer: a note, which sends it back for more
search with the note as the next query).
"""

from __future__ import annotations

import argparse
import sys

from saturate.cli.output import print_json, say
from saturate.state.errors import BadInput
from saturate.state.files import bounded_text

EXIT_REVIEW = 4  # the session waits for a review
# A plan is at most 10 queries of 300 characters and a note 300 (state/review.py): 20,000 bytes is far more than a
# decision needs, so a larger --edit file is refused whole rather than cut (a cut would drop queries silently).
MAX_EDIT_BYTES = 20_000


class ReviewFileError(BadInput):
    """--edit FILE cannot be read."""


def decision_from_args(args: argparse.Namespace, point: str | None) -> dict | str | None:
    """The decision ``resume --approve`` / ``--edit FILE`` gives (None: neither flag)."""
    if getattr(args, "approve", False):
        return "approve"
    path = getattr(args, "edit", None)
    if not path:
        return None
    text = edit_text(path)
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if point == "answer":
        return {"action": "more", "note": " ".join(lines)}
    return {"action": "edit", "queries": lines}


def edit_text(path: str) -> str:
    """The text of ``--edit FILE``: a regular UTF-8 file of at most ``MAX_EDIT_BYTES``, read no further than that
    (state/files.py: a device, a FIFO or a folder is refused before it is opened, /dev/zero is never read whole);
    ``ReviewFileError`` for anything else, a binary file included — its bytes would become the plan's queries."""
    text = bounded_text(path, "--edit file", ReviewFileError, max_bytes=MAX_EDIT_BYTES)
    if "\x00" in text:  # valid UTF-8 can still be binary: a NUL byte is no text's (git's test for binary too)
        raise ReviewFileError(f"--edit file {path} holds NUL bytes: a binary file, not text")
    return text


def interactive(args: argparse.Namespace) -> bool:
    return sys.stdin.isatty() and not getattr(args, "json", False)


def ask(review: dict) -> dict | str | None:
    """The decision typed at the terminal for ``review``; None to leave the session waiting."""
    if review.get("point") == "plan":
        return _ask_plan(list(review.get("queries") or []))
    return _ask_answer(review)


def _ask_plan(queries: list[str]) -> dict | str | None:
    original = list(queries)
    while True:
        say("\nThe plan: the first searches, in order", file=sys.stderr)
        for i, q in enumerate(queries, 1):
            say(f"  {i}. {q}", file=sys.stderr)
        say("[Enter] approve · + QUERY add · -N drop · e replace all · q leave it waiting", file=sys.stderr)
        line = _read("plan> ")
        if line is None or line == "q":
            return None
        if line in ("", "a", "y", "approve"):
            if not queries:
                say("the plan needs at least one query", file=sys.stderr)
                continue
            return "approve" if queries == original else {"action": "edit", "queries": queries}
        if line.startswith("+") and line[1:].strip():
            queries.append(line[1:].strip())
        elif line.startswith("-") and line[1:].strip().isdigit() and 1 <= int(line[1:]) <= len(queries):
            queries.pop(int(line[1:]) - 1)
        elif line == "e":
            say("the queries, one per line; an empty line ends", file=sys.stderr)
            new = []
            while (q := _read("  ")) not in (None, ""):
                new.append(q)
            queries = new or queries
        else:
            say(f"not understood: {line!r}", file=sys.stderr)


def _ask_answer(review: dict) -> dict | str | None:
    say(f"\nThe answer ({review.get('outcome')}): {review.get('answer', '')}", file=sys.stderr)
    for s in review.get("sources") or []:
        say(f"  [{s.get('n')}] {s.get('title', '')} — {s.get('url', '')}", file=sys.stderr)
    while True:
        say("[Enter] approve · m send back for more search · q leave it waiting", file=sys.stderr)
        line = _read("answer> ")
        if line is None or line == "q":
            return None
        if line in ("", "a", "y", "approve"):
            return "approve"
        if line == "m":
            note = _read("what to search for: ")
            if note:
                return {"action": "more", "note": note}
        else:
            say(f"not understood: {line!r}", file=sys.stderr)


def _read(prompt: str) -> str | None:
    try:
        return input(prompt).strip()
    except EOFError:
        return None


def print_waiting(result, thread: str, as_json: bool) -> int:
    """A session left waiting: what to review and how to continue; ``EXIT_REVIEW``."""
    if as_json:
        print_json({"thread": thread, **result.model_dump()})
        return EXIT_REVIEW
    review = result.review or {}
    say(f"waiting for review of the {review.get('point')}: thread {thread}")
    if review.get("point") == "plan":
        for i, q in enumerate(review.get("queries") or [], 1):
            say(f"  {i}. {q}")
        say(f"continue: saturate resume {thread} --approve | --edit FILE (the queries, one per line)")
    else:
        say(f"answer: {review.get('answer', '')}")
        say(f"continue: saturate resume {thread} --approve | --edit FILE (a note: search more for it)")
    return EXIT_REVIEW
