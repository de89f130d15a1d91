"""Scoring of the saturation monitor, as ``003_6319ea3770ccbb60.txt`` specifies it (PART 1 and 2.2).

The document's functions under its names, taking the dict shapes it shows:

- ``compute_saturation_score(metrics)`` — ``metrics`` is ``{"benchmark_ceiling_rate",
  "regression_pass_rate", "delta_history", "proposal_pass_rate", "auditor_unanimous_rate"}``;
  the weighted sum of the normalised signals (``normalize_signals``), in [0, 1];
- ``compute_trend_score(delta_history)`` — 0.0 under 5 deltas; else the least-squares slope of
  the deltas over their index, ``min(1, |slope| x 10)`` when it is below -0.01, else 0.0;
- ``compute_slope(x, y)`` — that slope (the document calls it without defining it: ordinary
  least squares);
- ``get_level(score)`` — NORMAL / ELEVATED / HIGH / CRITICAL;
- ``compute_rolling_metrics(history)`` — the document's ``computeRollingMetrics``: average score,
  trend (slope > 0.01 increasing, < -0.01 decreasing, else stable) and the consecutive HIGH /
  CRITICAL counts, with its loop exactly (see the function);
- ``build_aggregate(history)`` — the rolling-window aggregate (window 20) in the document's shape;
- ``check_consistency(aggregate)`` — CONTINUE / TRIGGER_EXPANSION_RESEARCH / FLAG_FOR_REVIEW with
  the document's thresholds, order, reasons and urgencies.

Where the document is ambiguous, what we chose (also in ``docs/fidelity.md``):

- level boundaries: the table gives ranges 0.0-0.5, 0.5-0.7, 0.7-0.85, 0.85-1.0; a boundary
  belongs to the higher level (0.5 is ELEVATED, 0.85 CRITICAL);
- ``delta_history``: the improvement deltas of the recorded cycles, oldest first, this cycle's
  last, at most ``WINDOW_SIZE`` of them, cycles without a delta (the first) left out; a caller may
  pass its own ``delta_history`` instead;
- the trend of the rolling window (``computeTrend``, not shown) is the same least-squares slope;
- the document's example cycle (PART 2.1: 0.82 / 1.0 / 0.88 / 0.92 → "0.78, HIGH") cannot
  score 0.78 under its own formula: those four signals alone give 0.80 (each is at or above its
  target), so the score is 0.80 + 0.20 x the trend score; HIGH holds for trend scores under 0.25.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from saturate.monitor.harness import MonitorError
from saturate.monitor.store import METRICS  # the per-cycle metrics (the document's cycle snapshot, 2.1)

WEIGHTS = {
    "benchmark_ceiling_rate": 0.30,
    "regression_pass_rate": 0.25,
    "improvement_delta_trend": 0.20,
    "proposal_pass_rate": 0.15,
    "auditor_unanimous_rate": 0.10,
}
CEILING_TARGET = 0.80  # benchmark_ceiling_rate / 0.80, capped at 1
PROPOSAL_TARGET = 0.85  # proposal_pass_rate / 0.85, capped at 1
AUDITOR_TARGET = 0.90  # auditor_unanimous_rate / 0.90, capped at 1
REGRESSION_PARTIAL = 0.5  # regression_pass_rate: 1.0 only at exactly 100 %, else this
TREND_MIN_DELTAS = 5  # fewer deltas: trend score 0
TREND_SLOPE = -0.01  # a slope below this is a significant decline
TREND_SCALE = 10  # trend score = min(1, |slope| x this)
ROLLING_TREND = 0.01  # window slope > this: increasing; < -this: decreasing; else stable
LEVELS = (("CRITICAL", 0.85), ("HIGH", 0.70), ("ELEVATED", 0.50))  # below all: NORMAL
WINDOW_SIZE = 20
CONSISTENCY_THRESHOLDS = {
    "consecutive_high_for_research": 10,  # 10 consecutive HIGH triggers research
    "consecutive_critical_for_urgent": 5,  # 5 consecutive CRITICAL = urgent
    "rolling_avg_high_threshold": 0.70,  # rolling avg >= 0.70 (with a rising trend): review
    "minimum_cycles_for_detection": 10,  # need at least 10 cycles
}
RATES = ("benchmark_ceiling_rate", "regression_pass_rate", "proposal_pass_rate", "auditor_unanimous_rate")
# check_consistency's actions → the expansion kinds the store keeps (by urgency)
EXPANSION_KINDS = {"CRITICAL": "urgent_expansion", "HIGH": "expansion"}


# ---------------------------------------------------------------- PART 1: the score


def _rate(metrics: dict, name: str) -> float:
    if name not in metrics:
        raise MonitorError(f"metrics: {name} is missing; expected {', '.join(WEIGHTS)} (the document's names)")
    v = metrics[name]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0.0 <= v <= 1.0:
        raise MonitorError(f"metric {name} must be a number in [0, 1] (got {v!r})")
    return float(v)


def _deltas(values) -> list[float]:
    if not isinstance(values, (list, tuple)):
        raise MonitorError(f"delta_history must be a list of numbers (got {values!r})")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise MonitorError(f"delta_history holds {v!r}; every delta must be a finite number")
        out.append(float(v))
    return out


def compute_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The least-squares slope of ``y`` over ``x``; 0.0 under two points or when every x is the same."""
    n = len(x)
    if n != len(y):
        raise MonitorError(f"compute_slope: {n} x values but {len(y)} y values")
    if n < 2:
        return 0.0
    mx, my = math.fsum(x) / n, math.fsum(y) / n
    sxx = math.fsum((a - mx) ** 2 for a in x)
    return math.fsum((a - mx) * (b - my) for a, b in zip(x, y)) / sxx if sxx else 0.0


