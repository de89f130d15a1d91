"""Claim-verification benchmark: the decision rule on recorded search hits, offline.

    saturate bench verify [--claims FILE] [--limit N] [--json]

Every claim of a factcheck-format file (default ../shared/data/factcheck/claims.jsonl:
406 real claims, gold verdicts, five recorded web-search hits each with a gold
stance) runs through the whole ``verify`` graph on a ReplaySource of its hits.
Rules compared in the same run, each with a confusion matrix, per-class F1
(True / False / Invalid) and macro F1:

- ``gold-stance``: our decision rule on the annotated stances;
- ``heuristic-stance``: our decision rule on the documented heuristic stance (no model);
- ``always-true``: every claim True;
- ``any-support``: Factcheck-GPT's rule on the annotated stances — any support → True,
  else any refute → False, else Invalid (partial support does not count as support).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.paths import shared_data
from saturate.sources.replay import ReplaySource, load_claims
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

LABELS = ("True", "False", "Invalid")
RULES = ("gold-stance", "heuristic-stance", "always-true", "any-support")


def any_support(hits: list[dict]) -> str:
    stances = {h.get("stance") for h in hits}
    return "True" if "support" in stances else "False" if "refute" in stances else "Invalid"


def scores(gold: list[str], pred: list[str]) -> dict:
    confusion = {g: {p: 0 for p in LABELS} for g in LABELS}
    for g, p in zip(gold, pred):
        confusion[g][p] += 1
    f1 = {}
    for label in LABELS:
        tp = confusion[label][label]
        fp = sum(confusion[g][label] for g in LABELS) - tp
        fn = sum(confusion[label].values()) - tp
        f1[label] = round(2 * tp / (2 * tp + fp + fn), 4) if tp else 0.0
    accuracy = sum(confusion[label][label] for label in LABELS) / len(gold) if gold else 0.0
    return {
        "macro_f1": round(sum(f1.values()) / len(LABELS), 4),
        "f1": f1,
        "accuracy": round(accuracy, 4),
        "confusion": confusion,
    }


def run_claim(graph, row: dict, seed: int, gold_stance: bool) -> dict:
    src = ReplaySource(row.get("hits") or [])
    ctx = Context(source=src, stance_oracle=src.stance_oracle if gold_stance else None)
    out = graph.invoke(initial_state(row["claim"], load_settings({"seed": seed}, env={}), kind="claim"), context=ctx)
    return out["result"]


def evaluate(rows: list[dict], seed: int = 0) -> dict:
    graph = build_graph()
    gold = [r["label"] for r in rows]
    preds = {rule: [] for rule in RULES}
    t0 = time.perf_counter()
    searches = 0
    for i, row in enumerate(rows):
        for rule, gold_stance in (("gold-stance", True), ("heuristic-stance", False)):
            result = run_claim(graph, row, seed + i, gold_stance)
            preds[rule].append(result["outcome"])
            searches += result["debug"]["total_queries"]
        preds["always-true"].append("True")
        preds["any-support"].append(any_support(row.get("hits") or []))
    seconds = time.perf_counter() - t0
    out = {
        "rules": {rule: scores(gold, p) for rule, p in preds.items()},
        "claims": len(rows),
        "labels": {label: gold.count(label) for label in LABELS},
        "seconds_per_claim": round(seconds / max(1, 2 * len(rows)), 4),
        "searches_per_claim": round(searches / max(1, 2 * len(rows)), 3),
    }
    return out


def table(res: dict) -> str:
    lines = [
        f"{res['claims']} claims (gold: " + ", ".join(f"{k} {v}" for k, v in res["labels"].items()) + ")",
        f"{'rule':<18}{'macro F1':>10}{'F1 True':>10}{'F1 False':>10}{'F1 Invalid':>12}{'accuracy':>10}",
    ]
    for rule, r in res["rules"].items():
        lines.append(
            f"{rule:<18}{r['macro_f1']:>10.3f}"
            + "".join(f"{r['f1'][label]:>{w}.3f}" for label, w in zip(LABELS, (10, 10, 12)))
            + f"{r['accuracy']:>10.3f}"
        )
    lines.append("")
    for rule, r in res["rules"].items():
        lines.append(f"confusion, {rule} (rows gold, columns predicted: True False Invalid)")
        for g in LABELS:
            lines.append(f"  {g:<8}" + "".join(f"{r['confusion'][g][p]:>7}" for p in LABELS))
    lines.append(
        f"graph runs: {res['seconds_per_claim']} s and {res['searches_per_claim']} searches per claim and rule"
    )
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--claims",
        type=Path,
        default=None,
        help="claims file (default: factcheck/claims.jsonl in the shared data: $SATURATE_SHARED_DATA or "
        "../shared/data)",
    )
    p.add_argument("--limit", type=int, help="only the first N claims")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--json", action="store_true", help='print {"rules": {"gold-stance": {"macro_f1", "f1", "confusion"}, ...}}'
    )


def run(args) -> int:
    args.claims = args.claims or shared_data("factcheck", "claims.jsonl")

    if not args.claims.exists():
        raise InputError(f"claims file not found: {args.claims}")
    try:
        rows = load_claims(args.claims)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    rows = [r for r in rows if r.get("label") in LABELS]
    if args.limit:
        rows = rows[: args.limit]
    if not rows:
        raise InputError(f"{args.claims}: no labelled claims")
    res = evaluate(rows, args.seed)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(
            f"command: saturate bench verify --claims {args.claims}" + (f" --limit {args.limit}" if args.limit else "")
        )
        print(table(res))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m saturate.graph.bench.verify", description=__doc__.splitlines()[0])
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
