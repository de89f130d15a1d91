"""The saturation document's formulas (``../shared/seeds/003_6319ea3770ccbb60.txt``), function by function.

Each expectation is computed here from the document's own text — its weights, normalisations, trend
rule, level table, ``computeRollingMetrics`` loop and ``check_consistency`` — or is one of its own
example numbers (PART 2.1), plus edge cases at every threshold.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from saturate.monitor.core import (
    CONSISTENCY_THRESHOLDS,
    WEIGHTS,
    WINDOW_SIZE,
    MonitorError,
    build_aggregate,
    check_consistency,
    compute_rolling_metrics,
    compute_saturation_score,
    compute_slope,
    compute_trend_score,
    get_level,
    normalize_signals,
)

# the document's example cycle snapshot (PART 2.1)
EXAMPLE = {
    "benchmark_ceiling_rate": 0.82,
    "regression_pass_rate": 1.0,
    "proposal_pass_rate": 0.88,
    "auditor_unanimous_rate": 0.92,
}
# the document's example aggregate (PART 2.1)
EXAMPLE_AGGREGATE = {
    "window_size": 20,
    "cycles_tracked": 20,
    "oldest_cycle": "cycle-1735400000000",
    "newest_cycle": "cycle-1735600000000",
    "rolling_metrics": {
        "avg_saturation_score": 0.72,
        "saturation_trend": "increasing",
        "consecutive_high_count": 8,
        "consecutive_critical_count": 0,
    },
    "history": [],
    "last_updated": "2025-12-30T15:00:00Z",
}


def doc_score(m: dict, trend: float) -> float:
    """The document's compute_saturation_score, transcribed (the trend score given)."""
    weights = {"ceiling": 0.30, "regression": 0.25, "trend": 0.20, "proposal": 0.15, "auditor": 0.10}
    normalized = {
        "ceiling": min(1.0, m["benchmark_ceiling_rate"] / 0.80),
        "regression": 1.0 if m["regression_pass_rate"] == 1.0 else 0.5,
        "trend": trend,
        "proposal": min(1.0, m["proposal_pass_rate"] / 0.85),
        "auditor": min(1.0, m["auditor_unanimous_rate"] / 0.90),
    }
    return sum(normalized[k] * weights[k] for k in weights)


def aggregate(cycles: int, avg: float, trend: str, high: int, critical: int) -> dict:
    return {
        "cycles_tracked": cycles,
        "rolling_metrics": {
            "avg_saturation_score": avg,
            "saturation_trend": trend,
            "consecutive_high_count": high,
            "consecutive_critical_count": critical,
        },
    }


def history(*levels: str, scores=None) -> list[dict]:
    scores = scores or [0.5] * len(levels)
    return [{"cycle_id": f"cycle-{i}", "score": s, "level": lv} for i, (lv, s) in enumerate(zip(levels, scores))]


# ---------------------------------------------------------------- PART 1.1-1.2: weights, normalisation, score


def test_the_weights_are_the_documents():
    assert WEIGHTS == {
        "benchmark_ceiling_rate": 0.30,
        "regression_pass_rate": 0.25,
        "improvement_delta_trend": 0.20,
        "proposal_pass_rate": 0.15,
        "auditor_unanimous_rate": 0.10,
    }
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)


def test_the_documents_example_cycle():
    """0.82 / 1.0 / 0.88 / 0.92: every signal at or above its target, so those four give 0.80 exactly.

    The document prints 0.78 for this cycle, which its own formula cannot produce (the minimum with these
    four signals is 0.80); its level, HIGH, holds while the trend score is under 0.25."""
    flat = compute_saturation_score({**EXAMPLE, "delta_history": [0.03] * 6})
    assert flat == pytest.approx(0.80) and get_level(flat) == "HIGH"
    assert normalize_signals({**EXAMPLE, "delta_history": []}) == {
        "benchmark_ceiling_rate": 1.0,
        "regression_pass_rate": 1.0,
        "improvement_delta_trend": 0.0,
        "proposal_pass_rate": 1.0,
        "auditor_unanimous_rate": 1.0,
    }
    declining = [0.10, 0.08, 0.06, 0.04, 0.02, 0.0]  # slope -0.02: trend score 0.2
    assert compute_saturation_score({**EXAMPLE, "delta_history": declining}) == pytest.approx(0.80 + 0.20 * 0.2)
    assert get_level(compute_saturation_score({**EXAMPLE, "delta_history": declining})) == "HIGH"
    steep = [0.5, 0.4, 0.3, 0.2, 0.1]  # slope -0.1: trend score 1.0
    assert compute_saturation_score({**EXAMPLE, "delta_history": steep}) == pytest.approx(1.0)
    assert get_level(1.0) == "CRITICAL"