def compute_trend_score(delta_history: Sequence[float]) -> float:
    """1.0 when the deltas decline steeply and consistently (saturated), 0.0 when stable or rising."""
    deltas = _deltas(delta_history)
    if len(deltas) < TREND_MIN_DELTAS:
        return 0.0
    slope = compute_slope(list(range(len(deltas))), deltas)
    if slope < TREND_SLOPE:  # negative slope = declining deltas = saturation
        return min(1.0, abs(slope) * TREND_SCALE)
    return 0.0


def normalize_signals(metrics: dict) -> dict[str, float]:
    """Each signal normalised to [0, 1] as the document does (its ``normalized`` dict)."""
    if not isinstance(metrics, dict):
        raise MonitorError(f"metrics must be a dict with {', '.join(WEIGHTS)}")
    if "delta_history" not in metrics:
        raise MonitorError("metrics: delta_history is missing (the improvement deltas of the past cycles, a list)")
    rates = {name: _rate(metrics, name) for name in RATES}
    return {
        "benchmark_ceiling_rate": min(1.0, rates["benchmark_ceiling_rate"] / CEILING_TARGET),
        "regression_pass_rate": 1.0 if rates["regression_pass_rate"] == 1.0 else REGRESSION_PARTIAL,
        "improvement_delta_trend": compute_trend_score(metrics["delta_history"]),
        "proposal_pass_rate": min(1.0, rates["proposal_pass_rate"] / PROPOSAL_TARGET),
        "auditor_unanimous_rate": min(1.0, rates["auditor_unanimous_rate"] / AUDITOR_TARGET),
    }


def compute_saturation_score(metrics: dict) -> float:
    """The overall saturation score in [0, 1]; higher = more saturated = the harness may need expansion."""
    normalized = normalize_signals(metrics)
    return sum(normalized[k] * WEIGHTS[k] for k in WEIGHTS)


def get_level(score: float) -> str:
    """NORMAL [0, 0.5), ELEVATED [0.5, 0.7), HIGH [0.7, 0.85), CRITICAL [0.85, 1]."""
    for name, floor in LEVELS:
        if score >= floor:
            return name
    return "NORMAL"


def check_metrics(metrics: dict) -> dict:
    """A cycle's metrics (``METRICS``; ``improvement_delta`` in [-1, 1] or None on a first cycle; an optional
    ``delta_history`` list) validated and copied; unknown names are refused."""
    if not isinstance(metrics, dict):
        raise MonitorError(f"metrics must be a dict with {', '.join(METRICS)}")
    allowed = set(METRICS) | {"delta_history"}
    unknown, missing = set(metrics) - allowed, [m for m in METRICS if m not in metrics]
    if unknown or missing:
        raise MonitorError(
            f"metrics: missing {missing or 'none'}, unknown {sorted(unknown) or 'none'}; expected {', '.join(METRICS)}"
            " (and optionally delta_history)"
        )
    out: dict = {name: _rate(metrics, name) for name in RATES}
    delta = metrics["improvement_delta"]
    if delta is not None and (
        isinstance(delta, bool) or not isinstance(delta, (int, float)) or not math.isfinite(delta) or abs(delta) > 1
    ):
        raise MonitorError(f"metric improvement_delta must be a number in [-1, 1] or null (got {delta!r})")
    out["improvement_delta"] = None if delta is None else float(delta)
    if "delta_history" in metrics:
        out["delta_history"] = _deltas(metrics["delta_history"])
    return {k: out[k] for k in (*METRICS, "delta_history") if k in out}


def regression_pass_rate(recall_now: dict[str, float], recall_previous: dict[str, float] | None) -> float:
    """Share of tasks (present in both cycles) whose recall did not drop; 1.0 without a comparison."""
    previous = recall_previous or {}
    common = set(recall_now) & set(previous)
    if not common:
        return 1.0
    return sum(recall_now[t] >= previous[t] - 1e-12 for t in common) / len(common)


# ---------------------------------------------------------------- PART 2: the rolling window, consistency


