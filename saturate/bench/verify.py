"""Claim-verification benchmark: the decision rule on recorded search hits, offline.

    saturate bench verify [--claims FILE] [--limit N] [--json] [--cv K]

Every claim of a factcheck-format file (default factcheck/claims.jsonl of the evaluation data:
406 real claims, gold verdicts, five recorded web-search passages each with a gold
stance) runs through the whole ``verify`` graph on a ReplaySource of its hits — every
recorded passage its own hit — once per stance (annotated / heuristic) and profile
(``calibrated`` / ``strict``). Every rule and baseline is scored on the same view: the
evidence hits the graph collected. Per rule: confusion matrix, F1 per class
(True / False / Invalid), macro F1, accuracy.

- ``gold-stance/<profile>``: our decision rule on the annotated stances;
- ``heuristic-stance/<profile>``: our decision rule on the heuristic stance (no model);
- ``always-true``: every claim True;
- ``any-hit``: True when the claim has any evidence hit, else Invalid (no skill: the floor
  a stance must beat);
- ``any-support``: Factcheck-GPT's rule on the annotated stances — any support → True,
  else any refute → False, else Invalid (partial support does not count);
  ``any-support/heuristic``: the same on the heuristic stances.

``stance``: the heuristic stance against the annotated one on every evidence hit —
accuracy beside answering "irrelevant" every time, per-stance F1, confusion.

``--cv K``: K-fold cross-validation (claims shuffled with ``--seed``) of (1) the decision
rule's four values over ``GRID`` on the annotated stances — each fold picks the values
with the best macro F1 on the other folds (ties: the stricter values) and is scored on
its own claims — and (2) the heuristic stance's thresholds over ``STANCE_GRID`` with the
default profile: the best claim macro F1 among the thresholds whose stance accuracy on
the other folds beats answering "irrelevant" every time by ``STANCE_MARGIN`` (ties: the
stricter thresholds).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from pathlib import Path

from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.paths import eval_data
from saturate.nodes.reading.stance import PARTIAL_FROM, REFUTE_CONTEXT, RELATION_FROM, SUPPORT_FROM, align, stance_of
from saturate.nodes.reading.verdict import PROFILES, VerifyRules, decide_from_history
from saturate.sources.replay import ReplaySource, load_claims
from saturate.state.argtypes import non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.records import EvidenceHit
from saturate.state.settings import load_settings

LABELS = ("True", "False", "Invalid")
STANCES = ("support", "partial", "refute", "irrelevant")
PROFILE_NAMES = ("calibrated", "strict")
RULES = (
    *(f"{stance}-stance/{profile}" for stance in ("gold", "heuristic") for profile in PROFILE_NAMES),
    "always-true",
    "any-hit",
    "any-support",
    "any-support/heuristic",
)
# the decision rule's values searched by --cv; a margin of 1 is left out: a tie would be True, and conflicting
# evidence could never end Invalid, which the design asks for
GRID = {
    "threshold": (0.4, 0.8, 1.2, 1.6, 2.0),
    "min_sources": (1, 2, 3),
    "margin": (1.5, 2.0, 3.0),
    "partial_weight": (0.0, 0.25, 0.5, 0.75, 1.0),
}
STANCE_MARGIN = 0.02  # the stance must beat always-"irrelevant" by this on the training folds, to hold on others
OFF = 9.0  # a threshold no cover reaches: the stance never says partial / refute
STANCE_GRID = {
    "support_from": (0.4, 0.5, 0.6, 0.7, 0.8),
    "partial_from": (0.3, 0.4, 0.5, 0.6, 0.7, OFF),
    "refute_context": (0.3, 0.4, 0.5, 0.6, 0.8, OFF),
    "relation_from": (0.0, 0.3, 0.5),
}


def any_support(stances: list[str]) -> str:
    return "True" if "support" in stances else "False" if "refute" in stances else "Invalid"


def scores(gold: list[str], pred: list[str], labels: tuple[str, ...] = LABELS) -> dict:
    confusion = {g: {p: 0 for p in labels} for g in labels}
    for g, p in zip(gold, pred):
        confusion[g][p] += 1
    f1 = {}
    for label in labels:
        tp = confusion[label][label]
        fp = sum(confusion[g][label] for g in labels) - tp
        fn = sum(confusion[label].values()) - tp
        f1[label] = round(2 * tp / (2 * tp + fp + fn), 4) if tp else 0.0
    accuracy = sum(confusion[label][label] for label in labels) / len(gold) if gold else 0.0
    return {
        "macro_f1": round(sum(f1.values()) / len(labels), 4),
        "f1": f1,
        "accuracy": round(accuracy, 4),
        "confusion": confusion,
    }


def run_claim(graph, row: dict, seed: int, gold_stance: bool, profile: str) -> tuple[dict, list[dict], ReplaySource]:
    """(result, evidence hits, source) of one claim through the verify graph."""
    src = ReplaySource(row.get("hits") or [])
    ctx = Context(source=src, stance_oracle=src.stance_oracle if gold_stance else None)
    settings = load_settings({"seed": seed, "verify_profile": profile}, env={})
    out = graph.invoke(initial_state(row["claim"], settings, kind="claim"), context=ctx)
    return out["result"], list(out.get("evidence") or []), src


def evaluate(rows: list[dict], seed: int = 0) -> tuple[dict, dict]:
    """(results, evidence): the benchmark's figures, and per claim the evidence hits of its gold and heuristic
    runs (default profile) with each hit's gold stance (for --cv)."""
    graph = build_graph()
    gold = [r["label"] for r in rows]
    preds: dict[str, list[str]] = {rule: [] for rule in RULES}
    evidence: dict[str, list[list[dict]]] = {"gold": [], "heuristic": []}
    stance_gold: list[str] = []
    stance_pred: list[str] = []
    recorded = judged = runs = searches = 0
    t0 = time.perf_counter()
    for i, row in enumerate(rows):
        recorded += len([h for h in row.get("hits") or [] if h.get("url")])
        for stance, profile in itertools.product(("gold", "heuristic"), PROFILE_NAMES):
            result, hits, src = run_claim(graph, row, seed + i, stance == "gold", profile)
            preds[f"{stance}-stance/{profile}"].append(result["outcome"])
            runs += 1
            searches += result["debug"]["total_queries"]
            if profile != PROFILE_NAMES[0]:
                continue
            for h in hits:  # the checkpoint keeps a short text per hit: the passage comes from the source
                h["gold_stance"], h["passage"] = src.stance_oracle(h["url"]), src.passage(h["url"])
            evidence[stance].append(hits)
            if stance == "gold":
                judged += len(hits)
                preds["always-true"].append("True")
                preds["any-hit"].append("True" if hits else "Invalid")
                preds["any-support"].append(any_support([h["stance"] for h in hits]))
            else:
                preds["any-support/heuristic"].append(any_support([h["stance"] for h in hits]))
                stance_gold += [h["gold_stance"] or "irrelevant" for h in hits]
                stance_pred += [h["stance"] for h in hits]
    seconds = time.perf_counter() - t0
    stance = scores(stance_gold, stance_pred, STANCES)
    out = {
        "rules": {rule: scores(gold, p) for rule, p in preds.items()},
        "stance": {
            "hits": len(stance_gold),
            "accuracy": stance["accuracy"],
            "always_irrelevant_accuracy": round(stance_gold.count("irrelevant") / max(1, len(stance_gold)), 4),
            "macro_f1": stance["macro_f1"],
            "f1": stance["f1"],
            "confusion": stance["confusion"],
        },
        "profiles": {name: PROFILES[name].describe() for name in PROFILE_NAMES},
        "claims": len(rows),
        "labels": {label: gold.count(label) for label in LABELS},
        "hits": {"recorded": recorded, "evidence": judged},
        "seconds_per_run": round(seconds / max(1, runs), 4),
        "searches_per_run": round(searches / max(1, runs), 3),
    }
    out["targets"] = targets(out)
    return out, evidence


