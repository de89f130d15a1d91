"""No training question may be an evaluation question: the check every training input goes through.

A question's key is its lower-cased text without punctuation and extra spaces; the keys of every question and claim
under the evaluation data folder (``../shared/data``: ``question`` and ``claim`` fields of its JSONL files) are
banned from training, and so are the questions of the held-out public test splits given with ``--held-out``
(WebQuestions ``test``/``devtest``, CuratedTREC ``curated-test``: the sets the reader is checked on).
"""

from __future__ import annotations

import json
import string
from pathlib import Path

_DROP = str.maketrans("", "", string.punctuation)


def key(question: str) -> str:
    return " ".join(question.lower().translate(_DROP).split())


def evaluation_questions(folder: Path) -> set[str]:
    """The keys of every question and claim in the JSONL files under ``folder``; an error when there are none (a
    wrong folder must not silently disable the check)."""
    keys: set[str] = set()
    for path in sorted(folder.rglob("*.jsonl")):
        if path.name == "corpus.jsonl":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                for field in ("question", "claim"):
                    if isinstance(rec.get(field), str):
                        keys.add(key(rec[field]))
    if not keys:
        raise SystemExit(f"no evaluation questions under {folder}: the leakage check needs them")
    return keys


def held_out_questions(paths: list[Path]) -> set[str]:
    """The keys of the questions of held-out test files (any format ``questions.read_questions`` reads)."""
    from questions import read_questions

    return {key(q["question"]) for path in paths for q in read_questions(path)}
