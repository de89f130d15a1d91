"""Fit the reader's weights (``nodes/reading/model/reader.json``) on the training sessions, and check them on the
held-out ones.

    python training/fit_reader.py --sessions webq-sessions.jsonl --out nodes/reading/model

Each training question (``training/sessions.py``: WebQuestions train/val and CuratedTREC train as real default
sessions on the embedded corpus) gives the candidates the reader would read (``reader.candidates``); a candidate is
positive when it holds a gold answer (``pairs.find_answer``: whole words, any case; CuratedTREC's patterns). The
weights of ``reader.FEATURES`` are a logistic regression over all of them (L2 1e-3, Newton's method), so ``p`` is a
probability: the share of such sentences that held an answer. Every 20th question (by SHA-1 of its text, as
``pairs.py``) is held out and the best-read sentence's hit rate printed for it, against the candidates' own order.
A question equal to an evaluation question (``leakage.py``) is dropped.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from saturate.nodes.reading.reader import FEATURES, Reader, candidates

sys.path.insert(0, str(Path(__file__).parent))
from labels import find_answer  # noqa: E402
from leakage import evaluation_questions, key  # noqa: E402

L2 = 1e-3


def rows_of(reader: Reader, row: dict) -> tuple[np.ndarray, np.ndarray]:
    cands = candidates(row["question"], [(d.get("title", ""), d.get("text", "")) for d in row["docs"]])
    if not cands:
        return np.empty((0, len(FEATURES))), np.empty(0)
    x = np.array(reader.features(row["question"], cands), dtype=np.float64)
    y = np.array([bool(find_answer(c.text, row.get("answers") or [], row.get("patterns") or [])) for c in cands])
    return x, y.astype(np.float64)


def fit(x: np.ndarray, y: np.ndarray, iters: int = 50) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method, an L2 penalty on the weights (not the bias)."""
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    reg = np.full(a.shape[1], L2 * len(x))
    reg[-1] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + reg * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--sessions", type=Path, action="append", required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--exclude", type=Path, default=Path("../shared/data"), help="evaluation data: never trained on")
    args = p.parse_args(argv)
    banned = evaluation_questions(args.exclude)
    reader = Reader(None)  # the encoder alone: only the features are used
    train_x, train_y, held = [], [], []
    dropped = 0
    for path in args.sessions:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if key(row["question"]) in banned:
                dropped += 1
                continue
            x, y = rows_of(reader, row)
            if not len(x):
                continue
            if int(hashlib.sha1(row["question"].encode()).hexdigest(), 16) % 20 == 0:
                held.append((x, y))
            else:
                train_x.append(x)
                train_y.append(y)
    x, y = np.vstack(train_x), np.concatenate(train_y)
    w, b = fit(x, y)
    spec = {
        "features": list(FEATURES),
        "weights": {f: round(float(v), 6) for f, v in zip(FEATURES, w)},
        "bias": round(b, 6),
        "trained_on": {
            "questions": len(train_x),
            "sentences": int(len(y)),
            "positive": int(y.sum()),
            "dropped_as_evaluation_questions": dropped,
            "held_out_questions": len(held),
        },
        "made_by": "training/fit_reader.py (docs/reader.md)",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    head = args.out / "reader.json"
    head.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    (args.out / "reader.json.sha256").write_text(hashlib.sha256(head.read_bytes()).hexdigest() + "  reader.json\n")
    answerable = [(hx, hy) for hx, hy in held if hy.any()]
    words = sum(hy[0] for _, hy in answerable)
    read = sum(hy[int(np.argmax(hx @ w + b))] for hx, hy in answerable)
    print(json.dumps(spec, indent=1), file=sys.stderr)
    print(
        f"held out: {len(answerable)} answerable questions of {len(held)}; the best sentence holds an answer: "
        f"by shared words {words}/{len(answerable)}, by the reader {read}/{len(answerable)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