def targets(res: dict) -> dict:
    """The issue's targets, met or not, with the figures."""
    r, st = res["rules"], res["stance"]
    gold = r["gold-stance/calibrated"]["macro_f1"]
    heur = r["heuristic-stance/calibrated"]["macro_f1"]
    return {
        "gold_beats_any_support_and_always_true": {
            "met": gold > r["any-support"]["macro_f1"] and gold > r["always-true"]["macro_f1"],
            "value": gold,
            "against": {"any-support": r["any-support"]["macro_f1"], "always-true": r["always-true"]["macro_f1"]},
        },
        "heuristic_beats_any_hit": {
            "met": heur > r["any-hit"]["macro_f1"],
            "value": heur,
            "against": {"any-hit": r["any-hit"]["macro_f1"]},
        },
        "stance_accuracy_at_least_always_irrelevant": {
            "met": st["accuracy"] >= st["always_irrelevant_accuracy"],
            "value": st["accuracy"],
            "against": {"always-irrelevant": st["always_irrelevant_accuracy"]},
        },
    }


# ---------------------------------------------------------------- cross-validation


def _hits(evidence: list[dict], stances: list[str] | None = None) -> list[EvidenceHit]:
    return [
        EvidenceHit.model_validate(
            {k: v for k, v in h.items() if k in EvidenceHit.model_fields} | ({"stance": s} if s else {})
        )
        for h, s in zip(evidence, stances or [None] * len(evidence))
    ]


