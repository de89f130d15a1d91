"""The "not found" answers of default sessions, laid out for a hand count (issue 43: of 40 "not found" answers, how
many while an accepted sentence answers).

    python -m saturate.bench.not_found                 # the first 40 "not found" of webq/ (the evaluation data's)
    python -m saturate.bench.not_found --count 40 --data DIR --tasks my.jsonl

Questions run in order as default sessions of the graph (seed i + 1, as ``saturate bench reader``; no checkpointer,
no search cache) on the embedded corpus (or ``--corpus``). Each one whose answer says "not found" is printed as a
JSON line: its id and half, the question, the gold answers, ``in_sources`` (a gold answer in the accepted results'
text, as ``bench natural``), ``gold_sentences`` (up to 4 sentences of the accepted results that hold a gold answer:
what a person judges) and ``top`` (the reader's 5 best sentences with their probability). The last line counts the
sessions run. Nothing is judged here: a string match cannot tell "Sybil" in a sentence about Dolly Parton from an
answer, so the count is made by reading these lines (docs/reader.md has the latest count).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from saturate.bench.natural import hit
from saturate.bench.research import half_of, load_jsonl, open_corpus
from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.paths import eval_data, home_dir
from saturate.nodes.reading.extractive import NOT_ANSWERED
from saturate.nodes.reading.question import split_sentences
from saturate.nodes.reading.reader import shipped_reader
from saturate.nodes.reading.slots import result_texts
from saturate.state.context import Context
from saturate.state.errors import BadInput
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

TOP = 5
GOLD_SENTENCES = 4


def not_found(tasks: list[dict], count: int, corpus: Path | None = None) -> Iterator[dict]:
    """The first ``count`` "not found" answers of ``tasks``, each with what a person needs to judge it; then
    ``{"sessions": n, "not_found": k}``."""
    settings = load_settings({}, env={})
    source = open_corpus(corpus, home_dir() / "index", settings)
    embeddings = resolve_embeddings(settings, home=home_dir())
    graph, reader = build_graph(), shipped_reader()
    n = found = 0
    for i, task in enumerate(tasks):
        if found >= count:
            break
        question = task["question"]
        state = initial_state(question, load_settings({"seed": i + 1}, env={}))
        out = graph.invoke(state, context=Context(source=source, embeddings=embeddings))
        n += 1
        if not (out.get("result") or {}).get("answer", "").startswith(NOT_ANSWERED):
            continue
        found += 1
        results = list((out.get("results") or {}).values())
        texts = result_texts(source, results)
        docs = [(r.get("title", ""), texts.get(r["url"]) or r.get("snippet", "")) for r in results]
        golds = [g for g in task.get("answers") or [] if g]
        reads = sorted(reader.read(question, reader.candidates(question, docs)), key=lambda x: -x.p)[:TOP]
        task_id = str(task.get("id", i + 1))
        yield {
            "k": found,
            "id": task_id,
            "half": half_of(task_id),
            "question": question,
            "gold": golds,
            "in_sources": hit(" ".join(f"{t} {x}" for t, x in docs), golds),
            "gold_sentences": [[t, s] for t, x in docs for s in split_sentences(x or "") if hit(s, golds)][
                :GOLD_SENTENCES
            ],
            "top": [[round(x.p, 3), x.candidate.title, x.candidate.text] for x in reads],
        }
    yield {"sessions": n, "not_found": found}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m saturate.bench.not_found", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--count", type=int, default=40, help="how many 'not found' answers (default 40)")
    parser.add_argument("--data", type=Path, default=None, help="folder holding webq/ (default: $SATURATE_EVAL_DATA)")
    parser.add_argument("--tasks", type=Path, default=None, help='a JSONL of {"id", "question", "answers"} instead')
    parser.add_argument("--corpus", type=Path, default=None, help="a JSONL corpus instead of the embedded one")
    args = parser.parse_args(argv)
    try:
        if args.count < 1:
            raise InputError("--count must be 1 or more")
        path = args.tasks or eval_data(args.data) / "webq" / "tasks.jsonl"
        if not path.exists():
            raise InputError(f"file not found: {path}")
        for row in not_found(load_jsonl(path), args.count, args.corpus):
            print(json.dumps(row, ensure_ascii=False), flush=True)
    except BadInput as err:  # bad counts or files, no evaluation data, an unusable corpus: one line, exit 2
        print(f"saturate: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
