"""The order in which the reader reads a session's sentences: ``levels.json``'s ``candidates`` (``reader.Prior``).

    python training/fit_candidates.py --model nodes/reading/model natural.jsonl trivia.jsonl

The reader reads the best ``CANDIDATES`` sentences of a session's sources (its cost grows with each one), so which
sentences come first decides what it can answer. Ranked by the share of the question's words alone, the first 24
held a gold answer for 79 % of the training questions held out here that had one anywhere in their sources. This
fits a logistic model of ``reader.CANDIDATE_FEATURES`` (that share, the source's place among the results, the
sentence's place and length, numbers, years and capitalised words, each crossed with the question's kind) on the
training sessions (``sessions.py``): every sentence of a question's sources, labelled as ``reader_pairs.py`` labels
them (``labels.find_answer``), questions split by ``reader_pairs.split_of`` — fitted on ``train``, the recall of the
first ``CANDIDATES`` printed and recorded for the others (validation and calibration), before and after. Questions
equal to an evaluation question are dropped (``leakage``). Writes the model into ``levels.json`` (the rest kept) and
refreshes ``reader.sha256``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from saturate.nodes.reading.question import stems
from saturate.nodes.reading.reader import (
    CANDIDATE_FEATURES,
    CANDIDATES,
    Prior,
    candidate_features,
    candidates,
    question_kind,
)

sys.path.insert(0, str(Path(__file__).parent))
from fit_levels import write_sha256  # noqa: E402
from labels import find_answer  # noqa: E402
from leakage import evaluation_questions, held_out_questions, key  # noqa: E402
from logistic import fit  # noqa: E402
from reader_pairs import split_of  # noqa: E402

POOL = 100_000  # every sentence of a question's sources


def question_rows(row: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """The features and labels of every sentence of a training session's sources, in the order ``candidates`` gives
    without a prior; None when no sentence holds a gold answer (nothing to learn an order from)."""
    question = row["question"]
    cands = candidates(question, [(d.get("title", ""), d.get("text", "")) for d in row["docs"]], POOL)
    labels = [
        int(
            bool(
                find_answer(
                    f"{c.title}. {c.text}" if c.title else c.text, row.get("answers") or [], row.get("patterns") or []
                )
            )
        )
        for c in cands
    ]
    if not any(labels):
        return None
    q, kind = stems(question), question_kind(question)
    titles: dict[str, frozenset[str]] = {}
    x = [
        candidate_features(
            kind, q, c.doc, c.order, c.overlap, c.text, stems(c.text), titles.setdefault(c.title, stems(c.title))
        )
        for c in cands
    ]
    return np.array(x, dtype=np.float64), np.array(labels, dtype=np.float64)


def recall(rows: list[tuple[np.ndarray, np.ndarray]], prior: Prior | None, k: int = CANDIDATES) -> float:
    """The share of ``rows`` whose first ``k`` sentences hold a gold answer, in ``prior``'s order (None: as given)."""
    hit = 0
    for x, y in rows:
        if prior is None:
            hit += int(y[:k].any())
        else:
            order = np.argsort([-prior.score(list(r)) for r in x], kind="stable")[:k]
            hit += int(y[order].any())
    return round(hit / max(1, len(rows)), 4)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("sessions", nargs="+", type=Path)
    p.add_argument("--model", type=Path, required=True, help="the folder of levels.json")
    p.add_argument("--exclude", type=Path, default=Path("../shared/data"), help="evaluation data: never fitted on")
    p.add_argument("--held-out", type=Path, nargs="*", default=[], help="held-out test splits: never fitted on")
    args = p.parse_args(argv)
    banned = evaluation_questions(args.exclude) | held_out_questions(args.held_out)
    train: list[tuple[np.ndarray, np.ndarray]] = []
    held: list[tuple[np.ndarray, np.ndarray]] = []
    dropped = 0
    for path in args.sessions:
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            if key(row["question"]) in banned:
                dropped += 1
                continue
            got = question_rows(row)
            if got is not None:
                (train if split_of(row["question"]) == "train" else held).append(got)
    x = np.vstack([r[0] for r in train])
    y = np.concatenate([r[1] for r in train])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-6] = 1.0  # a feature constant in training (a kind no question asked): its weight stays 0
    w, b = fit((x - mean) / scale, y)
    spec = {
        "features": list(CANDIDATE_FEATURES),
        "weights": {f: round(float(v), 6) for f, v in zip(CANDIDATE_FEATURES, w)},
        "bias": round(b, 6),
        "mean": {f: round(float(v), 6) for f, v in zip(CANDIDATE_FEATURES, mean)},
        "scale": {f: round(float(v), 6) for f, v in zip(CANDIDATE_FEATURES, scale)},
    }
    prior = Prior.of(spec)
    spec["fitted_on"] = {
        "questions": len(train),
        "sentences": int(len(y)),
        "positive_sentences": int(y.sum()),
        "dropped_as_evaluation_questions": dropped,
        "held_out_questions": len(held),
        f"held_out_recall_at_{CANDIDATES}_by_shared_words": recall(held, None),
        f"held_out_recall_at_{CANDIDATES}_learned": recall(held, prior),
    }
    spec["made_by"] = "training/fit_candidates.py (docs/reader.md)"
    levels_file = args.model / "levels.json"
    levels = json.loads(levels_file.read_text(encoding="utf-8")) if levels_file.is_file() else {}
    levels["candidates"] = spec
    levels_file.write_text(json.dumps(levels, indent=1) + "\n")
    write_sha256(args.model)
    print(json.dumps(spec["fitted_on"], indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
