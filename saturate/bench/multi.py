"""Single loop vs multi-source, side by side, on the multi-hop sets (offline, no model).

    saturate bench multi [--set musique|hotpotqa] [--limit N] [--latency-ms MS] [--jobs N]
                         [--sources SPEC] [--compare SPEC] [--json]

The default is a stand-in for the design's scenario (``002``: SAM.gov, a web index and
Twitter — sources that differ in kind and depth, searched over the network, their
loops running concurrently):

- **document** (``--sources``, default ``local:{corpus},titles:{corpus},wiki``): the
  set's corpus full-text (rich, ceiling 6), a titles-only view of it (shallow,
  ceiling 3) and the embedded Wikipedia summaries (broad and shallow, ceiling 6);
- every search of every source — the single loop's included — first waits
  ``--latency-ms`` (default 200 ms: a web search API's latency; 0 for none), so
  searching is I/O-bound as on the web and the sources' loops overlap;
- **one corpus** (``--compare``, default ``local:{corpus},titles:{corpus}``): the set's
  corpus and its titles view only — the earlier default, reported beside it
  against the same single-loop runs (``--compare ""``: not run).

``{corpus}`` stands for the set's corpus file. For every task (the first
``--limit``, default 60 per set: all of musique, the first 60 of hotpotqa; 0: all)
the same question runs as the default single loop (``build_graph``, default
settings, the set's corpus) and as each multi-source configuration
(``build_multi_graph``, default settings: breadcrumbs, triangulation and Key
actors included), no checkpointer, no search cache. Tasks run in ``--jobs``
worker processes (default 4; 1: in this process); each run's wall time is its
own ``invoke``, and the machine has spare CPU while the searches wait.

Per-task means: ``gold_recall`` (share of the task's gold paragraphs retrieved),
``gold`` (gold paragraphs retrieved), ``relevant`` (unique retrieved results
that are gold or whose document contains an answer string as whole words; answers
under 3 characters and yes/no do not count), ``results`` (unique results),
``searches`` and ``seconds`` (wall time of the whole run of the graph); for the
source loops, the slowest loop's time, the sum of the loops' times and their
actual span (concurrent: close to the slowest, not the sum). ``ceiling_violations``
counts loops that asked more queries than their ceiling (must be 0). The audit, per
source kind: queries per loop (mean and distribution), why the loops stopped, and
the breadcrumb queries — the design expects 1–2 queries of a shallow source and
5–8 of a rich one.

The seed's bar (Phase 1's success criteria), checked per set and configuration:
multi finds at least 30 % more relevant results than the single loop, in under 2x
its wall time, with no loop over its ceiling.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from saturate.bench.research import SETS, eval_corpus, load_jsonl
from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.build_multi import build_multi_graph
from saturate.graph.paths import eval_data
from saturate.graph.workers import spawning_deaf
from saturate.sources import open_sources, resolve_specs
from saturate.state.argtypes import non_negative_float, non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.multi_state import initial_multi_state
from saturate.state.records import SearchResult
from saturate.state.settings import load_settings

DEFAULT_SOURCES = "local:{corpus},titles:{corpus},wiki"
ONE_CORPUS = "local:{corpus},titles:{corpus}"
DEFAULT_LATENCY_MS = 200.0
DEFAULT_LIMIT = 60
DEFAULT_JOBS = 4
BAR_RELEVANT = 1.30
BAR_WALL = 2.0
SCENARIOS = ("document", "one_corpus")
LABELS = {"document": "multi (document)", "one_corpus": "multi (one corpus)"}


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
        "loops": [
            {k: lp.get(k) for k in ("source", "kind", "depth", "phase", "queries", "ceiling", "stop_reason")}
            for lp in loops
        ],
    }


def audit_by_kind(runs: list[dict]) -> dict:
    """Per source kind: queries per loop (mean, distribution), stop reasons, breadcrumb queries per pass."""
    out: dict[str, dict] = {}
    for r in runs:
        for lp in r.get("loops", []):
            k = out.setdefault(
                lp["kind"],
                {"depth": lp.get("depth"), "ceiling": lp["ceiling"], "queries": [], "stops": Counter(), "follow": []},
            )
            if lp["phase"] == "loop":
                k["queries"].append(lp["queries"])
                k["stops"][lp["stop_reason"]] += 1
            else:
                k["follow"].append(lp["queries"])
    return {
        kind: {
            "depth": k["depth"],
            "ceiling": k["ceiling"],
            "loops": len(k["queries"]),
            "queries": round(sum(k["queries"]) / len(k["queries"]), 3) if k["queries"] else 0.0,
            "distribution": {str(n): c for n, c in sorted(Counter(k["queries"]).items())},
            "stopped_by": dict(k["stops"].most_common()),
            "breadcrumb_queries": round(sum(k["follow"]) / len(k["follow"]), 3) if k["follow"] else 0.0,
        }
        for kind, k in out.items()
    }


def summarize(runs: list[dict]) -> dict:
    n = len(runs) or 1
    out: dict[str, Any] = {
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
            for t in ("verified_official", "verified_multi", "unverified_single", "contradicted")
        }
        out["by_kind"] = audit_by_kind(runs)
    out["tasks"] = len(runs)
    return out


def bar(single: dict, multi: dict) -> dict:
    rel = multi["relevant"] / single["relevant"] if single["relevant"] else float("inf")
    wall = multi["seconds"] / single["seconds"] if single["seconds"] else float("inf")
    return {
        "relevant_ratio": round(rel, 3),
        "wall_ratio": round(wall, 3),
        "relevant_met": rel >= BAR_RELEVANT,
        "wall_met": wall < BAR_WALL,
        "ceilings_met": multi["ceiling_violations"] == 0,
        "met": rel >= BAR_RELEVANT and wall < BAR_WALL and multi["ceiling_violations"] == 0,
    }


# ---------------------------------------------------------------- one task, in a worker (or this process)

_WORKER: dict = {}


def _init_worker(corpus: str, home: str, specs: dict[str, str], latency_s: float) -> None:
    """Open the sources and build the graphs once per worker (the indexes were built by the parent)."""
    base = load_settings({"corpus": corpus, "cache_ttl_s": 0}, env={})
    single = next(iter(open_sources(resolve_specs(base), base, home).values()))
    scenarios = {}
    for name, spec in specs.items():
        settings = load_settings({"sources": spec.replace("{corpus}", corpus), "cache_ttl_s": 0}, env={})
        resolved = resolve_specs(settings)
        sources = open_sources(resolved, settings, home)
        if latency_s:
            sources = {k: Latency(v, latency_s) for k, v in sources.items()}
        scenarios[name] = (settings, resolved, sources)
    _WORKER.update(
        single=Latency(single, latency_s) if latency_s else single,
        scenarios=scenarios,
        single_graph=build_graph(),
        multi_graph=build_multi_graph(),
    )


def _run_task(item: tuple[int, dict, int]) -> dict:
    i, task, seed = item
    w = _WORKER
    single = run_single(w["single_graph"], w["single"], task, seed + i)
    multi = {
        name: run_multi(w["multi_graph"], sources, resolved, settings, task)
        for name, (settings, resolved, sources) in w["scenarios"].items()
    }
    return {"single": single, "multi": multi}


def run_set(
    name: str,
    tasks: list[dict],
    corpus: Path,
    home: Path,
    specs: dict[str, str],
    seed: int,
    latency_s: float,
    jobs: int = 1,
) -> dict:
    # build every index once here, so the workers only open them
    resolved = {}
    for scenario, spec in specs.items():
        settings = load_settings({"sources": spec.replace("{corpus}", str(corpus)), "cache_ttl_s": 0}, env={})
        resolved[scenario] = resolve_specs(settings)
        open_sources(resolved[scenario], settings, home)
    args = (str(corpus), str(home), specs, latency_s)
    items = [(i, t, seed) for i, t in enumerate(tasks)]
    if jobs <= 1:
        _init_worker(*args)
        per_task = [_run_task(x) for x in items]
    else:
        # spawn: fresh interpreters, no SQLite handle or thread inherited from this process
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=_init_worker, initargs=args) as ex:
            with spawning_deaf():  # the workers start with Ctrl-C held: this process alone answers it
                results = ex.map(_run_task, items)
            per_task = list(results)
    single = summarize([r["single"] for r in per_task])
    out = {"set": name, "latency_ms": round(latency_s * 1000, 3), "single": single, "scenarios": {}}
    for scenario in specs:
        multi = summarize([r["multi"][scenario] for r in per_task])
        out["scenarios"][scenario] = {
            "spec": specs[scenario],
            "sources": [{k: sp[k] for k in ("name", "kind", "depth", "ceiling")} for sp in resolved[scenario]],
            "multi": multi,
            "bar": bar(single, multi),
        }
    return out


# ---------------------------------------------------------------- output


def _bar_line(b: dict) -> str:
    return (
        f"relevant x{b['relevant_ratio']:.2f} (>= {BAR_RELEVANT:g}: {'met' if b['relevant_met'] else 'NOT MET'}), "
        f"wall x{b['wall_ratio']:.2f} (< {BAR_WALL:g}: {'met' if b['wall_met'] else 'NOT MET'}), "
        f"ceilings {'held' if b['ceilings_met'] else 'EXCEEDED'} → {'MET' if b['met'] else 'NOT MET'}"
    )


def table(res: dict) -> str:
    s = res["single"]
    scen = res["scenarios"]
    rows = [
        ("gold-paragraph recall", "gold_recall"),
        ("gold paragraphs / task", "gold"),
        ("unique relevant results / task", "relevant"),
        ("unique results / task", "results"),
        ("searches / task", "searches"),
        ("wall time / task (ms)", "seconds"),
        ("ceiling violations", "ceiling_violations"),
    ]
    lines = [f"== {res['set']} ({s['tasks']} tasks, every search waits {res['latency_ms']:g} ms)"]
    for name, sc in scen.items():
        lines.append(
            f"{LABELS.get(name, name)}: "
            + ", ".join(f"{x['name']} ({x['depth']}, ceiling {x['ceiling']})" for x in sc["sources"])
        )
    head = f"{'':<32}{'single loop':>12}"
    for name in scen:
        head += f"{LABELS.get(name, name):>20}{'ratio':>7}"
    lines.append(head)
    for label, key in rows:
        a = s[key] * (1000 if key == "seconds" else 1)
        line = f"{label:<32}{a:>12.4g}"
        for sc in scen.values():
            b = sc["multi"][key] * (1000 if key == "seconds" else 1)
            line += f"{b:>20.4g}{(f'{b / a:.2f}x' if a else '-'):>7}"
        lines.append(line)
    for name, sc in scen.items():
        m = sc["multi"]
        label = LABELS.get(name, name)
        lines.append(
            f"{label}: source loops per task: slowest {m['loop_slowest'] * 1000:.0f} ms, "
            f"sum {m['loop_sum'] * 1000:.0f} ms, first start to last end {m['loop_span'] * 1000:.0f} ms "
            f"(sum/span {m.get('parallelism', 1.0):.2f}); results found by 2+ sources / task "
            f"{m['multi_source_results']:.2f}"
        )
        for kind, k in m["by_kind"].items():
            dist = " ".join(f"{n}:{c}" for n, c in k["distribution"].items())
            stops = ", ".join(f"{r} {c}" for r, c in k["stopped_by"].items())
            lines.append(
                f"  audit {kind} ({k['depth']}, ceiling {k['ceiling']}): {k['queries']:.2f} queries per loop "
                f"[queries:loops {dist}]; stopped by {stops}; breadcrumb queries {k['breadcrumb_queries']:.2f}"
            )
        lines.append(f"{label}: seed's bar: " + _bar_line(sc["bar"]))
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", choices=SETS, action="append", help="a set of the evaluation data (default: both)")
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder holding the sets (default: $SATURATE_EVAL_DATA)",
    )
    p.add_argument(
        "--limit",
        type=non_negative_int,
        default=DEFAULT_LIMIT,
        help=f"the first N tasks of each set (default {DEFAULT_LIMIT}; 0: all)",
    )
    p.add_argument("--seed", type=non_negative_int, default=1, help="base seed of the single loop (task i uses seed+i)")
    p.add_argument(
        "--sources",
        default=DEFAULT_SOURCES,
        help=f"the multi-source spec of the document scenario; {{corpus}} is the set's corpus "
        f"(default {DEFAULT_SOURCES!r})",
    )
    p.add_argument(
        "--compare",
        default=ONE_CORPUS,
        help=f"a second multi-source spec reported beside it (default {ONE_CORPUS!r}; '' for none)",
    )
    p.add_argument(
        "--latency-ms",
        type=non_negative_float,
        default=DEFAULT_LATENCY_MS,
        help=f"every search of every source waits this long first (default {DEFAULT_LATENCY_MS:g}; 0: none)",
    )
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=DEFAULT_JOBS,
        help=f"worker processes (default {DEFAULT_JOBS}; 1: this process)",
    )
    p.add_argument("--json", action="store_true", help="print JSON: {set: {single, scenarios: {name: {multi, bar}}}}")


def run(args) -> int:
    if args.limit is not None and args.limit < 0:
        raise InputError("--limit must be 0 (all) or more")
    if args.latency_ms < 0:
        raise InputError("--latency-ms must be 0 or more")
    if args.jobs < 1:
        raise InputError("--jobs must be at least 1")
    args.data = eval_data(args.data)
    specs = {"document": args.sources}
    if args.compare:
        specs["one_corpus"] = args.compare
    for spec in specs.values():
        load_settings({"sources": spec.replace("{corpus}", "corpus.jsonl")}, env={})  # a bad spec: exit 2 now
    out = {}
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.set or SETS:
            tpath, cpath = args.data / name / "tasks.jsonl", args.data / name / "corpus.jsonl"
            if not (tpath.exists() and cpath.exists()):
                raise InputError(f"set {name!r}: {tpath} or {cpath} not found")
            tasks = load_jsonl(tpath)[: args.limit] if args.limit else load_jsonl(tpath)
            eval_corpus(cpath)  # a FIFO, a device or a 2 GB file: one line before any session
            out[name] = run_set(
                name, tasks, cpath, Path(tmp), specs, args.seed, args.latency_ms / 1000, min(args.jobs, len(tasks))
            )
            if not args.json:
                print(table(out[name]) + "\n", flush=True)
    if args.json:
        print(json.dumps(out if len(out) > 1 else next(iter(out.values())), indent=2))
    else:
        cmd = " ".join(sys.argv[1:]) if sys.argv[1:2] == ["bench"] else "bench multi"
        print(f"command: saturate {cmd}".rstrip())
        print(
            f"wall time {time.perf_counter() - t_all:.1f} s (latency per search {args.latency_ms:g} ms, "
            f"{args.jobs} worker process{'es' if args.jobs > 1 else ''})"
        )
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m saturate.bench.multi", description=(__doc__ or "").splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