def test_each_normalisation_at_its_edges():
    base = {
        "benchmark_ceiling_rate": 0.0,
        "regression_pass_rate": 0.5,
        "proposal_pass_rate": 0.0,
        "auditor_unanimous_rate": 0.0,
        "delta_history": [],
    }
    cases = [
        ("benchmark_ceiling_rate", 0.40, 0.5),
        ("benchmark_ceiling_rate", 0.80, 1.0),
        ("benchmark_ceiling_rate", 0.95, 1.0),  # capped at 1
        ("regression_pass_rate", 1.0, 1.0),  # exactly 100 %
        ("regression_pass_rate", 0.999, 0.5),  # anything less: 0.5
        ("regression_pass_rate", 0.0, 0.5),  # ... even nothing passing
        ("proposal_pass_rate", 0.425, 0.5),
        ("proposal_pass_rate", 0.85, 1.0),
        ("proposal_pass_rate", 1.0, 1.0),
        ("auditor_unanimous_rate", 0.45, 0.5),
        ("auditor_unanimous_rate", 0.90, 1.0),
        ("auditor_unanimous_rate", 0.99, 1.0),
    ]
    for name, raw, expected in cases:
        assert normalize_signals({**base, name: raw})[name] == pytest.approx(expected), (name, raw)
    # the floor: regression counts 0.5 whatever happens, so no cycle scores under 0.125
    assert compute_saturation_score(base) == pytest.approx(0.25 * 0.5)
    assert compute_saturation_score({**base, "regression_pass_rate": 1.0}) == pytest.approx(0.25)


@given(
    ceiling=st.floats(0, 1),
    regression=st.one_of(st.just(1.0), st.floats(0, 1)),
    proposal=st.floats(0, 1),
    auditor=st.floats(0, 1),
    deltas=st.lists(st.floats(-1, 1), max_size=25),
)
def test_the_score_is_the_documents_weighted_sum(ceiling, regression, proposal, auditor, deltas):
    m = {
        "benchmark_ceiling_rate": ceiling,
        "regression_pass_rate": regression,
        "proposal_pass_rate": proposal,
        "auditor_unanimous_rate": auditor,
        "delta_history": deltas,
    }
    trend = 0.0
    if len(deltas) >= 5:
        slope = np.polyfit(np.arange(len(deltas)), np.array(deltas), 1)[0]
        trend = min(1.0, abs(slope) * 10) if slope < -0.01 else 0.0
    if len(deltas) >= 5 and abs(np.polyfit(np.arange(len(deltas)), np.array(deltas), 1)[0] + 0.01) < 1e-9:
        return  # at the -0.01 edge numpy's and our rounding may disagree; the edge has its own test
    score = compute_saturation_score(m)
    assert score == pytest.approx(doc_score(m, trend), abs=1e-9)
    assert 0.125 - 1e-12 <= score <= 1.0 + 1e-12


def test_bad_metrics_are_refused_with_the_documents_names():
    good = {**EXAMPLE, "delta_history": []}
    for bad, message in [
        ({k: v for k, v in good.items() if k != "delta_history"}, "delta_history is missing"),
        ({k: v for k, v in good.items() if k != "proposal_pass_rate"}, "proposal_pass_rate is missing"),
        ({**good, "benchmark_ceiling_rate": 1.2}, r"benchmark_ceiling_rate must be a number in \[0, 1\]"),
        ({**good, "auditor_unanimous_rate": True}, "auditor_unanimous_rate"),
        ({**good, "delta_history": [0.1, float("nan")]}, "finite"),
        ({**good, "delta_history": 0.1}, "must be a list"),
    ]:
        with pytest.raises(MonitorError, match=message):
            compute_saturation_score(bad)


