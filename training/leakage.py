"""No training question may be an evaluation question: the check every training input goes through.

A question's key is its lower-cased text without punctuation and extra spaces; the keys of every question and claim
under the evaluation data folder (``../shared/data``: ``question`` and ``claim`` fields of its JSONL files) are
banned from training.
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