def _folds(n: int, k: int, seed: int) -> list[int]:
    order = list(range(n))
    random.Random(seed).shuffle(order)
    fold = [0] * n
    for pos, i in enumerate(order):
        fold[i] = pos % k
    return fold


def _strictness(rules: VerifyRules) -> tuple:
    return (rules.threshold, rules.min_sources, rules.margin, -rules.partial_weight)


def cross_validate(rows: list[dict], evidence: dict, k: int, seed: int) -> dict:
    gold = [r["label"] for r in rows]
    fold = _folds(len(rows), k, seed)
    splits = [
        ([i for i in range(len(rows)) if fold[i] != f], [i for i in range(len(rows)) if fold[i] == f]) for f in range(k)
    ]
    everyone = list(range(len(rows)))
    claims = [_hits(ev) for ev in evidence["gold"]]

    def predict(rules: VerifyRules, hits: list[list[EvidenceHit]]) -> list[str]:
        return [decide_from_history("", h, 1, 1, rules).outcome for h in hits]

    def f1(pred: list[str], idx: list[int]) -> float:
        return scores([gold[i] for i in idx], [pred[i] for i in idx])["macro_f1"]

    grid = [VerifyRules(*values, profile="grid") for values in itertools.product(*GRID.values())]
    all_preds = {g: predict(g, claims) for g in grid}
    strict = predict(PROFILES["strict"], claims)

    def rule_choice(idx: list[int]) -> VerifyRules:
        return max(grid, key=lambda g: (f1(all_preds[g], idx), _strictness(g)))

    rule_folds = []
    for f, (train, test) in enumerate(splits):
        best = rule_choice(train)
        rule_folds.append(
            {
                "fold": f,
                "chosen": _values(best),
                "train_macro_f1": f1(all_preds[best], train),
                "test_macro_f1": f1(all_preds[best], test),
                "strict_test_macro_f1": f1(strict, test),
            }
        )

    # the heuristic stance's thresholds, with the default profile: alignments once, thresholds applied after
    aligned = [[align(r["claim"], h["passage"]) for h in ev] for r, ev in zip(rows, evidence["heuristic"])]
    hgold = [[h["gold_stance"] or "irrelevant" for h in ev] for ev in evidence["heuristic"]]
    profile = PROFILES["calibrated"]
    # partial_from above support_from is the same as OFF (support is judged first): left out
    combos = [c for c in itertools.product(*STANCE_GRID.values()) if c[1] <= c[0] or c[1] == OFF]
    table = []
    for combo in combos:
        stances = [[stance_of(a, *combo)[0] for a in claim] for claim in aligned]
        pred = [
            decide_from_history("", _hits(ev, st), 1, 1, profile).outcome
            for ev, st in zip(evidence["heuristic"], stances)
        ]
        table.append((combo, stances, pred))

    def stance_accuracy(stances: list[list[str]], idx: list[int]) -> tuple[float, float]:
        """(accuracy, always-irrelevant's accuracy) over the hits of the claims ``idx``."""
        pairs = [(g, s) for i in idx for g, s in zip(hgold[i], stances[i])]
        n = max(1, len(pairs))
        return sum(g == s for g, s in pairs) / n, sum(g == "irrelevant" for g, _ in pairs) / n

    def stance_choice(idx: list[int]) -> tuple:
        ok = [row for row in table if (lambda acc: acc[0] >= acc[1] + STANCE_MARGIN)(stance_accuracy(row[1], idx))]
        return max(ok or table, key=lambda row: (f1(row[2], idx), row[0]))

    stance_folds = []
    for f, (train, test) in enumerate(splits):
        best = stance_choice(train)
        acc, base = stance_accuracy(best[1], test)
        stance_folds.append(
            {
                "fold": f,
                "chosen": dict(zip(STANCE_GRID, best[0])),
                "train_macro_f1": f1(best[2], train),
                "test_macro_f1": f1(best[2], test),
                "test_stance_accuracy": round(acc, 4),
                "test_always_irrelevant_accuracy": round(base, 4),
            }
        )

    def mean(folds: list[dict], key: str) -> float:
        return round(sum(r[key] for r in folds) / len(folds), 4)

    return {
        "k": k,
        "seed": seed,
        "rule": {
            "folds": rule_folds,
            "mean_test_macro_f1": mean(rule_folds, "test_macro_f1"),
            "strict_mean_test_macro_f1": mean(rule_folds, "strict_test_macro_f1"),
            "chosen_on_all": _values(rule_choice(everyone)),
            "calibrated_profile": _values(PROFILES["calibrated"]),
        },
        "stance": {
            "folds": stance_folds,
            "mean_test_macro_f1": mean(stance_folds, "test_macro_f1"),
            "chosen_on_all": dict(zip(STANCE_GRID, stance_choice(everyone)[0])),
            "current": dict(zip(STANCE_GRID, (SUPPORT_FROM, PARTIAL_FROM, REFUTE_CONTEXT, RELATION_FROM))),
        },
    }


