"""Scoring of the saturation monitor: metrics → score → level, the rolling window, the triggers.

See ``monitor.core`` for the metric mapping. WEIGHTS are our assumption (the seed's exact weights
were not available): change them here; they must sum to 1.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from saturate.graph.monitor.harness import MonitorError
from saturate.graph.monitor.store import METRICS

WEIGHTS = {"ceiling": 0.30, "regression": 0.20, "stagnation": 0.25, "proposal": 0.15, "agreement": 0.10}
STAGNATION_DELTA = 0.05  # |recall delta| at or above this counts as real movement (stagnation 0)
LEVELS = (("CRITICAL", 0.85), ("HIGH", 0.70), ("ELEVATED", 0.50))  # below all: NORMAL
WINDOW = 20
MIN_CYCLES = 10
URGENT_CRITICAL_RUN = 5
EXPANSION_HIGH_RUN = 10
REVIEW_AVERAGE = 0.70
TREND_EPSILON = 1e-9


# ---------------------------------------------------------------- scoring


def check_metrics(metrics: dict) -> dict:
    """The five metrics as floats; rates in [0, 1], improvement_delta in [-1, 1] or None."""
    if not isinstance(metrics, dict):
        raise MonitorError(f"metrics must be a dict with {', '.join(METRICS)}")
    unknown, missing = set(metrics) - set(METRICS), [m for m in METRICS if m not in metrics]
    if unknown or missing:
        raise MonitorError(
            f"metrics: missing {missing or 'none'}, unknown {sorted(unknown) or 'none'}; expected {', '.join(METRICS)}"
        )
    out: dict[str, float | None] = {}
    for name in METRICS:
        v = metrics[name]
        if v is None and name == "improvement_delta":
            out[name] = None
            continue
        low = -1.0 if name == "improvement_delta" else 0.0
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not low <= v <= 1.0:
            raise MonitorError(f"metric {name} must be a number in [{low:g}, 1] (got {v!r})")
        out[name] = float(v)
    return out


def components(metrics: dict) -> dict[str, float | None]:
    m = check_metrics(metrics)
    delta = m["improvement_delta"]
    return {
        "ceiling": m["ceiling_rate"],
        "regression": m["regression_pass_rate"],
        "stagnation": None if delta is None else 1.0 - min(1.0, abs(delta) / STAGNATION_DELTA),
        "proposal": m["proposal_pass_rate"],
        "agreement": m["auditor_agreement_rate"],
    }


def saturation_score(metrics: dict) -> float:
    """Weighted sum of the components in [0, 1] (a missing component: the others renormalized)."""
    comps = components(metrics)
    total = sum(WEIGHTS[c] for c, v in comps.items() if v is not None)
    raw = sum(WEIGHTS[c] * v for c, v in comps.items() if v is not None) / total
    return round(min(1.0, max(0.0, raw)), 6)


def level_for(score: float) -> str:
    for name, floor in LEVELS:
        if score >= floor:
            return name
    return "NORMAL"


def regression_pass_rate(recall_now: dict[str, float], recall_previous: dict[str, float] | None) -> float:
    """Share of tasks (present in both cycles) whose recall did not drop; 1.0 without a comparison."""
    common = set(recall_now) & set(recall_previous or {})
    if not common:
        return 1.0
    return sum(recall_now[t] >= recall_previous[t] - 1e-12 for t in common) / len(common)


# ---------------------------------------------------------------- window, detection


def trend(scores: list[float]) -> float:
    """Slope of the least-squares line through (index, score); 0.0 under two points."""
    n = len(scores)
    if n < 2:
        return 0.0
    mx, my = (n - 1) / 2, sum(scores) / n
    return sum((i - mx) * (y - my) for i, y in enumerate(scores)) / sum((i - mx) ** 2 for i in range(n))


@dataclass
class Window:
    size: int
    average: float | None
    slope: float
    consecutive_high: int  # HIGH or CRITICAL, counted back from the latest cycle
    consecutive_critical: int


def rolling_window(levels_scores: list[tuple[str, float]]) -> Window:
    """The window over ``[(level, score), ...]``, oldest first (at most WINDOW are used)."""
    rows = levels_scores[-WINDOW:]
    scores = [s for _, s in rows]

    def run(levels: tuple[str, ...]) -> int:
        n = 0
        for level, _ in reversed(rows):
            if level not in levels:
                break
            n += 1
        return n

    return Window(
        size=len(rows),
        average=round(sum(scores) / len(scores), 6) if scores else None,
        slope=round(trend(scores), 9),
        consecutive_high=run(("HIGH", "CRITICAL")),
        consecutive_critical=run(("CRITICAL",)),
    )


def detect(cycles: int, window: Window) -> str | None:
    """The trigger the window calls for, or None (nothing before MIN_CYCLES cycles)."""
    if cycles < MIN_CYCLES:
        return None
    if window.consecutive_critical >= URGENT_CRITICAL_RUN:
        return "urgent_expansion"
    if window.consecutive_high >= EXPANSION_HIGH_RUN:
        return "expansion"
    if window.average is not None and window.average >= REVIEW_AVERAGE and window.slope > TREND_EPSILON:
        return "review"
    return None


@dataclass
class CycleReport:
    id: int
    ts: float
    harness_version: int | None
    metrics: dict
    components: dict
    score: float
    level: str
    window: Window
    cycles: int
    trigger: str | None  # what the window calls for
    suppressed: bool  # the trigger's kind already has an open expansion
    expansion_id: int | None  # the expansion started by this cycle

    def to_dict(self) -> dict:
        return asdict(self)
