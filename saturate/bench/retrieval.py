"""``saturate bench retrieval``: retrieval by words against retrieval by meaning too, and the weight that fuses them.

    saturate bench retrieval                    # musique + hotpotqa recall at 5 searches, webq after one search
    saturate bench retrieval --weights 0.4 --json
    saturate bench retrieval --limit 40         # the first 40 tasks of each set

Every local corpus is ranked two ways in the same run: by words (BM25, ``retrieval lexical``) and hybrid
(BM25 fused with the cosine of the documents' stored vectors, ``sources/local.py``) at each weight of the
words in ``--weights``. Per set and half (A tuning / B held out, ``research.half_of``):

- ``musique``, ``hotpotqa``: gold-paragraph recall of 5-round sessions (``mode fixed``) — recall at 5 searches;
- ``webq``: the share of questions with a gold answer string in the documents one search retrieved
  (answer-bearing sources after one search) on the embedded corpus.

The weight chosen on half A: among the weights whose recall at 5 searches is within ``KEEP`` (half a point)
of words alone on every multi-hop set — meaning must add without losing what words find — the one with the
most answer-bearing sources after one search. The first run builds each corpus's vectors (progress on
stderr); its cost is printed (``index_s``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from saturate.bench.research import eval_corpus, half_of, load_jsonl
from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.embeddings import build_embeddings
from saturate.graph.paths import eval_data, home_dir
from saturate.nodes.reading.slots import result_texts
from saturate.sources.local import LocalCorpus
from saturate.sources.wiki import open_wiki
from saturate.state.argtypes import non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

WEIGHTS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.8)
KEEP = 0.005  # recall at 5 searches may fall at most this much below words alone (on half A)
MULTI = ("musique", "hotpotqa")


def _recall(graph, source, tasks: list[dict], seed: int) -> dict[str, float]:
    per = {"A": [], "B": []}
    for i, task in enumerate(tasks):
        settings = load_settings({"seed": seed + i, "mode": "fixed", "fixed_rounds": 5}, env={})
        out = graph.invoke(initial_state(task["question"], settings), context=Context(source=source))
        gold = set(task["gold_ids"])
        got = {r["id"] for r in (out.get("results") or {}).values()}
        per[half_of(task["id"])].append(len(gold & got) / (len(gold) or 1))
    return _means(per)


def _bearing(graph, source, tasks: list[dict], seed: int) -> dict[str, float]:
    per = {"A": [], "B": []}
    for i, task in enumerate(tasks):
        settings = load_settings({"seed": seed + i, "mode": "fixed", "fixed_rounds": 1}, env={})
        out = graph.invoke(initial_state(task["question"], settings), context=Context(source=source))
        results = list((out.get("results") or {}).values())
        texts = result_texts(source, results)
        blob = " ".join(f"{r.get('title', '')} {texts.get(r['url']) or r.get('snippet', '')}" for r in results).lower()
        per[half_of(str(task.get("id", i)))].append(any(a and a.lower() in blob for a in task.get("answers") or []))
    return _means(per)


def _means(per: dict[str, list]) -> dict[str, float]:
    allv = per["A"] + per["B"]
    return {
        "all": round(sum(allv) / len(allv), 4) if allv else 0.0,
        **{h: round(sum(v) / len(v), 4) if v else 0.0 for h, v in per.items()},
    }


def choose(rows: dict[str, dict]) -> str:
    """The chosen weight's key in ``rows`` ({"lexical" | weight: {set: {all, A, B}}}), by the rule above."""
    lexical = rows["lexical"]
    keeping = [
        k
        for k in rows
        if k != "lexical" and all(rows[k][s]["A"] >= lexical[s]["A"] - KEEP for s in MULTI if s in lexical)
    ]
    if not keeping:
        return "lexical"
    return max(keeping, key=lambda k: (rows[k].get("webq", {}).get("A", 0.0), -abs(float(k) - 0.5)))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default=None, help="folder holding the sets (default: $SATURATE_EVAL_DATA)")
    p.add_argument("--weights", default=",".join(map(str, WEIGHTS)), help="lexical weights to try (comma-separated)")
    p.add_argument("--limit", type=positive_int, help="only the first N tasks of each set")
    p.add_argument("--seed", type=non_negative_int, default=1)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(overrides={})


def run(args) -> int:

    data = eval_data(args.data)
    try:
        weights = [float(w) for w in str(args.weights).split(",") if w.strip()]
    except ValueError:
        raise InputError(f"--weights: numbers between 0 and 1, comma-separated (got {args.weights!r})") from None
    if not weights or any(not 0 <= w <= 1 for w in weights):
        raise InputError("--weights: numbers between 0 and 1, comma-separated")
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    settings = load_settings(dict(getattr(args, "overrides", None) or {}))
    model, identity = build_embeddings(settings)
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.json else (lambda m: None)
    index = home_dir() / "index"
    sets: dict[str, tuple] = {}
    built: dict[str, float] = {}
    for name in (*MULTI, "webq"):
        tasks_path = data / name / "tasks.jsonl"
        if not tasks_path.exists():
            raise InputError(f"{name}: {tasks_path} not found")
        tasks = load_jsonl(tasks_path)[: args.limit] if args.limit else load_jsonl(tasks_path)
        corpus = (
            open_wiki(index) if name == "webq" else LocalCorpus.open(eval_corpus(data / name / "corpus.jsonl"), index)
        )
        t0 = time.perf_counter()

        def vectors_built(done: int, total: int, name: str = name) -> None:  # one line once the vectors are complete
            if done == total:
                say(f"{name}: {total:,} vectors")

        corpus.attach_vectors(model, identity, 1.0, vectors_built)
        built[name] = round(time.perf_counter() - t0, 1)
        sets[name] = (corpus, tasks)
    graph = build_graph()
    rows: dict[str, dict] = {}
    t0 = time.perf_counter()
    for key in ["lexical", *(str(w) for w in weights)]:
        rows[key] = {}
        for name, (corpus, tasks) in sets.items():
            vectors = corpus._vectors
            if key == "lexical":
                corpus._vectors = None  # words alone, the same index
            else:
                corpus.hybrid_weight = float(key)
            try:
                measure = _bearing if name == "webq" else _recall
                rows[key][name] = measure(graph, corpus, tasks, args.seed)
            finally:
                corpus._vectors = vectors
        say(f"{key}: " + ", ".join(f"{n} {v['all']:.3f}" for n, v in rows[key].items()))
    chosen = choose(rows)
    out = {"rows": rows, "chosen": chosen, "index_s": built, "seconds": round(time.perf_counter() - t0, 1)}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print("recall at 5 searches (musique, hotpotqa) and answer-bearing sources after one search (webq); all (A / B)")
    print(f"{'ranking':<12}" + "".join(f"{n:>24}" for n in sets))
    for key, per in rows.items():
        label = "words only" if key == "lexical" else f"hybrid {key}"
        mark = "  ← chosen on A" if key == chosen else ""
        print(f"{label:<12}" + "".join(f"{v['all']:>10.3f} ({v['A']:.3f}/{v['B']:.3f})" for v in per.values()) + mark)
    print(f"vectors built or opened (s): {built}; wall time {out['seconds']} s")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m saturate.bench.retrieval", description=(__doc__ or "").splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