# ---------------------------------------------------------------- compute_trend_score


def test_trend_score_needs_five_deltas():
    assert compute_trend_score([]) == 0.0
    assert compute_trend_score([0.9, 0.5, 0.1, -0.3]) == 0.0  # steep, but only 4 deltas


def test_trend_score_is_ten_times_a_significant_decline_capped_at_one():
    assert compute_trend_score([0.05, 0.04, 0.03, 0.02, 0.01]) == 0.0  # slope exactly -0.01: not below it
    assert compute_trend_score([0.08, 0.06, 0.04, 0.02, 0.0]) == pytest.approx(0.2)  # slope -0.02
    assert compute_trend_score([0.30, 0.20, 0.10, 0.0, -0.10]) == pytest.approx(1.0)  # slope -0.1
    assert compute_trend_score([1.0, 0.5, 0.0, -0.5, -1.0]) == 1.0  # slope -0.5: capped
    assert compute_trend_score([0.0, 0.01, 0.02, 0.03, 0.04]) == 0.0  # rising
    assert compute_trend_score([0.02] * 8) == 0.0  # stable
    noisy = [0.10, 0.06, 0.08, 0.03, 0.05, 0.0, 0.02]
    slope = np.polyfit(range(len(noisy)), noisy, 1)[0]
    assert slope < -0.01 and compute_trend_score(noisy) == pytest.approx(min(1.0, abs(slope) * 10))


def test_compute_slope_is_least_squares():
    ys = [0.3, 0.1, 0.4, 0.35, 0.2, 0.5]
    assert compute_slope(list(range(6)), ys) == pytest.approx(np.polyfit(range(6), ys, 1)[0])
    assert compute_slope([0], [1.0]) == 0.0 and compute_slope([2, 2], [0.0, 1.0]) == 0.0
    with pytest.raises(MonitorError):
        compute_slope([0, 1], [0.0])


# ---------------------------------------------------------------- PART 1.3: levels


def test_levels_at_the_documents_boundaries():
    cases = {
        0.0: "NORMAL",
        0.4999: "NORMAL",
        0.5: "ELEVATED",
        0.6999: "ELEVATED",
        0.7: "HIGH",
        0.8499: "HIGH",
        0.85: "CRITICAL",
        1.0: "CRITICAL",
    }
    for score, level in cases.items():
        assert get_level(score) == level, score


# ---------------------------------------------------------------- PART 2.3: computeRollingMetrics


def test_rolling_average_and_trend():
    scores = [0.40 + 0.02 * i for i in range(10)]
    rm = compute_rolling_metrics(history(*["ELEVATED"] * 10, scores=scores))
    assert rm["avg_saturation_score"] == pytest.approx(np.mean(scores))
    assert rm["saturation_trend"] == "increasing"  # slope 0.02 > 0.01
    assert set(rm) == {
        "avg_saturation_score",
        "saturation_trend",
        "consecutive_high_count",
        "consecutive_critical_count",
    }
    assert compute_rolling_metrics(history("HIGH", "HIGH", scores=[0.8, 0.795]))["saturation_trend"] == "stable"
    assert compute_rolling_metrics(history("HIGH", "HIGH", scores=[0.8, 0.805]))["saturation_trend"] == "stable"
    assert compute_rolling_metrics(history("HIGH", "HIGH", scores=[0.8, 0.78]))["saturation_trend"] == "decreasing"
    assert compute_rolling_metrics(history("HIGH", scores=[0.8]))["saturation_trend"] == "stable"