def compute_trend(scores: Sequence[float]) -> float:
    """The window's trend: the least-squares slope of the scores over their index."""
    return compute_slope(list(range(len(scores))), list(scores))


def compute_rolling_metrics(history: list[dict]) -> dict:
    """The document's ``computeRollingMetrics`` over ``[{"cycle_id", "score", "level"}, ...]`` (oldest first).

    The consecutive counts walk back from the newest cycle exactly as its loop does: a CRITICAL adds
    to both counts; a HIGH adds to the HIGH count and, once a CRITICAL has been counted, ends the walk
    after itself; anything else ends it. So "HIGH, CRITICAL, CRITICAL" (newest last) counts 3 HIGH and
    2 CRITICAL, "HIGH, HIGH, CRITICAL" 2 and 1, and "CRITICAL x5, HIGH" 6 and 5.
    """
    if not history:
        raise MonitorError("compute_rolling_metrics needs at least one cycle in the history")
    scores = [float(h["score"]) for h in history]
    levels = [h["level"] for h in history]
    avg_score = math.fsum(scores) / len(scores)
    trend = compute_trend(scores)
    consecutive_high = 0
    consecutive_critical = 0
    for level in reversed(levels):
        if level == "CRITICAL":
            consecutive_critical += 1
            consecutive_high += 1
        elif level == "HIGH":
            consecutive_high += 1
            if consecutive_critical > 0:
                break  # only count consecutive
        else:
            break
    return {
        "avg_saturation_score": avg_score,
        "saturation_trend": "increasing"
        if trend > ROLLING_TREND
        else ("decreasing" if trend < -ROLLING_TREND else "stable"),
        "consecutive_high_count": consecutive_high,
        "consecutive_critical_count": consecutive_critical,
    }


def build_aggregate(history: list[dict], window_size: int = WINDOW_SIZE, last_updated: str | None = None) -> dict:
    """The rolling-window aggregate in the document's shape from the cycles so far (oldest first)."""
    window = [{"cycle_id": h["cycle_id"], "score": h["score"], "level": h["level"]} for h in history[-window_size:]]
    return {
        "window_size": window_size,
        "cycles_tracked": len(window),
        "oldest_cycle": window[0]["cycle_id"] if window else None,
        "newest_cycle": window[-1]["cycle_id"] if window else None,
        "rolling_metrics": compute_rolling_metrics(window) if window else None,
        "history": window,
        "last_updated": last_updated,
    }


def check_consistency(aggregate: dict) -> dict:
    """Whether saturation is consistent enough to act: the document's rules, first match wins."""
    t = CONSISTENCY_THRESHOLDS
    result = {"is_consistent": False, "action": "CONTINUE", "reason": None, "urgency": "LOW"}
    if aggregate["cycles_tracked"] < t["minimum_cycles_for_detection"]:
        result["reason"] = f"Insufficient data: {aggregate['cycles_tracked']} cycles"
        return result
    rolling = aggregate["rolling_metrics"]
    if rolling["consecutive_critical_count"] >= t["consecutive_critical_for_urgent"]:
        result.update(
            is_consistent=True,
            action="TRIGGER_EXPANSION_RESEARCH",
            reason=f"URGENT: {rolling['consecutive_critical_count']} consecutive CRITICAL",
            urgency="CRITICAL",
        )
        return result
    if rolling["consecutive_high_count"] >= t["consecutive_high_for_research"]:
        result.update(
            is_consistent=True,
            action="TRIGGER_EXPANSION_RESEARCH",
            reason=f"{rolling['consecutive_high_count']} consecutive HIGH",
            urgency="HIGH",
        )
        return result
    if rolling["avg_saturation_score"] >= t["rolling_avg_high_threshold"]:
        if rolling["saturation_trend"] == "increasing":
            result.update(
                is_consistent=True,
                action="FLAG_FOR_REVIEW",
                reason=f"Rolling avg {rolling['avg_saturation_score']:.2f} with increasing trend",
                urgency="MEDIUM",
            )
            return result
    return result


def expansion_kind(consistency: dict) -> str | None:
    """The expansion a consistency result starts (``urgent_expansion`` / ``expansion``), or None."""
    if consistency["action"] != "TRIGGER_EXPANSION_RESEARCH":
        return None
    return EXPANSION_KINDS[consistency["urgency"]]


@dataclass
class CycleReport:
    id: int
    cycle_id: str  # the document's "cycle-…" id: "cycle-<row id>"
    ts: float
    harness_version: int | None
    metrics: dict  # as recorded, plus the delta_history the score used
    normalized: dict  # the five normalised signals
    score: float
    level: str
    aggregate: dict  # the rolling window, the document's shape
    consistency: dict  # check_consistency(aggregate)
    suppressed: bool  # the consistency result calls for an expansion of a kind that is already open
    expansion_id: int | None  # the expansion started by this cycle

    @property
    def action(self) -> str:
        return self.consistency["action"]

    def to_dict(self) -> dict:
        return asdict(self)
