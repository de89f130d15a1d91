"""Distant supervision for the reader: training questions run as real default sessions on the embedded corpus (the
reader itself off, ``reader rules``: what it is trained on must not depend on it), and what each session accepted
written out, so the reader learns on the text it will read.

    python training/sessions.py --out webq-sessions.jsonl webq-trainmodel.json webq-val.json curated-train.tsv

Inputs are the training splits named in docs/reader.md (WebQuestions ``trainmodel``/``val`` JSON, CuratedTREC
``curated-train.tsv`` whose answers are regular expressions). A question equal to one of the evaluation data
(``--exclude``, lower-cased, punctuation dropped) is skipped and counted. One line per question:
``{"question", "answers", "patterns", "docs": [{"title", "text"}]}``.
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
from leakage import evaluation_questions, key  # noqa: E402


def read_questions(path: Path) -> list[dict]:
    """(question, answers, patterns) of a WebQuestions JSON file or a CuratedTREC TSV file."""
    if path.suffix == ".tsv":
        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) >= 4:
                out.append({"question": parts[2], "answers": [], "patterns": [parts[3]]})
        return out
    return [{"question": q["qText"], "answers": q["answers"], "patterns": []} for q in json.loads(path.read_text())]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("inputs", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--exclude", type=Path, default=Path("../shared/data"), help="evaluation data: never trained on")
    args = p.parse_args(argv)
    banned = evaluation_questions(args.exclude)
    settings = load_settings({}, env={})
    source = open_corpus(None, home_dir() / "index", settings)
    embeddings = resolve_embeddings(settings, home=home_dir())
    graph = build_graph()
    skipped = written = 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for path in args.inputs:
            for i, q in enumerate(read_questions(path)):
                if key(q["question"]) in banned:
                    skipped += 1
                    continue
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
    print(f"{written} questions written, {skipped} skipped (equal to an evaluation question)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
