"""The reader's public training questions, read from each source's own format (docs/reader.md names the sources).

Every reader yields ``{"question", "answers", "patterns", "distractors", "set"}``: gold answer strings, CuratedTREC's
answer regular expressions, and OpenTriviaQA's wrong choices (ready hard negatives). ``read_questions`` picks the
reader by the file's name; a folder is OpenTriviaQA's ``categories/``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

# Trivia answers that cannot be found as a span of a sentence: a judgement or a choice among the shown ones.
_NOT_A_SPAN = {"true", "false", "yes", "no", "none of these", "all of these", "both", "neither"}


def _q(question: str, answers=(), patterns=(), distractors=(), set_name: str = "") -> dict:
    return {
        "question": " ".join(question.split()),
        "answers": [a for a in answers if a and a.strip()],
        "patterns": list(patterns),
        "distractors": [d for d in distractors if d and d.strip()],
        "set": set_name,
    }


def webquestions(path: Path) -> Iterator[dict]:
    """WebQuestions (brmson/dataset-factoid-webquestions ``main/*.json``): qText, answers."""
    for q in json.loads(path.read_text(encoding="utf-8")):
        yield _q(q["qText"], q.get("answers") or [], set_name="webquestions")


def curated(path: Path) -> Iterator[dict]:
    """CuratedTREC (brmson/dataset-factoid-curated ``curated-*.tsv``): id, type, question, answer pattern."""
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 4:
            yield _q(parts[2], patterns=[parts[3]], set_name="curatedtrec")


def nq_open(path: Path) -> Iterator[dict]:
    """NQ-open and EfficientQA (google-research-datasets/natural-questions ``nq_open/*.jsonl``): question, answer."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            answers = rec.get("answer") or rec.get("answers") or []
            if answers:
                yield _q(rec["question"], answers, set_name="nq-open")


def opentriviaqa(folder: Path) -> Iterator[dict]:
    """OpenTriviaQA (uberspot/OpenTriviaQA ``categories/*``): ``#Q`` question, ``^`` the answer, ``A``.. choices."""
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        text = path.read_bytes().decode("utf-8", errors="replace")
        for block in text.split("#Q ")[1:]:
            lines = block.splitlines()
            body, answer, choices = [], "", []
            for line in lines:
                if line.startswith("^ "):
                    answer = line[2:].strip()
                elif len(line) > 2 and line[1] == " " and line[0].isalpha() and line[0].isupper() and answer:
                    choices.append(line[2:].strip())
                elif not answer:
                    body.append(line)
            question = " ".join(" ".join(body).split())
            if not question or not answer or answer.lower().strip(".") in _NOT_A_SPAN or "___" in question:
                continue
            yield _q(question, [answer], distractors=[c for c in choices if c != answer], set_name="opentriviaqa")


def answer_sentences(path: Path) -> Iterator[dict]:
    """TREC answer-sentence selection (brmson/dataset-sts ``data/anssel/wang/train.csv``): qtext, label, atext, one
    row per (question, sentence). Yields one record per question with its labelled sentences."""
    by_q: dict[str, dict] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            rec = by_q.setdefault(row["qtext"], {**_q(row["qtext"], set_name="trec-anssel"), "sentences": []})
            rec["sentences"].append((row["atext"], int(row["label"])))
    yield from by_q.values()


def read_questions(path: Path) -> Iterator[dict]:
    if path.is_dir():
        return opentriviaqa(path)
    name = path.name.lower()
    if name.endswith(".tsv"):
        return curated(path)
    if name.endswith(".csv"):
        return answer_sentences(path)
    if name.endswith(".jsonl"):
        return nq_open(path)
    return webquestions(path)
