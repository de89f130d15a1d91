"""Training groups for the reader (``train_reader.py``) from the training sessions (``sessions.py``) and TREC's
labelled answer sentences: what the reader reads at run time, labelled by the gold answers.

    python training/reader_pairs.py --out pairs/ sessions.jsonl trivia.jsonl --anssel wang-train.csv

For each question, its candidate sentences (``reader.candidates``: the same selection as at run time, a longer list)
are labelled: positive when "title. sentence" holds a gold answer (``labels.find_answer``). Questions split by the
SHA-1 of their text (``split_of``): 5 % **validation** (choosing the training step), 10 % **calibration** (the
per-question levels, ``fit_levels.py``), the rest **train**. A train question gives up to ``GROUPS`` groups of one
positive and ``NEGATIVES`` negatives: first those holding one of OpenTriviaQA's wrong choices (a sentence about the
wrong answer), then the ones sharing most of the question's words, then others at random (seeded). Validation and
calibration questions keep all their run-time candidates, labelled (``--model``: in the order the shipped reader reads
them, ``fit_candidates.py``; the train groups are drawn from the longer list by shared words as before). Writes
``train.jsonl``, ``validation.jsonl``, ``calibration.jsonl`` and prints the counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

from saturate.nodes.reading.reader import CANDIDATES, Prior, candidates

sys.path.insert(0, str(Path(__file__).parent))
from labels import find_answer  # noqa: E402
from leakage import evaluation_questions, held_out_questions, key  # noqa: E402
from questions import answer_sentences  # noqa: E402

NEGATIVES = 7
GROUPS = 2
TRAIN_CANDIDATES = 48  # a longer list than at run time: more, and more varied, negatives


def split_of(question: str) -> str:
    h = int(hashlib.sha1(question.encode()).hexdigest(), 16) % 20
    return "validation" if h == 0 else "calibration" if h in (1, 2) else "train"


def span_in(sentence: str, row: dict) -> list[int] | None:
    got = find_answer(sentence, row.get("answers") or [], row.get("patterns") or [])
    return list(got) if got else None


def labelled(row: dict, limit: int, prior: Prior | None = None) -> list[dict]:
    docs = [(d.get("title", ""), d.get("text", "")) for d in row["docs"]]
    cands = candidates(row["question"], docs, limit, prior)
    out = []
    for c in cands:
        read = f"{c.title}. {c.text}" if c.title else c.text
        out.append(
            {
                "title": c.title,
                "text": c.text,
                "doc": c.doc,
                "overlap": c.overlap,
                "label": int(bool(span_in(read, row))),
                "span": span_in(c.text, row),
                "distractor": bool(find_answer(c.text, row.get("distractors") or [], [])),
            }
        )
    return out


def groups_of(row: dict, cands: list[dict], rng: random.Random, groups: int = GROUPS) -> list[dict]:
    pos = [c for c in cands if c["label"]]
    neg = [c for c in cands if not c["label"]]
    if not pos or len(neg) < 3:
        return []
    # the positive most likely to be the answering sentence first: the answer in the sentence itself, most shared words
    pos.sort(key=lambda c: (c["span"] is None, -c["overlap"]))
    out = []
    for p in pos[:groups]:
        hard = [c for c in neg if c["distractor"]]
        rest = [c for c in neg if not c["distractor"]]
        by_overlap = rest[: NEGATIVES // 2]
        others = rest[NEGATIVES // 2 :]
        rng.shuffle(others)
        chosen = (hard + by_overlap + others)[:NEGATIVES]
        out.append({"question": row["question"], "set": row.get("set", ""), "items": [p, *chosen]})
    return out


def anssel_groups(
    path: Path, banned: set[str], rng: random.Random, groups: int = GROUPS
) -> tuple[list[dict], list[dict]]:
    """TREC's labelled sentences as groups (train) and as labelled lists (validation); no titles."""
    train, held = [], []
    records = [r for r in answer_sentences(path) if key(r["question"]) not in banned]
    pool = [s for r in records for s, _ in r["sentences"]]
    for r in records:
        items = [
            {"title": "", "text": s, "label": y, "span": None, "overlap": 0.0, "doc": 0} for s, y in r["sentences"]
        ]
        if split_of(r["question"]) != "train":
            if any(i["label"] for i in items):
                held.append({"question": r["question"], "set": "trec-anssel", "items": items})
            continue
        pos = [i for i in items if i["label"]]
        neg = [i for i in items if not i["label"]]
        while len(neg) < NEGATIVES:  # few candidates: sentences of other questions fill the group
            neg.append({"title": "", "text": rng.choice(pool), "label": 0, "span": None, "overlap": 0.0, "doc": 0})
        for p in pos[:groups]:
            train.append({"question": r["question"], "set": "trec-anssel", "items": [p, *rng.sample(neg, NEGATIVES)]})
    return train, held


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("sessions", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--anssel", type=Path, help="TREC answer-sentence selection train.csv")
    p.add_argument("--exclude", type=Path, default=Path("../shared/data"), help="evaluation data: never trained on")
    p.add_argument("--held-out", type=Path, nargs="*", default=[], help="held-out test splits: never trained on")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--groups", type=int, default=GROUPS, help="groups per train question: one per positive, at most")
    p.add_argument(
        "--model",
        type=Path,
        help="the folder of a levels.json with the candidates' order (fit_candidates.py): the validation and "
        "calibration questions' candidates are then those the reader reads at run time",
    )
    args = p.parse_args(argv)
    prior = None
    if args.model is not None:
        prior = Prior.of(json.loads((args.model / "levels.json").read_text(encoding="utf-8"))["candidates"])
    banned = evaluation_questions(args.exclude) | held_out_questions(args.held_out)
    rng = random.Random(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    files = {
        name: (args.out / f"{name}.jsonl").open("w", encoding="utf-8")
        for name in ("train", "validation", "calibration")
    }
    counts: dict[str, int] = {}

    def write(name: str, rec: dict) -> None:
        files[name].write(json.dumps(rec) + "\n")
        counts[name] = counts.get(name, 0) + 1

    for path in args.sessions:
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            if key(row["question"]) in banned:
                counts["dropped_as_evaluation_questions"] = counts.get("dropped_as_evaluation_questions", 0) + 1
                continue
            split = split_of(row["question"])
            if split == "train":
                for g in groups_of(row, labelled(row, TRAIN_CANDIDATES), rng, args.groups):
                    write("train", g)
            else:
                cands = labelled(row, CANDIDATES, prior)
                write(split, {k: row.get(k) for k in ("question", "answers", "patterns", "set")} | {"items": cands})
    if args.anssel:
        train, held = anssel_groups(args.anssel, banned, rng, args.groups)
        for g in train:
            write("train", g)
        for g in held:
            write("validation", g)
    for f in files.values():
        f.close()
    print(json.dumps(counts), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