@pytest.mark.parametrize(
    "levels,high,critical",
    [
        (["NORMAL", "HIGH", "HIGH", "HIGH"], 3, 0),
        (["HIGH", "CRITICAL", "CRITICAL"], 3, 2),  # the HIGH below a CRITICAL run counts, then the walk stops
        (["HIGH", "HIGH", "CRITICAL"], 2, 1),  # ... so the second HIGH does not
        (["CRITICAL"] * 5 + ["HIGH"], 6, 5),  # a CRITICAL run under the newest HIGH still counts as CRITICAL
        (["CRITICAL", "HIGH", "HIGH"], 3, 1),
        (["CRITICAL", "ELEVATED", "CRITICAL"], 1, 1),
        (["HIGH"] * 12, 12, 0),
        (["HIGH", "HIGH", "NORMAL"], 0, 0),
        (["CRITICAL", "HIGH", "CRITICAL", "HIGH"], 3, 1),
    ],
)
def test_consecutive_counts_follow_the_documents_loop(levels, high, critical):
    rm = compute_rolling_metrics(history(*levels))
    assert (rm["consecutive_high_count"], rm["consecutive_critical_count"]) == (high, critical)


def test_the_aggregate_keeps_the_last_twenty_cycles():
    rows = history(*["HIGH"] * 25, scores=[0.7 + 0.001 * i for i in range(25)])
    agg = build_aggregate(rows, WINDOW_SIZE, "2025-12-30T15:00:00Z")
    assert agg["window_size"] == 20 == agg["cycles_tracked"] == len(agg["history"])
    assert (agg["oldest_cycle"], agg["newest_cycle"]) == ("cycle-5", "cycle-24")
    assert agg["rolling_metrics"]["consecutive_high_count"] == 20  # counted within the window only
    assert agg["rolling_metrics"]["avg_saturation_score"] == pytest.approx(
        np.mean([0.7 + 0.001 * i for i in range(5, 25)])
    )
    assert build_aggregate([])["cycles_tracked"] == 0


# ---------------------------------------------------------------- PART 2.2: check_consistency


def test_the_documents_example_aggregate_is_flagged_for_review():
    assert check_consistency(EXAMPLE_AGGREGATE) == {
        "is_consistent": True,
        "action": "FLAG_FOR_REVIEW",
        "reason": "Rolling avg 0.72 with increasing trend",
        "urgency": "MEDIUM",
    }


def test_consistency_thresholds_and_their_order():
    assert CONSISTENCY_THRESHOLDS == {
        "consecutive_high_for_research": 10,
        "consecutive_critical_for_urgent": 5,
        "rolling_avg_high_threshold": 0.70,
        "minimum_cycles_for_detection": 10,
    }
    # under 10 cycles nothing else is looked at
    assert check_consistency(aggregate(9, 0.95, "increasing", 9, 9)) == {
        "is_consistent": False,
        "action": "CONTINUE",
        "reason": "Insufficient data: 9 cycles",
        "urgency": "LOW",
    }
    # 5 consecutive CRITICAL wins over 10 consecutive HIGH
    urgent = check_consistency(aggregate(10, 0.9, "stable", 10, 5))
    assert urgent == {
        "is_consistent": True,
        "action": "TRIGGER_EXPANSION_RESEARCH",
        "reason": "URGENT: 5 consecutive CRITICAL",
        "urgency": "CRITICAL",
    }
    high = check_consistency(aggregate(20, 0.75, "increasing", 10, 4))
    assert high == {
        "is_consistent": True,
        "action": "TRIGGER_EXPANSION_RESEARCH",
        "reason": "10 consecutive HIGH",
        "urgency": "HIGH",
    }
    # the rolling average, at its threshold, needs an increasing trend
    assert check_consistency(aggregate(10, 0.70, "increasing", 9, 4))["action"] == "FLAG_FOR_REVIEW"
    assert (
        check_consistency(aggregate(10, 0.70, "increasing", 9, 4))["reason"] == "Rolling avg 0.70 with increasing trend"
    )
    for agg in (aggregate(10, 0.6999, "increasing", 9, 4), aggregate(10, 0.9, "stable", 9, 4)):
        assert check_consistency(agg) == {
            "is_consistent": False,
            "action": "CONTINUE",
            "reason": None,
            "urgency": "LOW",
        }
    assert check_consistency(aggregate(10, 0.9, "decreasing", 0, 0))["action"] == "CONTINUE"