def _values(rules: VerifyRules) -> dict:
    return {name: getattr(rules, name) for name in GRID}


# ---------------------------------------------------------------- output


def table(res: dict) -> str:
    lines = [
        f"{res['claims']} claims (gold: " + ", ".join(f"{k} {v}" for k, v in res["labels"].items()) + "); "
        f"{res['hits']['evidence']} evidence hits from {res['hits']['recorded']} recorded passages",
        "profiles: " + "; ".join(res["profiles"].values()),
        f"{'rule':<30}{'macro F1':>10}{'F1 True':>10}{'F1 False':>10}{'F1 Invalid':>12}{'accuracy':>10}",
    ]
    for rule, r in res["rules"].items():
        lines.append(
            f"{rule:<30}{r['macro_f1']:>10.3f}"
            + "".join(f"{r['f1'][label]:>{w}.3f}" for label, w in zip(LABELS, (10, 10, 12)))
            + f"{r['accuracy']:>10.3f}"
        )
    st = res["stance"]
    lines += [
        "",
        f"heuristic stance on {st['hits']} hits: accuracy {st['accuracy']:.3f} "
        f"(always 'irrelevant': {st['always_irrelevant_accuracy']:.3f}), macro F1 {st['macro_f1']:.3f}, "
        + ", ".join(f"F1 {s} {st['f1'][s]:.3f}" for s in STANCES),
        "stance confusion (rows gold, columns heuristic: " + " ".join(STANCES) + ")",
    ]
    for g in STANCES:
        lines.append(f"  {g:<11}" + "".join(f"{st['confusion'][g][p]:>11}" for p in STANCES))
    lines.append("")
    for rule, r in res["rules"].items():
        lines.append(f"confusion, {rule} (rows gold, columns predicted: True False Invalid)")
        for g in LABELS:
            lines.append(f"  {g:<8}" + "".join(f"{r['confusion'][g][p]:>7}" for p in LABELS))
    lines.append("")
    for name, t in res["targets"].items():
        against = ", ".join(f"{k} {v:.3f}" for k, v in t["against"].items())
        lines.append(f"target {name}: {'met' if t['met'] else 'NOT met'} ({t['value']:.3f} vs {against})")
    lines.append(f"graph runs: {res['seconds_per_run']} s and {res['searches_per_run']} searches per claim and rule")
    if "cv" in res:
        cv = res["cv"]
        lines += ["", f"{cv['k']}-fold cross-validation (seed {cv['seed']}), decision rule on annotated stances:"]
        for f in cv["rule"]["folds"]:
            lines.append(
                f"  fold {f['fold']}: chose {f['chosen']} train {f['train_macro_f1']:.3f} test {f['test_macro_f1']:.3f}"
                f" (strict {f['strict_test_macro_f1']:.3f})"
            )
        lines.append(
            f"  mean test macro F1 {cv['rule']['mean_test_macro_f1']:.3f} (strict "
            f"{cv['rule']['strict_mean_test_macro_f1']:.3f}); on all claims: {cv['rule']['chosen_on_all']}; "
            f"calibrated profile: {cv['rule']['calibrated_profile']}"
        )
        lines.append(
            f"heuristic stance thresholds (default profile; training stance accuracy >= always 'irrelevant' + "
            f"{STANCE_MARGIN:g}):"
        )
        for f in cv["stance"]["folds"]:
            lines.append(
                f"  fold {f['fold']}: chose {f['chosen']} train {f['train_macro_f1']:.3f} test {f['test_macro_f1']:.3f}"
                f" stance accuracy {f['test_stance_accuracy']:.3f} vs {f['test_always_irrelevant_accuracy']:.3f}"
            )
        lines.append(
            f"  mean test macro F1 {cv['stance']['mean_test_macro_f1']:.3f}; on all claims: "
            f"{cv['stance']['chosen_on_all']}; current: {cv['stance']['current']}"
        )
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--claims",
        type=Path,
        default=None,
        help="claims file (default: factcheck/claims.jsonl in the evaluation data, $SATURATE_EVAL_DATA)",
    )
    p.add_argument("--limit", type=positive_int, help="only the first N claims")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument(
        "--cv",
        type=non_negative_int,
        default=0,
        metavar="K",
        help="also K-fold cross-validation of the decision rule's values and the heuristic stance's thresholds",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"rules": {"gold-stance/calibrated": {"macro_f1", "f1", "confusion"}, ...}, "stance": {...}, '
        '"targets": {...}}',
    )


def run(args) -> int:
    args.claims = args.claims or eval_data() / "factcheck" / "claims.jsonl"

    try:  # load_claims refuses a missing file, a folder or a device and reads a bounded line at a time
        rows = load_claims(args.claims)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    rows = [r for r in rows if r.get("label") in LABELS]
    if args.limit:
        rows = rows[: args.limit]
    if not rows:
        raise InputError(f"{args.claims}: no labelled claims")
    if args.cv and not 2 <= args.cv <= len(rows):
        raise InputError(f"--cv needs between 2 and {len(rows)} folds (got {args.cv})")
    res, evidence = evaluate(rows, args.seed)
    if args.cv:
        res["cv"] = cross_validate(rows, evidence, args.cv, args.seed)
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(
            f"command: saturate bench verify --claims {args.claims}"
            + (f" --limit {args.limit}" if args.limit else "")
            + (f" --cv {args.cv}" if args.cv else "")
        )
        print(table(res))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        prog="python -m saturate.bench.verify", description=(__doc__ or "").splitlines()[0]
    )
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
