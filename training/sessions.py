"""Distant supervision for the reader: training questions run as real default sessions on the embedded corpus (the
reader itself off, ``reader rules``: what it is trained on must not depend on it), and what each session accepted
written out, so the reader learns on the text it will read.

    python training/sessions.py --out sessions.jsonl webq-trainmodel.json webq-val.json curated-train.tsv \\
        nq-open-dev.jsonl efficientqa-dev.jsonl efficientqa-test.jsonl
    python training/sessions.py --search 10 --out trivia.jsonl OpenTriviaQA/categories

Inputs are the training sources named in docs/reader.md, each in its own format (``questions.py``). ``--search K``
runs one search of the question (K results: a session's first round) instead of a whole session — for the 50,000
trivia questions, where a session each would take hours on 2 cores. A question equal to one of the evaluation data
(``--exclude``) or of a held-out test split (``--held-out``) is skipped and counted. ``--shard I/N`` writes every
N-th question from the I-th (to run N processes). One line per question: ``{"question", "answers", "patterns",
"distractors", "set", "docs": [{"title", "text"}]}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from saturate.bench.research import open_corpus
from saturate.graph.build import build_graph
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.paths import home_dir
from saturate.nodes.reading.slots import result_texts
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

sys.path.insert(0, str(Path(__file__).parent))
from leakage import evaluation_questions, held_out_questions, key  # noqa: E402
from questions import read_questions  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("inputs", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--exclude", type=Path, default=Path("../shared/data"), help="evaluation data: never trained on")
    p.add_argument("--held-out", type=Path, nargs="*", default=[], help="held-out test splits: never trained on")
    p.add_argument("--search", type=int, default=0, help="one search of K results instead of a session")
    p.add_argument("--shard", default="0/1", help="I/N: every N-th question from the I-th")
    p.add_argument("--limit", type=int, default=0, help="stop after writing this many questions")
    args = p.parse_args(argv)
    shard, shards = (int(x) for x in args.shard.split("/"))
    banned = evaluation_questions(args.exclude) | held_out_questions(args.held_out)
    settings = load_settings({}, env={})
    source = open_corpus(None, home_dir() / "index", settings)
    embeddings = resolve_embeddings(settings, home=home_dir())
    graph = build_graph()
    skipped = written = n = 0
    seen: set[str] = set()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for path in args.inputs:
            for i, q in enumerate(read_questions(path)):
                k = key(q["question"])
                if k in banned:
                    skipped += 1
                    continue
                if k in seen or not k:
                    continue
                seen.add(k)
                n += 1
                if n % shards != shard:
                    continue
                if args.search:
                    results = [r.model_dump() for r in source.search(q["question"], args.search)]
                else:
                    state = graph.invoke(
                        initial_state(q["question"], load_settings({"seed": i, "reader": "rules"}, env={})),
                        context=Context(source=source, embeddings=embeddings),
                    )
                    results = list((state.get("results") or {}).values())
                texts = result_texts(source, results)
                docs = [
                    {"title": r.get("title", ""), "text": texts.get(r["url"]) or r.get("snippet", "")} for r in results
                ]
                out.write(json.dumps({**q, "docs": docs}) + "\n")
                written += 1
                if args.limit and written >= args.limit:
                    break
            if args.limit and written >= args.limit:
                break
    print(f"{written} questions written, {skipped} skipped (equal to an evaluation question)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
