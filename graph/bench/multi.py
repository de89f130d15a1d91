"""Single loop vs multi-source, side by side, on the multi-hop sets (offline, no model).

    saturate bench multi [--set musique|hotpotqa] [--limit N] [--sources SPEC] [--latency-ms MS] [--json]

For every task of a set (``../shared/data/<set>/tasks.jsonl`` over its corpus),
the same question runs twice, no checkpointer, no search cache:

- **single**: the default single loop (``build_graph``, default settings) on the
  set's corpus;
- **multi**: ``build_multi_graph`` over ``--sources`` (default
  ``local:{corpus},titles:{corpus}``: the corpus full-text, ceiling 6, and the same
  corpus matched on titles only, ceiling 3 — ``{corpus}`` stands for the set's
  corpus file), breadcrumbs and triangulation included.

Per-task means: ``gold_recall`` (share of the task's gold paragraphs retrieved),
``gold`` (gold paragraphs retrieved), ``relevant`` (unique retrieved results
that are gold or whose document contains an answer string as whole words; answers
under 3 characters and yes/no do not count), ``results``
(unique results), ``searches`` and ``seconds`` (wall time of the whole run of
the graph); for the source loops, the slowest loop's time, the sum of the
loops' times and their actual span (concurrent: close to the slowest, not the
sum). ``ceiling_violations`` counts loops that asked more queries than
their ceiling (must be 0). ``--latency-ms`` makes every search wait that long
first (a stand-in for a web search's latency), to show what running the
sources in parallel buys when searching is I/O-bound.

The seed's bar, checked per set: multi finds at least 30 % more relevant
results than the single loop, in under 2x its wall time, with no loop over its
ceiling.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from saturate.graph.api import InputError
from saturate.graph.bench.research import SETS, load_jsonl
from saturate.graph.build import build_graph
from saturate.graph.build_multi import build_multi_graph
from saturate.graph.paths import shared_data
from saturate.sources import open_sources, resolve_specs
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.multi_state import initial_multi_state
from saturate.state.records import SearchResult
from saturate.state.settings import load_settings

DEFAULT_SOURCES = "local:{corpus},titles:{corpus}"
BAR_RELEVANT = 1.30
BAR_WALL = 2.0


class Latency:
    """A source whose every search first waits ``seconds`` (the inner source's answers otherwise)."""

    def __init__(self, inner, seconds: float):
        self.inner, self.seconds, self.name = inner, seconds, inner.name

    def search(self, query: str, k: int):
        time.sleep(self.seconds)
        return self.inner.search(query, k)

    def fetch(self, result):
        return self.inner.fetch(result)


def _answer_patterns(task: dict) -> list[re.Pattern]:
    """Answer strings that can mark a document as relevant: whole words, at least 3 characters, not yes/no."""
    return [
        re.compile(rf"(?<!\w){re.escape(a.lower())}(?!\w)")
        for a in task.get("answers", [])
        if a and len(a) >= 3 and a.lower() not in ("yes", "no")
    ]


def _relevant(results: list[dict], task: dict, fetch) -> dict:
    gold = set(task["gold_ids"])
    answers = _answer_patterns(task)
    got_gold, relevant = set(), 0
    for r in results:
        ids = set(r.get("ids") or [r.get("id")])
        is_gold = bool(ids & gold)
        got_gold |= ids & gold
        if not is_gold and answers:
            try:
                text = fetch(r).lower()
            except Exception:  # a document the corpus does not have: its snippet is what was retrieved
                text = f"{r.get('title', '')} {r.get('snippet', '')}".lower()
            is_gold = any(a.search(text) for a in answers)
        relevant += is_gold
    return {
        "gold": len(got_gold),
        "gold_recall": len(got_gold) / len(gold) if gold else 1.0,
        "relevant": relevant,
        "results": len(results),
    }


def run_single(graph, source, task: dict, seed: int) -> dict:
    settings = load_settings({"seed": seed, "cache_ttl_s": 0}, env={})
    t0 = time.perf_counter()
    out = graph.invoke(initial_state(task["question"], settings), context=Context(source=source))
    seconds = time.perf_counter() - t0
    results = list((out.get("results") or {}).values())
    fetch = lambda r: source.fetch(SearchResult.model_validate(r))  # noqa: E731
    return {
        **_relevant(results, task, fetch),
        "searches": len(out.get("queries") or []),
        "seconds": seconds,
        "ceiling_violations": 0,
    }


def run_multi(graph, sources: dict, specs: list[dict], settings, task: dict) -> dict:
    first = sources[specs[0]["name"]]
    t0 = time.perf_counter()
    out = graph.invoke(
        initial_multi_state(task["question"], settings, specs), context=Context(source=first, sources=sources)
    )
    seconds = time.perf_counter() - t0
    merged = out.get("merged") or []

    def fetch(entry: dict) -> str:
        src = sources[entry["found_by"][0]["source"]]
        return src.fetch(SearchResult(id=entry["id"], url=entry["url"], title=entry["title"], snippet=entry["snippet"]))

    loops = out.get("loops") or []
    violations = sum(1 for lp in loops if lp["queries"] > lp["ceiling"])
    main = [lp for lp in loops if lp["phase"] == "loop"]
    span = max(lp["started"] + lp["elapsed_s"] for lp in main) - min(lp["started"] for lp in main)
    return {
        **_relevant(merged, task, fetch),
        "searches": len(out.get("audit") or []),
        "seconds": seconds,
        "ceiling_violations": violations,
        "parallelism": out["result"]["debug"].get("parallelism"),
        "loop_slowest": max(lp["elapsed_s"] for lp in main),
        "loop_sum": sum(lp["elapsed_s"] for lp in main),
        "loop_span": span,
        "multi_source_results": out["result"]["debug"].get("multi_source_results", 0),
        "tags": out["result"].get("tags", {}),
    }


def summarize(runs: list[dict]) -> dict:
    n = len(runs) or 1
    out = {
        k: round(sum(r[k] for r in runs) / n, 4)
        for k in ("gold_recall", "gold", "relevant", "results", "searches", "seconds")
    }
    out["ceiling_violations"] = sum(r["ceiling_violations"] for r in runs)
    out["total_seconds"] = round(sum(r["seconds"] for r in runs), 3)
    par = [r["parallelism"] for r in runs if r.get("parallelism")]
    if par:
        out["parallelism"] = round(sum(par) / len(par), 3)
    if runs and "loop_span" in runs[0]:
        for k in ("loop_slowest", "loop_sum", "loop_span"):
            out[k] = round(sum(r[k] for r in runs) / n, 5)
    if any("multi_source_results" in r for r in runs):
        out["multi_source_results"] = round(sum(r.get("multi_source_results", 0) for r in runs) / n, 3)
        out["tags"] = {
            t: round(sum(r["tags"].get(t, 0) for r in runs) / n, 3)
            for t in ("verified_multi", "unverified_single", "contradicted")
        }
    out["tasks"] = len(runs)
    return out


def run_set(name: str, tasks: list[dict], corpus: Path, home: Path, spec: str, seed: int, latency_s: float) -> dict:
    settings = load_settings({"sources": spec.replace("{corpus}", str(corpus)), "cache_ttl_s": 0}, env={})
    specs = resolve_specs(settings)
    sources = open_sources(specs, settings, home)
    single_source = open_sources(
        resolve_specs(load_settings({"corpus": str(corpus), "cache_ttl_s": 0}, env={})), settings, home
    )
    single_source = next(iter(single_source.values()))
    if latency_s:
        sources = {k: Latency(v, latency_s) for k, v in sources.items()}
        single_source = Latency(single_source, latency_s)
    single_graph, multi_graph = build_graph(), build_multi_graph()
    single, multi = [], []
    for i, task in enumerate(tasks):
        single.append(run_single(single_graph, single_source, task, seed + i))
        multi.append(run_multi(multi_graph, sources, specs, settings, task))
    s, m = summarize(single), summarize(multi)
    rel = m["relevant"] / s["relevant"] if s["relevant"] else float("inf")
    wall = m["seconds"] / s["seconds"] if s["seconds"] else float("inf")
    return {
        "set": name,
        "sources": [{k: sp[k] for k in ("name", "kind", "ceiling")} for sp in specs],
        "single": s,
        "multi": m,
        "bar": {
            "relevant_ratio": round(rel, 3),
            "wall_ratio": round(wall, 3),
            "relevant_met": rel >= BAR_RELEVANT,
            "wall_met": wall < BAR_WALL,
            "ceilings_met": m["ceiling_violations"] == 0,
            "met": rel >= BAR_RELEVANT and wall < BAR_WALL and m["ceiling_violations"] == 0,
        },
    }


def table(res: dict) -> str:
    s, m = res["single"], res["multi"]
    rows = [
        ("gold-paragraph recall", "gold_recall"),
        ("gold paragraphs / task", "gold"),
        ("unique relevant results / task", "relevant"),
        ("unique results / task", "results"),
        ("searches / task", "searches"),
        ("wall time / task (ms)", "seconds"),
        ("ceiling violations", "ceiling_violations"),
    ]
    lines = [
        f"== {res['set']} ({s['tasks']} tasks) — multi sources: "
        + ", ".join(f"{x['name']} (ceiling {x['ceiling']})" for x in res["sources"]),
        f"{'':<32}{'single loop':>14}{'multi-source':>14}{'ratio':>9}",
    ]
    for label, key in rows:
        a, b = s[key], m[key]
        if key == "seconds":
            a, b = a * 1000, b * 1000
        ratio = f"{b / a:.2f}x" if a else "-"
        lines.append(f"{label:<32}{a:>14.4g}{b:>14.4g}{ratio:>9}")
    if "loop_span" in m:
        lines.append(
            f"source loops per task: slowest {m['loop_slowest'] * 1000:.1f} ms, sum {m['loop_sum'] * 1000:.1f} ms, "
            f"start of the first to end of the last {m['loop_span'] * 1000:.1f} ms "
            f"(parallelism, sum/span: {m.get('parallelism', 1.0):.2f})"
        )
    if "multi_source_results" in m:
        lines.append(f"results found by 2+ sources (merged with attribution) / task: {m['multi_source_results']:.2f}")
        lines.append("tags of the cited sources / task: " + ", ".join(f"{t} {v:.2f}" for t, v in m["tags"].items()))
    b = res["bar"]
    lines.append(
        f"seed's bar: relevant x{b['relevant_ratio']:.2f} "
        f"(>= {BAR_RELEVANT:g}: {'met' if b['relevant_met'] else 'NOT MET'}), "
        f"wall x{b['wall_ratio']:.2f} (< {BAR_WALL:g}: {'met' if b['wall_met'] else 'NOT MET'}), "
        f"ceilings {'held' if b['ceilings_met'] else 'EXCEEDED'} → {'MET' if b['met'] else 'NOT MET'}"
    )
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", choices=SETS, action="append", help="a set from ../shared/data (default: both)")
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder holding the sets (default: $SATURATE_SHARED_DATA, else ../shared/data beside the current "
        "directory)",
    )
    p.add_argument("--limit", type=int, help="only the first N tasks of each set")
    p.add_argument("--seed", type=int, default=1, help="base seed of the single loop (task i uses seed+i)")
    p.add_argument(
        "--sources",
        default=DEFAULT_SOURCES,
        help=f"the multi-source spec; {{corpus}} is the set's corpus (default {DEFAULT_SOURCES!r})",
    )
    p.add_argument("--latency-ms", type=float, default=0.0, help="every search waits this long first (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON: {set: {single, multi, bar}}")


def run(args) -> int:
    args.data = args.data or shared_data()

    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    out = {}
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.set or SETS:
            tpath, cpath = args.data / name / "tasks.jsonl", args.data / name / "corpus.jsonl"
            if not (tpath.exists() and cpath.exists()):
                raise InputError(f"set {name!r}: {tpath} or {cpath} not found")
            tasks = load_jsonl(tpath)[: args.limit] if args.limit else load_jsonl(tpath)
            out[name] = run_set(name, tasks, cpath, Path(tmp), args.sources, args.seed, args.latency_ms / 1000)
            if not args.json:
                print(table(out[name]) + "\n", flush=True)
    if args.json:
        print(json.dumps(out if len(out) > 1 else next(iter(out.values())), indent=2))
    else:
        cmd = " ".join(sys.argv[1:]) if sys.argv[1:2] == ["bench"] else "bench multi"
        print(f"command: saturate {cmd}".rstrip())
        print(f"wall time {time.perf_counter() - t_all:.1f} s (latency per search {args.latency_ms:g} ms)")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m saturate.graph.bench.multi", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
