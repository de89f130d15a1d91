"""``saturate bench natural``: natural questions on the embedded corpus — what a user sees, the loop against one search.

    saturate bench natural --data DIR             # webq/ of the evaluation data (600 questions) on the embedded corpus
    saturate bench natural --limit 100 --json
    saturate bench natural --tasks my.jsonl [--corpus corpus.jsonl]   # {"id", "question", "answers": [...]}

Questions people typed into a search box (WebQuestions, the evaluation data's ``webq/``) run as real sessions of
the graph (no checkpointer, no search cache) twice in the same run: with the default loop (``saturate``) and
with one search (``mode fixed``, ``fixed_rounds 1``). Per policy, for the whole set and its halves A (tuning) /
B (held out) (``research.half_of``):

- ``answer``: a gold answer string (case-insensitive) appears in the final answer text;
- ``in_sources``: a gold answer string appears in the retrieved documents (answer-bearing sources);
- ``not_found``: the answer says the sources do not answer the question;
- ``rounds``, ``searches`` and ``seconds`` per session.

Targets (issue 20): the loop's answer at least 5 points above one search in the same run, and at least 0.30.
``--<setting> VALUE`` applies a setting to both policies.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from saturate.bench.research import half_of, load_jsonl, open_corpus
from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.paths import eval_data, home_dir
from saturate.nodes.reading.extractive import NOT_ANSWERED
from saturate.nodes.reading.slots import result_texts
from saturate.state.argtypes import non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

POLICIES = {"one search": {"mode": "fixed", "fixed_rounds": 1}, "saturate": {}}
GAIN_TARGET = 0.05  # the loop's answer above one search's, in the same run
ANSWER_TARGET = 0.30


@dataclass
class Run:
    task_id: str
    half: str
    answer: bool
    in_sources: bool
    not_found: bool
    rounds: int
    searches: int
    seconds: float


def hit(text: str, golds: list[str]) -> bool:
    low = (text or "").lower()
    return any(g and g.lower() in low for g in golds)


def run_task(graph, source, task: dict, overrides: dict, seed: int, embeddings) -> Run:
    settings = load_settings({"seed": seed, **overrides}, env={})
    t0 = time.perf_counter()
    out = graph.invoke(initial_state(task["question"], settings), context=Context(source=source, embeddings=embeddings))
    seconds = time.perf_counter() - t0
    results = list((out.get("results") or {}).values())
    texts = result_texts(source, results)
    retrieved = " ".join(f"{r.get('title', '')} {texts.get(r['url']) or r.get('snippet', '')}" for r in results)
    answer = (out.get("result") or {}).get("answer", "")
    golds = list(task.get("answers") or [])
    return Run(
        task_id=str(task.get("id", seed)),
        half=half_of(str(task.get("id", seed))),
        answer=hit(answer, golds),
        in_sources=hit(retrieved, golds),
        not_found=answer.startswith(NOT_ANSWERED),
        rounds=len(out.get("records") or []),
        searches=len(out.get("queries") or []),
        seconds=seconds,
    )


def summarize(runs: list[Run]) -> dict:
    n = len(runs) or 1
    return {
        "answer": round(sum(r.answer for r in runs) / n, 4),
        "in_sources": round(sum(r.in_sources for r in runs) / n, 4),
        "not_found": round(sum(r.not_found for r in runs) / n, 4),
        "rounds": round(sum(r.rounds for r in runs) / n, 3),
        "searches": round(sum(r.searches for r in runs) / n, 3),
        "seconds": round(sum(r.seconds for r in runs) / n, 4),
        "tasks": len(runs),
    }


def targets(pol: dict) -> dict:
    loop, one = pol["saturate"], pol["one search"]
    out = {}
    for key in ("all", "A", "B"):
        a = loop if key == "all" else loop["halves"][key]
        b = one if key == "all" else one["halves"][key]
        out[key] = {
            "gain": round(a["answer"] - b["answer"], 4),
            "gain_met": a["answer"] - b["answer"] >= GAIN_TARGET,
            "answer_met": a["answer"] >= ANSWER_TARGET,
        }
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tasks", type=Path, help="a task file (JSONL: question, answers); default: webq/ of the evaluation data"
    )
    p.add_argument("--corpus", type=Path, help="a corpus file (JSONL) instead of the embedded corpus")
    p.add_argument("--data", type=Path, default=None, help="folder holding the sets (default: $SATURATE_EVAL_DATA)")
    p.add_argument("--limit", type=positive_int, help="only the first N questions")
    p.add_argument("--seed", type=non_negative_int, default=1, help="base seed (question i uses seed+i)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(overrides={})


def run(args) -> int:
    tpath = args.tasks or eval_data(args.data) / "webq" / "tasks.jsonl"
    if not tpath.exists():
        raise InputError(f"file not found: {tpath}")
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    tasks = load_jsonl(tpath)
    bad = [i + 1 for i, t in enumerate(tasks) if not {"question", "answers"} <= t.keys()]
    if bad:
        raise InputError(f"{tpath}: line {bad[0]} lacks question/answers")
    tasks = tasks[: args.limit] if args.limit else tasks
    overrides = dict(getattr(args, "overrides", None) or {})
    settings = load_settings(overrides)  # bad settings are bad input (exit 2) before any work
    embeddings = resolve_embeddings(settings, home=home_dir())
    index = home_dir() / "index"
    source = open_corpus(args.corpus, index, settings)  # ranked as the settings say (default: words and meaning)
    graph = build_graph()
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.json else (lambda m: None)
    t0 = time.perf_counter()
    runs: dict[str, list[Run]] = {}
    for policy, extra in POLICIES.items():
        runs[policy] = [
            run_task(graph, source, t, {**overrides, **extra}, args.seed + i, embeddings) for i, t in enumerate(tasks)
        ]
        say(f"{tpath.parent.name}: {policy} done ({len(tasks)} questions)")
    pol = {
        p: {**summarize(r), "halves": {h: summarize([x for x in r if x.half == h]) for h in ("A", "B")}}
        for p, r in runs.items()
    }
    out = {"policies": pol, "targets": targets(pol), "seconds": round(time.perf_counter() - t0, 1)}
    if args.json:
        out["runs"] = {p: [asdict(x) for x in r] for p, r in runs.items()}
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"== {tpath.parent.name if not args.tasks else tpath.stem} ({len(tasks)} questions, {source.name}; "
        "cells: all (half A / half B))"
    )
    cols = ("answer", "in_sources", "not_found", "rounds", "searches", "seconds")
    print(f"{'policy':<12}" + "".join(f"{c:>22}" for c in cols))
    for p, s in pol.items():
        cells = []
        for c in cols:
            a, b = s["halves"]["A"][c], s["halves"]["B"][c]
            cells.append(f"{s[c]:.3f} ({a:.2f}/{b:.2f})" if c != "seconds" else f"{s[c]:.3f}")
        print(f"{p:<12}" + "".join(f"{c:>22}" for c in cells))
    t = out["targets"]
    for key in ("all", "A", "B"):
        print(
            f"target ({key}): loop - one search {100 * t[key]['gain']:+.1f} points "
            f"(target >= +{100 * GAIN_TARGET:.0f}) "
            f"{'met' if t[key]['gain_met'] else 'NOT MET'}; loop answer "
            f"{(pol['saturate'] if key == 'all' else pol['saturate']['halves'][key])['answer']:.3f} "
            f"(target >= {ANSWER_TARGET}) {'met' if t[key]['answer_met'] else 'NOT MET'}"
        )
    given = sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:]
    print(f"command: saturate bench {' '.join(given)}".rstrip())
    print(f"wall time {out['seconds']} s")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m saturate.bench.natural", description=(__doc__ or "").splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
