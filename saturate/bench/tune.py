"""``saturate bench tune``: the gate's defaults and the slot filler's weights, chosen by cross-validation.

    saturate bench tune                          # musique + hotpotqa: the gate grid, then the slot weights
    saturate bench tune --novelty-method embedding --min-rounds 3   # another method's threshold, the rest held
    saturate bench tune --json

Every task of a public set falls in half **A** (tuning) or half **B** (held out) by the parity of the
SHA-1 of its id (``research.half_of``). Everything is chosen on A and reported on A and B side by side:

1. **Trajectories**: every task runs as a real session of the graph with ``mode fixed`` and 5 rounds (the
   same planner the gate runs with), recording per round the gold paragraphs it added, its searches, its
   novelty score (of the configured method) and whether the question's chains were complete after it.
2. **The gate grid**: for each ``min_rounds`` x ``novelty_threshold`` the gate's own decision function
   (``nodes.gate.decide_gate``) is replayed round by round with the session's seeded epsilon draws — the
   rounds before a stop are exactly the fixed-5 session's, so the replay is what a session would do. The
   choice on A: the setting nearest the gate's three targets at once (keep at least 98 % of the 5-search
   recall, with at most 60 % of its searches, and beat fixed-N at equal mean searches by 2 points), each
   shortfall counted in units of its own margin (``shortfall``); ties go to the larger gain. ``--fill-p``
   also tries each of ``FILL_P`` as the slot filler's threshold (its trajectories are run again for each:
   the threshold changes what the planner asks); ``--reader`` also tries each of ``READER_STOP_P`` as the
   reader's stop (the trained reader's best answer, recorded per round, confident and the same two rounds
   running; ``nodes.gate.stable_answer``).
3. **The slot weights** (``--slots``): the sentences of every task's retrieved documents are scored as the
   filler of the question's last slot; a listwise logistic model (softmax over a task's sentences, target: the
   sentences holding a gold answer) is fitted on A; the share of tasks whose best sentence holds a gold answer
   is printed for the current and the fitted weights on A and B.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from dataclasses import dataclass, field

from saturate.bench.research import SETS, answer_in, half_of, interpolate, load_jsonl, open_corpus
from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.paths import eval_data, home_dir
from saturate.nodes.gate import decide_gate, stable_answer
from saturate.nodes.reading import slots
from saturate.nodes.reading.chain import parse_chains
from saturate.nodes.reading.slots import FEATURES, WEIGHTS, Reading, SlotScorer, anchors_of, fill_chains, result_texts
from saturate.state.argtypes import non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.rng import new_rng
from saturate.state.settings import load_settings

MIN_ROUNDS = (1, 2, 3, 4)
THRESHOLDS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)
KEEP = 0.98  # the gate's targets: keep this share of the 5-search recall ...
SHARE = 0.60  # ... with at most this share of its searches ...
GAIN = 0.02  # ... and beat fixed-N at equal mean searches by this much (recall)
FILL_P = (0.05, 0.1, 0.2, 0.3, 0.5)  # --fill-p: the slot filler's threshold, tried with the gate grid
READER_STOP_P = (0.1, 0.15, 0.2, 0.3, 0.5, 1.0)  # --reader: the reader's stop, tried with the gate grid


@dataclass
class Trajectory:
    task_id: str
    half: str
    seed: int
    gold: int
    rounds: list[dict] = field(default_factory=list)  # {gold, searches, novelty, complete}
    answers: list[str] = field(default_factory=list)
    sentences: list[tuple[list[float], bool]] = field(default_factory=list)  # (features, holds a gold answer)


def trajectories(name: str, tasks: list[dict], source, overrides: dict, seed: int, embeddings, slots: bool) -> list:
    graph = build_graph()
    out = []
    for i, task in enumerate(tasks):
        settings = load_settings({**overrides, "seed": seed + i, "mode": "fixed", "fixed_rounds": 5}, env={})
        state = graph.invoke(
            initial_state(task["question"], settings), context=Context(source=source, embeddings=embeddings)
        )
        results = state.get("results") or {}
        gold = set(task.get("gold_ids") or [])
        t = Trajectory(task["id"], half_of(task["id"]), seed + i, len(gold), answers=list(task.get("answers") or []))
        for rec in state["records"]:
            ids = {results[u]["id"] for u in rec.get("new_urls", []) if u in results}
            t.rounds.append(
                {
                    "gold": len(ids & gold),
                    "searches": rec.get("searches") or 1,
                    "novelty": rec.get("novelty") or 0.0,
                    "complete": bool(rec.get("complete")),
                    "reader": rec.get("reader") or {},
                }
            )
        if slots:
            t.sentences = slot_rows(task["question"], list(results.values()), source, t.answers)
        out.append(t)
    return out


def slot_rows(question: str, results: list[dict], source, answers: list[str]) -> list[tuple[list[float], bool]]:
    """Every sentence of the results as the filler of the question's last slot: its features and whether it holds
    a gold answer (SQuAD-normalised). Comparisons (no last slot to fill) give none."""
    chains = parse_chains(question)
    if not chains or chains[0].get("compare"):
        return []
    reading = Reading(results, result_texts(source, results))
    filled = fill_chains(question, chains, reading)
    last = filled[0]["slots"][-1]
    anchors = [a for c in filled for a in anchors_of(c)]
    scorer = SlotScorer(question, last, last.get("resolved") or "", anchors, reading)
    rows = []
    for s in reading.sentences:
        f, _ = scorer.features(s)
        rows.append(([f[k] for k in FEATURES], answer_in(s.text, answers)))
    return rows


def replay(t: Trajectory, settings) -> tuple[float, int]:
    """(recall, searches) of one task under the gate ``settings``, replaying its fixed-5 rounds."""
    rng = new_rng(t.seed)
    got = searches = 0
    before = None
    for k, r in enumerate(t.rounds, start=1):
        got += r["gold"]
        searches += r["searches"]
        read = stable_answer(before, r.get("reader"), settings.reader_stop_p) if k > 1 else None
        before = r.get("reader")
        decision, _, _, rng = decide_gate(
            k, r["novelty"], settings, rng, "complete" if r["complete"] else None, 1, read
        )
        if decision in ("stop", "cap"):
            break
    return got / (t.gold or 1), searches


def fixed_n(ts: list[Trajectory], n: int) -> tuple[float, float]:
    """(mean searches, mean recall) of fixed-N on these trajectories."""
    if not ts:
        return 0.0, 0.0
    s = sum(sum(r["searches"] for r in t.rounds[:n]) for t in ts) / len(ts)
    r = sum(sum(x["gold"] for x in t.rounds[:n]) / (t.gold or 1) for t in ts) / len(ts)
    return s, r


def evaluate(ts: list[Trajectory], settings) -> dict:
    if not ts:
        return {}
    runs = [replay(t, settings) for t in ts]
    recall = sum(r for r, _ in runs) / len(runs)
    searches = sum(s for _, s in runs) / len(runs)
    curve = sorted(fixed_n(ts, n) for n in range(1, 6))
    s5, r5 = curve[-1]
    fixed_at = interpolate(curve, searches)
    assert fixed_at is not None  # the curve has its five points
    out = {
        "recall": round(recall, 4),
        "searches": round(searches, 3),
        "keeps": round(recall / r5, 4) if r5 else 1.0,
        "search_share": round(searches / s5, 4) if s5 else 0.0,
        "gain": round(recall - fixed_at, 4),
        "tasks": len(ts),
    }
    out["shortfall"] = shortfall(out)
    return out


def grid(ts_a: list[Trajectory], base: dict, fixed: dict | None = None) -> tuple[dict, list[dict]]:
    """Every (min_rounds, novelty_threshold) evaluated on A — a setting given in ``fixed`` (``--min-rounds 3``)
    is held at its value — and the chosen one (module docstring)."""
    fixed = fixed or {}
    rows = []
    mins = [fixed["min_rounds"]] if "min_rounds" in fixed else MIN_ROUNDS
    ths = [fixed["novelty_threshold"]] if "novelty_threshold" in fixed else THRESHOLDS
    stops = [fixed["reader_stop_p"]] if "reader_stop_p" in fixed else READER_STOP_P
    for m, th, sp in itertools.product(mins, ths, stops):
        settings = load_settings({**base, "min_rounds": m, "novelty_threshold": th, "reader_stop_p": sp}, env={})
        rows.append({"min_rounds": m, "novelty_threshold": th, "reader_stop_p": sp, **evaluate(ts_a, settings)})
    return min(rows, key=lambda r: (r["shortfall"], -r["gain"], r["searches"])), rows


def shortfall(r: dict) -> float:
    """How far a grid row is from the gate's three targets at once, each in units of its own margin: the recall it
    keeps under ``KEEP`` (per 2 points), its search share over ``SHARE`` (per 40 points) and its gain under
    ``GAIN`` (per 2 points); 0 when it meets all three."""
    return round(
        max(0.0, KEEP - r["keeps"]) / (1 - KEEP)
        + max(0.0, r["search_share"] - SHARE) / (1 - SHARE)
        + max(0.0, GAIN - r["gain"]) / GAIN,
        4,
    )


def _better(a: dict, b: dict) -> bool:
    """Whether grid row ``a`` beats ``b`` by the choice rule (module docstring)."""
    return (a["shortfall"], -a["gain"], a["searches"]) < (b["shortfall"], -b["gain"], b["searches"])


def fit_weights(ts: list[Trajectory], iters: int = 2000, lr: float = 2.0, l2: float = 0.001) -> list[float]:
    """Listwise logistic weights over ``FEATURES`` (module docstring), by gradient descent."""
    # heavy: numpy, only for the fit
    import numpy as np

    data = []
    for t in ts:
        if not t.sentences:
            continue
        x = np.array([f for f, _ in t.sentences])
        y = np.array([float(g) for _, g in t.sentences])
        if y.sum() > 0:
            data.append((x, y / y.sum()))
    w = np.zeros(len(FEATURES))
    for _ in range(iters):
        grad = np.zeros_like(w)
        for x, y in data:
            z = x @ w
            p = np.exp(z - z.max())
            grad += x.T @ (p / p.sum() - y)
        w -= lr * (grad / max(1, len(data)) + l2 * w)
    return [round(float(v), 3) for v in w]


def top1(ts: list[Trajectory], weights: list[float]) -> float | None:
    """Share of tasks (with a last slot to fill) whose best-scored sentence holds a gold answer."""
    scored = [t for t in ts if t.sentences]
    if not scored:
        return None
    hits = 0
    for t in scored:
        best = max(
            range(len(t.sentences)), key=lambda i: (math.fsum(a * b for a, b in zip(weights, t.sentences[i][0])), -i)
        )
        hits += t.sentences[best][1]
    return round(hits / len(scored), 4)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", choices=SETS, action="append", help="a public set (default: both)")
    p.add_argument("--data", default=None, help="folder holding the sets (default: $SATURATE_EVAL_DATA)")
    p.add_argument("--limit", type=positive_int, help="only the first N tasks of each set")
    p.add_argument(
        "--seed", type=non_negative_int, default=1, help="base seed (task i uses seed+i, as saturate bench does)"
    )
    p.add_argument("--slots", action="store_true", help="also fit the slot filler's weights (listwise, on A)")
    p.add_argument("--fill-p", action="store_true", help=f"also try the slot filler's threshold at {FILL_P}")
    p.add_argument(
        "--reader", action="store_true", help=f"also try the reader's stop (reader_stop_p) at {READER_STOP_P}"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(overrides={})


def run(args) -> int:

    data = eval_data(args.data)
    overrides = dict(getattr(args, "overrides", None) or {})
    settings = load_settings(overrides)  # bad settings are bad input (exit 2) before any work
    embeddings = resolve_embeddings(settings, home=home_dir())
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.json else (lambda m: None)
    t0 = time.perf_counter()
    sources, task_sets = {}, {}
    for name in args.set or SETS:
        tpath, cpath = data / name / "tasks.jsonl", data / name / "corpus.jsonl"
        if not (tpath.exists() and cpath.exists()):
            raise InputError(f"{name}: {tpath} or {cpath} not found")
        task_sets[name] = load_jsonl(tpath)[: args.limit] if args.limit else load_jsonl(tpath)
        sources[name] = open_corpus(cpath, home_dir() / "index", settings)
    current_fill = slots.FILL_P
    by_fill: dict[float, dict[str, list[Trajectory]]] = {}
    for fill in sorted({current_fill, *(FILL_P if args.fill_p else ())}):
        slots.FILL_P = fill  # the filler's threshold for these trajectories (restored below)
        try:
            by_fill[fill] = {
                name: trajectories(name, tasks, sources[name], overrides, args.seed, embeddings, args.slots)
                for name, tasks in task_sets.items()
            }
        finally:
            slots.FILL_P = current_fill
        say(f"fill_p {fill:g}: " + ", ".join(f"{n} {len(t)} fixed-5 trajectories" for n, t in by_fill[fill].items()))
    tuned = ("min_rounds", "novelty_threshold", "reader_stop_p")
    base = {k: v for k, v in overrides.items() if k not in tuned}
    best_fill, chosen, rows = current_fill, None, []
    for fill, traj in by_fill.items():
        pooled = [t for ts in traj.values() for t in ts if t.half == "A"]
        held = load_settings(overrides, env={})
        pick_row, fill_rows = grid(
            pooled,
            base,
            {k: getattr(held, k) for k in tuned if k in overrides or (k == "reader_stop_p" and not args.reader)},
        )
        rows += [{"fill_p": fill, **r} for r in fill_rows]
        if chosen is None or _better(pick_row, chosen):
            best_fill, chosen = fill, pick_row
    assert chosen is not None  # by_fill has a trajectory set for each fill_p tried, at least the current one
    traj = by_fill[current_fill]
    pooled_a = [t for ts in traj.values() for t in ts if t.half == "A"]
    current = load_settings(overrides, env={})
    pick = load_settings({**base, **{k: chosen[k] for k in tuned}})
    out: dict = {
        "chosen": {
            "fill_p": best_fill,
            "min_rounds": chosen["min_rounds"],
            "novelty_threshold": chosen["novelty_threshold"],
            "reader_stop_p": chosen["reader_stop_p"],
        },
        "current": {
            "fill_p": current_fill,
            "min_rounds": current.min_rounds,
            "novelty_threshold": current.novelty_threshold,
            "reader_stop_p": current.reader_stop_p,
        },
        "novelty_method": current.novelty_method,
        "grid": rows,
        "sets": {},
    }
    for name in task_sets:
        cur_halves = {h: [t for t in by_fill[current_fill][name] if t.half == h] for h in ("A", "B")}
        new_halves = {h: [t for t in by_fill[best_fill][name] if t.half == h] for h in ("A", "B")}
        out["sets"][name] = {
            "current": {h: evaluate(cur_halves[h], current) for h in ("A", "B")},
            "chosen": {h: evaluate(new_halves[h], pick) for h in ("A", "B")},
        }
    if args.slots:
        fitted = fit_weights(pooled_a)
        now = [WEIGHTS[k] for k in FEATURES]
        out["slots"] = {
            "fitted": dict(zip(FEATURES, fitted)),
            "top1": {
                name: {
                    label: {h: top1([t for t in ts if t.half == h], w) for h in ("A", "B")}
                    for label, w in (("current", now), ("fitted", fitted))
                }
                for name, ts in traj.items()
            },
        }
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"gate grid on half A ({len(pooled_a)} tasks, novelty_method {current.novelty_method}): "
        f"min_rounds {MIN_ROUNDS} x novelty_threshold {THRESHOLDS}"
    )
    print(
        f"chosen: fill_p {best_fill:g}, min_rounds {chosen['min_rounds']}, novelty_threshold "
        f"{chosen['novelty_threshold']:g}, reader_stop_p {chosen['reader_stop_p']:g} (current: {current_fill:g}, "
        f"{current.min_rounds}, {current.novelty_threshold:g}, {current.reader_stop_p:g})"
    )
    print(
        f"{'set':<10}{'gate':<9}{'half':<6}{'recall':>8}{'keeps':>8}{'searches':>10}{'share':>8}{'gain':>8}{'shortfall':>11}"
    )
    for name, per in out["sets"].items():
        for label, by_half in per.items():
            for h, e in by_half.items():
                if e:
                    print(
                        f"{name:<10}{label:<9}{h:<6}{e['recall']:>8.3f}{e['keeps']:>8.1%}{e['searches']:>10.2f}"
                        f"{e['search_share']:>8.0%}{100 * e['gain']:>+8.1f}{e['shortfall']:>11.2f}"
                    )
    if args.slots:
        print("slot weights fitted on A:", json.dumps(out["slots"]["fitted"]))
        for name, per in out["slots"]["top1"].items():
            print(
                f"{name}: best sentence holds a gold answer — "
                + "; ".join(f"{label} A {v['A']} / B {v['B']}" for label, v in per.items())
            )
    print(f"wall time {out['seconds']} s")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m saturate.bench.tune", description=(__doc__ or "").splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
