"""Calibrate the trained reader on training questions it was not trained on: ``nodes/reading/model/levels.json``.

    python training/fit_levels.py --pairs pairs/ --model nodes/reading/model

Reads the calibration questions (``reader_pairs.py``: 10 % of the training questions, by SHA-1, never trained on)
with the exported int8 model as saturate runs it (``reading.reader.Reader``) and fits two logistic models (L2 1e-3,
Newton's method, ``fit_reader.fit``):

- **sentence**: ``p`` of a sentence from the model's score and the candidate's share of the question's words
  (``overlap``): the share of such sentences that held a gold answer; it prints how often the best sentence holds
  a gold answer ranked by the score alone and by ``p`` (the cross-encoder alone tended to prefer a generic sentence
  of the right shape over the named subject's own);
- **question**: ``confidence`` that the best-read sentence holds a gold answer, from ``answer.QUESTION_FEATURES``
  (the best sentence's ``p``, its margin over the next best, whether another source's read agrees with its answer
  span, the span's probability); the answer's three levels are thresholds on it, chosen on half A of the public sets
  by ``saturate bench reader`` (``reader_answer_q``, ``reader_likely_q``).

With ``--meaning INDEX_DIR`` it also fits ``meaning`` (``reading.reader.Meaning``): the same two models with a
third sentence feature, the cosine between the question and the sentence's page under the embedded corpus's default
embedding model (its stored vectors, opened or built in ``INDEX_DIR`` as ``saturate bench`` opens the corpus; the
calibration questions' candidates are the embedded corpus's pages, found by their title) — what a session reads with
where its sources have such vectors (``reading.answer.doc_meaning``). Without it, a ``meaning`` already in
``levels.json`` is kept.

Writes ``levels.json`` (both, and the counts) and refreshes ``reader.sha256`` (the model, tokenizer and levels).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from saturate.nodes.reading.answer import QUESTION_FEATURES, question_features
from saturate.nodes.reading.reader import Candidate, Meaning, Read, Reader

sys.path.insert(0, str(Path(__file__).parent))
from logistic import fit  # noqa: E402


def write_sha256(folder: Path) -> None:
    lines = [
        f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}"
        for name in ("reader.onnx", "tokenizer.json", "levels.json")
    ]
    (folder / "reader.sha256").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--pairs", type=Path, required=True)
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--meaning", type=Path, default=None, help="index folder of the embedded corpus: also fit `meaning`")
    args = p.parse_args(argv)
    levels_file = args.model / "levels.json"
    # the candidates' order (fit_candidates.py) is fitted apart and kept as it is
    before = json.loads(levels_file.read_text()) if levels_file.is_file() else {}
    kept = {k: v for k, v in before.items() if k == "candidates" or (k == "meaning" and args.meaning is None)}
    identity = {"sentence": {"weights": {"score": 1.0, "overlap": 0.0}, "bias": 0.0}}
    levels_file.write_text(json.dumps(identity) + "\n")  # while fitting
    reader = Reader(args.model, check_sha=False)
    rows = [json.loads(line) for line in (args.pairs / "calibration.jsonl").open(encoding="utf-8")]
    if args.limit:
        rows = rows[: args.limit]
    scores, labels, per_q = [], [], []
    for row in rows:
        items = row["items"]
        if not items:
            continue
        cands = [Candidate(it["doc"], i, it["title"], it["text"], it["overlap"]) for i, it in enumerate(items)]
        reads = reader.read(row["question"], cands)
        for x, it in zip(reads, items):
            scores.append((x.score, it["overlap"]))
            labels.append(it["label"])
        per_q.append((row, reads, items))
    s, y = np.array(scores), np.array(labels, dtype=np.float64)
    w, b = fit(s, y)
    sentence = {"weights": {"score": round(float(w[0]), 6), "overlap": round(float(w[1]), 6)}, "bias": round(b, 6)}
    levels_file.write_text(json.dumps({"sentence": sentence}) + "\n")
    reader = Reader(args.model, check_sha=False)
    top1 = {"score": 0, "p": 0}
    for _row, reads, items in per_q:
        for key, rank in (
            ("score", lambda x: x.score),
            ("p", lambda x: reader.probability(x.score, x.candidate.overlap)),
        ):
            top1[key] += int(items[max(range(len(reads)), key=lambda i: rank(reads[i]))]["label"])
    print(f"best sentence holds a gold answer, of {len(per_q)} questions: {top1}", file=sys.stderr)
    question, best = fit_question(per_q, lambda _q, x: reader.probability(x.score, x.candidate.overlap))
    if args.meaning is not None:
        kept["meaning"] = fit_meaning(per_q, args.meaning)
    spec = {
        "sentence": sentence,
        "question": question,
        "fitted_on": {
            "questions": len(per_q),
            "sentences": int(len(y)),
            "positive_sentences": int(y.sum()),
            "questions_best_holds_answer": best,
            "best_holds_answer_by_score_alone": top1["score"],
        },
        "made_by": "training/fit_levels.py (docs/reader.md)",
        **kept,
    }
    levels_file.write_text(json.dumps(spec, indent=1) + "\n")
    write_sha256(args.model)
    print(json.dumps(spec, indent=1), file=sys.stderr)
    return 0


def fit_question(per_q: list, p_of: Callable[[int, Read], float]) -> tuple[dict, int]:
    """(``levels.json``'s per-question model, how many questions' best sentence holds a gold answer) with each read's
    ``p`` from ``p_of(question's index, read)``: ``confidence`` that the best-read sentence holds a gold answer."""
    xq, yq = [], []
    for q, (_row, reads, items) in enumerate(per_q):
        reads = [replace(x, p=p_of(q, x)) for x in reads]
        ranked = sorted(range(len(reads)), key=lambda i: -reads[i].p)
        xq.append(question_features([reads[i] for i in ranked]))
        yq.append(float(items[ranked[0]]["label"]))
    wq, bq = fit(np.array(xq), np.array(yq))
    question = {
        "features": list(QUESTION_FEATURES),
        "weights": {f: round(float(v), 6) for f, v in zip(QUESTION_FEATURES, wq)},
        "bias": round(bq, 6),
    }
    return question, int(sum(yq))


def fit_meaning(per_q: list, index_dir: Path) -> dict:
    """``levels.json``'s ``meaning``: the sentence and question models with the page's cosine to the question."""
    from saturate.bench.research import open_corpus
    from saturate.state import load_settings

    corpus = open_corpus(None, index_dir, load_settings({}, env={}))
    identity = corpus.vector_identity
    if identity is None:
        raise SystemExit("the embedded corpus has no vectors: retrieval by meaning could not load its model")
    with corpus._lock:  # the calibration's candidates name their page by its title (unique in the embedded corpus)
        by_title = dict(corpus._db.execute("SELECT title, id FROM docs").fetchall())
    rows, labels, cos_of = [], [], []
    for row, reads, items in per_q:
        ids = {it["doc"]: by_title.get(it["title"]) for it in items}
        cos = corpus.meaning(row["question"], [i for i in ids.values() if i], identity)
        by_doc = {d: cos[i] for d, i in ids.items() if i in cos}
        cos_of.append(by_doc)
        for x, it in zip(reads, items):
            rows.append((x.score, it["overlap"], by_doc.get(it["doc"], 0.0)))
            labels.append(it["label"])
    w, b = fit(np.array(rows), np.array(labels, dtype=np.float64))
    sentence = {
        "weights": {k: round(float(v), 6) for k, v in zip(("score", "overlap", "meaning"), w)},
        "bias": round(b, 6),
    }
    model = Meaning.of({"identity": identity, "sentence": sentence, "question": {}})
    question, best = fit_question(
        per_q, lambda q, x: model.probability(x.score, x.candidate.overlap, cos_of[q].get(x.candidate.doc, 0.0))
    )
    print(f"with the meaning, the best sentence holds a gold answer for {best} questions", file=sys.stderr)
    return {
        "identity": identity,
        "sentence": sentence,
        "question": question,
        "fitted_on": {"questions": len(per_q), "questions_best_holds_answer": best},
    }


if __name__ == "__main__":
    sys.exit(main())
