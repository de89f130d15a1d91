"""The saturation monitor on a real SQLite file, with an injected clock.

A stub research function stands in for the agent only where the expansion trigger is the point;
``test_default_research_runs_the_agent_offline`` runs the real ``graph.api.research`` on the
embedded corpus.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3

import numpy as np
import pytest

from saturate.cli.monitor import add_arguments, run
from saturate.monitor.core import (
    EXPANSION_TASK,
    Monitor,
    MonitorError,
    RatchetError,
    check_ratchet,
    compute_saturation_score,
    get_level,
    regression_pass_rate,
)

T0 = 1_750_000_000.0  # a fixed epoch; every call gets an explicit or clock time
DAY = 86400.0


class Clock:
    def __init__(self, t: float = T0):
        self.t = t

    def __call__(self) -> float:
        self.t += 3600  # one hour per reading: every cycle gets its own timestamp
        return self.t


class StubResearch:
    def __init__(self, fail: bool = False):
        self.calls: list[tuple[str, str]] = []
        self.fail = fail

    def __call__(self, task: str, thread_id: str) -> dict:
        self.calls.append((task, thread_id))
        if self.fail:
            raise RuntimeError("search backend down")
        return {
            "answer": "Add harder multi-hop questions [1].",
            "sources": [{"n": 1, "title": "MuSiQue", "url": "local://x/1"}],
        }


STEEP = [1.0, 0.8, 0.6, 0.4, 0.2]  # slope -0.2: trend score 1.0
FLAT: list[float] = []  # trend score 0.0


def metrics_at(score: float) -> dict:
    """Metrics whose saturation score (the document's formula) is ``score``, for scores in [0.125, 1]:
    ceiling, proposals and auditors at the same normalised value v; regression 1.0 or 0.5; trend 1.0 or 0."""
    if score <= 0.675:
        regression, deltas, v = 0.9, FLAT, (score - 0.125) / 0.55
    elif score <= 0.80:
        regression, deltas, v = 1.0, FLAT, (score - 0.25) / 0.55
    else:
        regression, deltas, v = 1.0, STEEP, (score - 0.45) / 0.55
    return {
        "benchmark_ceiling_rate": 0.80 * v,
        "regression_pass_rate": regression,
        "improvement_delta": 0.0,
        "proposal_pass_rate": 0.85 * v,
        "auditor_unanimous_rate": 0.90 * v,
        "delta_history": deltas,
    }


@pytest.fixture
def tasks_file(tmp_path):
    path = tmp_path / "tasks.jsonl"
    rows = [{"id": t, "question": f"question {t}?", "answers": ["x"], "gold_ids": [f"g{t}"], "hops": 2} for t in "abcd"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def config(tasks_file):
    return {
        "thresholds": {"musique.recall": 0.6, "hotpotqa.recall": 0.8},
        "benchmarks": [{"name": "musique", "tasks": str(tasks_file), "corpus": "corpus.jsonl", "enabled": True}],
    }


SNAPSHOT = {
    "tasks": [
        {"id": "a", "benchmark": "musique", "recall": 1.0, "policy": "saturate"},
        {"id": "b", "benchmark": "musique", "recall": 0.5, "policy": "saturate"},
        {"id": "b", "benchmark": "musique", "recall": 1.0, "policy": "fixed"},  # other policies don't count
        {"id": "c", "benchmark": "musique", "recall": 1.0, "policy": "saturate"},
        {"id": "d", "benchmark": "musique", "recall": 0.0, "policy": "saturate"},
    ],
    "targets": {"musique.recall": True, "hotpotqa.recall": {"met": False, "value": 0.7}},
}


@pytest.fixture
def mon(tmp_path, config):
    m = Monitor(tmp_path / "data" / "monitor.db", clock=Clock())
    m.init_harness(config)
    yield m
    m.close()


def feed(mon: Monitor, scores, research=None, **kw):
    return [mon.record_cycle(metrics_at(s), SNAPSHOT, research_fn=research, **kw) for s in scores]


def db(mon: Monitor) -> sqlite3.Connection:
    return sqlite3.connect(mon.store.path)


# ---------------------------------------------------------------- score, level, delta history


def test_a_cycle_is_scored_with_the_documents_formula(mon):
    for score in (0.2, 0.55, 0.72, 0.9):
        m = metrics_at(score)
        assert compute_saturation_score(m) == pytest.approx(score)
        report = mon.record_cycle(m, SNAPSHOT, expand=False)
        assert report.score == pytest.approx(score) and report.level == get_level(score)
    assert report.normalized["improvement_delta_trend"] == 1.0 and report.cycle_id == f"cycle-{report.id}"
    with pytest.raises(MonitorError, match="missing"):
        mon.record_cycle({"benchmark_ceiling_rate": 1.0}, SNAPSHOT)
    with pytest.raises(MonitorError, match="improvement_delta"):
        mon.record_cycle({**metrics_at(0.5), "improvement_delta": 2.0}, SNAPSHOT)


def test_the_delta_history_is_built_from_the_stored_deltas(mon):
    """Without a delta_history the monitor uses the recorded improvement deltas: declining ones raise the score."""
    base = {
        "benchmark_ceiling_rate": 0.80,
        "regression_pass_rate": 1.0,
        "proposal_pass_rate": 0.85,
        "auditor_unanimous_rate": 0.90,
    }
    deltas = [None, 0.10, 0.08, 0.06, 0.04, 0.02]  # the first cycle has no previous one
    reports = [mon.record_cycle({**base, "improvement_delta": d}, SNAPSHOT, expand=False) for d in deltas]
    assert [r.metrics["delta_history"] for r in reports[:2]] == [[], [0.10]]
    assert reports[-1].metrics["delta_history"] == [0.10, 0.08, 0.06, 0.04, 0.02]
    assert [r.normalized["improvement_delta_trend"] for r in reports[:5]] == [0.0] * 5  # under 5 deltas
    assert reports[-1].normalized["improvement_delta_trend"] == pytest.approx(0.2)  # slope -0.02 x 10
    assert reports[-1].score == pytest.approx(0.80 + 0.20 * 0.2) and reports[-1].level == "HIGH"
    with db(mon) as c:
        stored = [r[0] for r in c.execute("SELECT improvement_delta FROM aggregates ORDER BY id")]
    assert stored == deltas


def test_regression_pass_rate_on_the_same_task_set():
    assert regression_pass_rate({"a": 1.0, "b": 0.5}, None) == 1.0
    assert regression_pass_rate({"a": 1.0, "b": 0.5, "c": 0.0}, {"a": 1.0, "b": 1.0, "z": 1.0}) == 0.5


# ---------------------------------------------------------------- rolling window


def test_the_aggregate_over_a_synthetic_series(mon):
    scores = [round(0.30 + 0.02 * i, 4) for i in range(25)]  # 0.30 ... 0.78
    reports = feed(mon, scores, expand=False)
    agg = reports[-1].aggregate
    assert [r.id for r in reports] == list(range(1, 26))
    assert agg["cycles_tracked"] == 20 and (agg["oldest_cycle"], agg["newest_cycle"]) == ("cycle-6", "cycle-25")
    rm = agg["rolling_metrics"]
    assert rm["avg_saturation_score"] == pytest.approx(np.mean(scores[-20:]))
    assert rm["saturation_trend"] == "increasing"  # slope 0.02 > 0.01
    assert [h["level"] for h in agg["history"][-5:]] == ["ELEVATED", "HIGH", "HIGH", "HIGH", "HIGH"]  # 0.70 - eps
    assert (rm["consecutive_high_count"], rm["consecutive_critical_count"]) == (4, 0)
    flat = feed(mon, [0.2] * 20, expand=False)[-1].aggregate["rolling_metrics"]
    assert flat["saturation_trend"] == "stable" and flat["avg_saturation_score"] == pytest.approx(0.2)
    assert flat["consecutive_high_count"] == 0


# ---------------------------------------------------------------- consistency detection


def test_no_trigger_before_ten_cycles(mon):
    research = StubResearch()
    reports = feed(mon, [0.95] * 9, research)
    assert all(r.action == "CONTINUE" and r.expansion_id is None for r in reports)
    assert reports[-1].consistency["reason"] == "Insufficient data: 9 cycles"
    assert reports[-1].aggregate["rolling_metrics"]["consecutive_critical_count"] == 9
    assert mon.status()["pending_expansions"] == [] and research.calls == []
    tenth = feed(mon, [0.95], research)[0]
    assert tenth.consistency["urgency"] == "CRITICAL" and tenth.expansion_id == 1


def test_five_critical_start_an_urgent_expansion_pending_with_proposals(mon, tasks_file):
    research = StubResearch()
    reports = feed(mon, [0.3] * 5 + [0.9] * 5, research)
    assert [r.action for r in reports[:9]] == ["CONTINUE"] * 9
    report = reports[-1]
    assert report.level == "CRITICAL" and report.aggregate["rolling_metrics"]["consecutive_critical_count"] == 5
    assert report.consistency == {
        "is_consistent": True,
        "action": "TRIGGER_EXPANSION_RESEARCH",
        "reason": "URGENT: 5 consecutive CRITICAL",
        "urgency": "CRITICAL",
    }
    assert not report.suppressed

    exp = mon.expansion(report.expansion_id)
    assert (exp["kind"], exp["status"], exp["cycle_id"]) == ("urgent_expansion", "pending", 10)
    assert (exp["trigger_reason"], exp["urgency"]) == ("URGENT: 5 consecutive CRITICAL", "CRITICAL")
    assert exp["score_at_trigger"] == pytest.approx(0.6)  # the rolling average, as the document stores it
    assert research.calls == [(EXPANSION_TASK, exp["thread_id"])]
    assert exp["thread_id"].startswith(f"monitor-expansion-{exp['id']}-")
    assert exp["answer"] == "Add harder multi-hop questions [1]." and exp["sources"][0]["title"] == "MuSiQue"
    assert exp["research_error"] is None

    raised = [p for p in exp["proposals"] if p["kind"] == "raise_threshold"]
    assert raised == [
        {"kind": "raise_threshold", "name": "musique.recall", "from": 0.6, "to": 0.7}
    ]  # hotpotqa unmet: kept
    [added] = [p["benchmark"] for p in exp["proposals"] if p["kind"] == "add_benchmark"]
    assert added["name"] == "musique-hard-e1" and added["enabled"] is False and added["corpus"] == "corpus.jsonl"
    hard = [json.loads(line)["id"] for line in open(added["tasks"])]
    assert hard == ["b", "d"]  # the tasks below full recall under the saturate policy, as full task records
    assert added["tasks"].startswith(str(mon.home / "monitor" / "benchmarks"))
    assert [e["id"] for e in mon.status()["pending_expansions"]] == [exp["id"]]


def test_ten_high_cycles_start_an_expansion(mon):
    reports = feed(mon, [0.75] * 10, StubResearch())
    assert [r.action for r in reports] == ["CONTINUE"] * 9 + ["TRIGGER_EXPANSION_RESEARCH"]
    last = reports[-1]
    assert last.consistency["reason"] == "10 consecutive HIGH" and last.consistency["urgency"] == "HIGH"
    assert last.aggregate["rolling_metrics"]["saturation_trend"] == "stable"
    assert mon.expansion(last.expansion_id)["kind"] == "expansion"


def test_a_rising_average_at_or_above_070_is_flagged_for_review_without_research(mon):
    research = StubResearch()
    scores = [0.40, 0.70, 0.72, 0.74, 0.76, 0.78, 0.80, 0.82, 0.84, 0.86]
    last = feed(mon, scores, research)[-1]
    rm = last.aggregate["rolling_metrics"]
    assert rm["avg_saturation_score"] == pytest.approx(0.742) and rm["saturation_trend"] == "increasing"
    # the document's loop: the newest CRITICAL counts in both, the HIGH below it ends the walk after itself
    assert (rm["consecutive_high_count"], rm["consecutive_critical_count"]) == (2, 1)
    assert last.consistency == {
        "is_consistent": True,
        "action": "FLAG_FOR_REVIEW",
        "reason": "Rolling avg 0.74 with increasing trend",
        "urgency": "MEDIUM",
    }
    # the document notifies the human; only TRIGGER_EXPANSION_RESEARCH spawns research
    assert last.expansion_id is None and research.calls == [] and mon.status()["pending_expansions"] == []
    assert mon.status()["consistency"]["action"] == "FLAG_FOR_REVIEW"
    with db(mon) as c:
        row = c.execute("SELECT action, reason, urgency FROM aggregates WHERE id = 10").fetchone()
    assert row == ("FLAG_FOR_REVIEW", "Rolling avg 0.74 with increasing trend", "MEDIUM")
    falling = [0.84, 0.82, 0.80, 0.78, 0.76, 0.74, 0.72, 0.70, 0.68, 0.66]
    with Monitor(mon.store.path.with_name("other.db"), clock=Clock()) as other:
        last = feed(other, falling, StubResearch())[-1]
    assert last.aggregate["rolling_metrics"]["avg_saturation_score"] == pytest.approx(0.75)
    assert last.action == "CONTINUE"  # decreasing: no review


def test_no_duplicate_trigger_while_an_expansion_is_open(mon):
    research = StubResearch()
    feed(mon, [0.9] * 10, research)
    again = feed(mon, [0.9] * 3, research)
    assert all(r.consistency["urgency"] == "CRITICAL" and r.suppressed and r.expansion_id is None for r in again)
    mon.approve(1, "alice")  # approved but not applied is still open
    assert feed(mon, [0.9], research)[0].suppressed
    mon.reject(1, "alice")
    fresh = feed(mon, [0.9], research)[0]
    assert fresh.expansion_id == 2 and not fresh.suppressed
    assert len(research.calls) == 2 and [e["id"] for e in mon.status()["pending_expansions"]] == [2]


def test_a_failed_research_session_is_recorded_and_the_proposals_kept(mon):
    feed(mon, [0.5], expand=False)
    exp = mon.start_expansion("expansion", StubResearch(fail=True))
    assert exp["status"] == "pending" and "search backend down" in exp["research_error"]
    assert exp["answer"] == "" and exp["proposals"]
    assert (exp["urgency"], exp["trigger_reason"]) == ("HIGH", "started by hand (expansion)")
    with pytest.raises(MonitorError, match="unknown expansion kind 'review'"):
        mon.start_expansion("review", StubResearch())  # a review is a flag, not an expansion


# ---------------------------------------------------------------- approval, ratchet, apply


def _pending(mon) -> dict:
    feed(mon, [0.5], expand=False)
    return mon.start_expansion("urgent_expansion", StubResearch())


def test_apply_refuses_without_approval(mon, config):
    exp = _pending(mon)
    with pytest.raises(MonitorError, match=f"pending, not approved.*--approve {exp['id']}"):
        mon.apply(exp["id"])
    with pytest.raises(MonitorError, match="--by NAME"):
        mon.approve(exp["id"], "  ")
    mon.reject(exp["id"], "bob")
    with pytest.raises(MonitorError, match="rejected, not approved"):
        mon.apply(exp["id"])
    with pytest.raises(MonitorError, match="only a pending one can be approved"):
        mon.approve(exp["id"], "bob")
    assert mon.harness()["version"] == 1 and mon.harness()["config"] == config
    with pytest.raises(MonitorError, match="no expansion 99"):
        mon.apply(99)


def test_the_ratchet_refuses_lowering_and_removing_and_changes_nothing(mon, config):
    exp = _pending(mon)
    lower = [
        {"kind": "raise_threshold", "name": "musique.recall", "from": 0.6, "to": 0.7},
        {"kind": "raise_threshold", "name": "hotpotqa.recall", "from": 0.8, "to": 0.5},
    ]
    with pytest.raises(RatchetError, match="hotpotqa.recall.*one-way ratchet"):
        mon.approve(exp["id"], "alice", proposals=lower)  # an amended list is checked on approval
    assert mon.expansion(exp["id"])["status"] == "pending"

    mon.approve(exp["id"], "alice")
    refused = {
        "lower": (lower, "thresholds may only be raised"),
        "remove": ([{"kind": "remove_benchmark", "name": "musique"}], "one-way ratchet"),
        "replace": (
            [{"kind": "add_benchmark", "benchmark": {**config["benchmarks"][0], "tasks": "easy.jsonl"}}],
            "already exists",
        ),
        "unknown threshold": (
            [{"kind": "raise_threshold", "name": "new.recall", "from": None, "to": 0.9}],
            "unknown threshold",
        ),
    }
    for what, (proposals, message) in refused.items():
        with db(mon) as c:  # tampered after approval: apply checks again
            c.execute("UPDATE expansions SET proposals = ? WHERE id = ?", (json.dumps(proposals), exp["id"]))
        with pytest.raises(RatchetError, match=message):
            mon.apply(exp["id"])
        assert mon.harness()["version"] == 1 and mon.harness()["config"] == config, what
        assert [v["version"] for v in mon.store.versions()] == [1]
        assert mon.expansion(exp["id"])["status"] == "approved"

    # the single check, directly
    bench = config["benchmarks"][0]
    check_ratchet(
        config,
        {
            **config,
            "thresholds": {"musique.recall": 0.7, "hotpotqa.recall": 0.8},
            "benchmarks": [bench, {**bench, "name": "x", "enabled": False}],
        },
    )
    for new, message in [
        ({**config, "benchmarks": []}, "'musique' would be removed"),
        ({**config, "benchmarks": [{**bench, "enabled": False}]}, "would be disabled"),
        ({**config, "benchmarks": [{**bench, "corpus": "other.jsonl"}]}, "would be changed"),
        ({**config, "thresholds": {"musique.recall": 0.6}}, "'hotpotqa.recall' would be removed"),
        ({**config, "thresholds": {**config["thresholds"], "extra": 0.1}}, "would be added"),
        ({**config, "thresholds": {**config["thresholds"], "musique.recall": 0.59}}, "lowered from 0.6 to 0.59"),
    ]:
        with pytest.raises(RatchetError, match=message):
            check_ratchet(config, new)


def test_apply_archives_and_adds_new_benchmarks_disabled(mon, config):
    exp = _pending(mon)
    mon.approve(exp["id"], "alice")
    v2 = mon.apply(exp["id"])
    v1 = mon.store.version(1)
    assert v1["archived"] and v1["config"] == config  # archived first, config kept
    assert mon.harness()["version"] == 2 == v2["version"] and v2["parent"] == 1 and not v2["archived"]
    assert v2["config"]["thresholds"] == {"musique.recall": 0.7, "hotpotqa.recall": 0.8}
    assert [(b["name"], b["enabled"]) for b in v2["config"]["benchmarks"]] == [
        ("musique", True),
        ("musique-hard-e1", False),
    ]
    assert v2["new_checks"] == {"thresholds": ["musique.recall"], "benchmarks": ["musique-hard-e1"]}
    done = mon.expansion(exp["id"])
    assert (done["status"], done["applied_version"], done["approved_by"]) == ("applied", 2, "alice")
    with pytest.raises(MonitorError, match="applied, not approved"):
        mon.apply(exp["id"])


def _applied_with_two_new_benchmarks(mon, config) -> dict:
    exp = _pending(mon)
    bench = config["benchmarks"][0]
    proposals = [
        {"kind": "raise_threshold", "name": "musique.recall", "from": 0.6, "to": 0.7},
        {"kind": "add_benchmark", "benchmark": {**bench, "name": "new1", "enabled": False}},
        {"kind": "add_benchmark", "benchmark": {**bench, "name": "new2", "enabled": True}},
    ]  # forced disabled
    mon.approve(exp["id"], "alice", proposals=proposals)
    return mon.apply(exp["id"])


def _enabled(mon) -> dict[str, bool]:
    return {b["name"]: b["enabled"] for b in mon.harness()["config"]["benchmarks"]}


def test_enable_next_enables_exactly_one_per_cycle(mon, config):
    _applied_with_two_new_benchmarks(mon, config)
    assert _enabled(mon) == {"musique": True, "new1": False, "new2": False}
    assert mon.enable_next_benchmark() == "new1"
    assert _enabled(mon) == {"musique": True, "new1": True, "new2": False}
    assert mon.enable_next_benchmark() is None  # already one this cycle
    feed(mon, [0.5], expand=False)
    assert mon.enable_next_benchmark() == "new2"
    feed(mon, [0.5], expand=False)
    assert mon.enable_next_benchmark() is None  # nothing left
    assert all(_enabled(mon).values())


def test_rollback_only_when_more_than_half_of_the_new_checks_fail(mon, config):
    v2 = _applied_with_two_new_benchmarks(mon, config)
    assert mon.check_new({"musique.recall": True})["action"] == "ok"  # new benchmarks not enabled yet: not checked
    mon.enable_next_benchmark()
    half = mon.check_new({"musique.recall": True, "new1": False, "unrelated": False})
    assert half["action"] == "ok" and half["failed"] == ["new1"] and half["checked"] == ["musique.recall", "new1"]
    assert mon.harness()["version"] == v2["version"]  # exactly half failed: stays

    feed(mon, [0.5], expand=False)
    mon.enable_next_benchmark()
    out = mon.check_new({"musique.recall": True, "new1": False, "new2": False})
    assert out["action"] == "rolled_back" and out["current_version"] == 1 and out["failed"] == ["new1", "new2"]
    assert mon.harness()["version"] == 1 and mon.harness()["config"] == config
    failed = mon.store.version(2)
    assert failed["archived"] and failed["flagged_for_review"] and "failed 2 of 3 new checks" in failed["note"]
    assert mon.expansion(v2["expansion_id"])["status"] == "rolled_back"
    assert mon.status()["flagged_versions"][0]["version"] == 2
    assert mon.check_new({"new1": False})["action"] == "none"  # version 1 has nothing new


def test_a_version_settles_once_every_new_benchmark_passed(mon, config):
    _applied_with_two_new_benchmarks(mon, config)
    for _ in range(2):
        mon.enable_next_benchmark()
        feed(mon, [0.5], expand=False)
    assert mon.check_new({"musique.recall": True, "new1": True, "new2": False})["action"] == "settled"
    assert mon.check_new({"musique.recall": False, "new1": False, "new2": False})["action"] == "none"
    assert mon.harness()["version"] == 2 and mon.status()["harness"]["settled"]


# ---------------------------------------------------------------- retention


def test_retention_prunes_old_snapshots_but_keeps_aggregates_and_expansions(tmp_path, config):
    mon = Monitor(tmp_path / "monitor.db")
    mon.init_harness(config, now=T0)
    mon.record_cycle(metrics_at(0.5), {"n": 1}, now=T0, expand=False)
    mon.record_cycle(metrics_at(0.5), {"n": 2}, now=T0 + 50 * DAY, expand=False)
    mon.start_expansion("expansion", StubResearch(), now=T0 + 50 * DAY)
    assert mon.prune(now=T0 + 89 * DAY) == 0
    assert mon.prune(now=T0 + 100 * DAY) == 1
    with db(mon) as c:
        assert [r[0] for r in c.execute("SELECT id FROM cycles")] == [2]
        assert [r[0] for r in c.execute("SELECT id FROM aggregates")] == [1, 2]
    # record_cycle prunes as it goes; the window still sees every cycle through the aggregates
    report = mon.record_cycle(metrics_at(0.6), {"n": 3}, now=T0 + 200 * DAY, expand=False)
    with db(mon) as c:
        assert [r[0] for r in c.execute("SELECT id FROM cycles")] == [3]
        assert c.execute("SELECT COUNT(*) FROM aggregates").fetchone()[0] == 3
        assert c.execute("SELECT improvement_delta FROM aggregates WHERE id = 1").fetchone()[0] == 0.0
    assert report.aggregate["cycles_tracked"] == 3 and mon.expansion(1)["kind"] == "expansion"
    assert mon.last_snapshot() == {"n": 3}
    mon.close()


# ---------------------------------------------------------------- CLI


def _cli(home, *argv) -> int:
    parser = argparse.ArgumentParser(prog="saturate monitor")
    parser.add_argument("--home")
    add_arguments(parser)
    return run(parser.parse_args(["--home", str(home), *argv]))


def test_cli_prints_the_level_and_pending_expansions(tmp_path, config, capsys):
    home = tmp_path / "home"
    assert _cli(home) == 0
    assert "level: none yet" in capsys.readouterr().out

    with Monitor(home=home, clock=Clock()) as mon:
        mon.init_harness(config)
        feed(mon, [0.3] * 5 + [0.9] * 5, StubResearch())
    assert _cli(home) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("level: CRITICAL (score 0.900, cycle 10")
    assert out[1].startswith("trend: increasing, slope +") and "rolling average 0.600 over the last 10 cycles" in out[1]
    assert "consecutive: 5 HIGH, 5 CRITICAL" in out[2]
    assert out[3] == "consistency: TRIGGER_EXPANSION_RESEARCH (urgency CRITICAL): URGENT: 5 consecutive CRITICAL"
    assert "harness: version 1, 2 thresholds, 1 benchmarks enabled, 0 disabled" in out
    assert any(
        line.startswith("pending expansion 1: urgent_expansion (URGENT: 5 consecutive CRITICAL), pending since")
        and "2 proposals" in line
        for line in out
    )

    assert _cli(home, "--show", "1") == 0
    shown = capsys.readouterr().out
    assert "(URGENT: 5 consecutive CRITICAL, urgency CRITICAL, rolling average 0.60)" in shown.splitlines()[0]
    assert (
        "proposal 1: raise threshold musique.recall from 0.6 to 0.7" in shown
        and "add benchmark musique-hard-e1" in shown
    )

    assert _cli(home, "--apply", "1") == 2
    assert "approve it first" in capsys.readouterr().err
    assert _cli(home, "--approve", "1") == 2
    assert "--approve needs --by NAME" in capsys.readouterr().err
    assert _cli(home, "--approve", "1", "--by", "alice") == 0
    assert "expansion 1: approved by alice" in capsys.readouterr().out
    assert _cli(home, "--apply", "1") == 0
    assert "applied as harness version 2 (version 1 archived)" in capsys.readouterr().out

    assert _cli(home, "--json") == 0
    status = json.loads(capsys.readouterr().out)
    assert status["level"] == "CRITICAL" and status["harness"]["version"] == 2 and status["pending_expansions"] == []
    assert status["harness"]["disabled"] == ["musique-hard-e1"]
    assert _cli(home, "--prune") == 0  # the real clock: the test's cycles may be older than 90 days
    assert re.fullmatch(r"pruned \d+ cycle snapshot\(s\) older than 90 days\n", capsys.readouterr().out)


# ---------------------------------------------------------------- the real agent


def test_default_research_runs_the_agent_offline(home, config):
    """No stub: the expansion's research is a real session on the embedded corpus, in SATURATE_HOME."""
    from saturate.graph.api import session_state

    with Monitor() as mon:  # the data directory from SATURATE_HOME
        assert mon.store.path == home / "monitor.db"
        mon.init_harness(config, now=T0)
        mon.record_cycle(metrics_at(0.9), SNAPSHOT, now=T0, expand=False)
        exp = mon.start_expansion("urgent_expansion", now=T0)
    assert exp["research_error"] is None and exp["thread_id"] == f"monitor-expansion-{exp['id']}-20250615-150640"
    assert exp["answer"] and exp["sources"]
    assert all(s["url"].startswith("https://en.wikipedia.org/wiki/") for s in exp["sources"])
    state = session_state(exp["thread_id"])
    assert (
        state["task"] == EXPANSION_TASK
        and state["settings"]["source"] == "local"
        and state["settings"]["corpus"] is None
    )
    assert state["result"]["answer"] == exp["answer"]
    assert exp["proposals"]  # the proposals do not depend on the research


def test_proposals_read_the_bench_native_result_shape(tmp_path, tasks_file):
    """saturate.bench's own result: {set: {"targets": {...}, "runs": {policy: [TaskRun dicts]}}}."""
    config = {
        "thresholds": {"musique.recall_at_5": 0.8, "musique.gate_keeps_recall": 0.98},
        "benchmarks": [{"name": "musique", "tasks": str(tasks_file), "corpus": None, "enabled": True}],
    }
    snapshot = {
        "musique": {
            "targets": {
                "recall_at_5": {"value": 0.85, "target": 0.8, "met": True},
                "gate_keeps_recall": {"value": 0.9, "target": 0.98, "met": False},
            },
            "runs": {
                "saturate": [{"task_id": t, "gold_recall": r} for t, r in zip("abcd", (1.0, 1.0, 0.5, 1.0))],
                "fixed-5": [{"task_id": t, "gold_recall": 0.0} for t in "abcd"],
            },
        }
    }
    with Monitor(tmp_path / "monitor.db") as mon:
        mon.init_harness(config, now=T0)
        mon.record_cycle(metrics_at(0.9), snapshot, now=T0, expand=False)
        exp = mon.start_expansion("expansion", StubResearch(), now=T0)
    assert exp["proposals"][0] == {"kind": "raise_threshold", "name": "musique.recall_at_5", "from": 0.8, "to": 0.85}
    assert len(exp["proposals"]) == 2 and exp["proposals"][1]["benchmark"]["name"] == "musique-hard-e1"
    assert [json.loads(line)["id"] for line in open(exp["proposals"][1]["benchmark"]["tasks"])] == ["c"]


def test_a_saturated_benchmark_gets_a_tighter_budget_variant(tmp_path, config):
    snapshot = {"tasks": [{"id": t, "benchmark": "musique", "recall": 1.0} for t in "abcd"], "targets": {}}
    with Monitor(tmp_path / "monitor.db") as mon:
        mon.init_harness(config, now=T0)
        mon.record_cycle(metrics_at(0.95), snapshot, now=T0, expand=False)
        exp = mon.start_expansion("urgent_expansion", StubResearch(), now=T0)
        [p] = exp["proposals"]  # no target met: no threshold raised
        assert p["benchmark"]["name"] == "musique-k2-e1" and p["benchmark"]["settings"] == {"results_per_query": 2}
        assert p["benchmark"]["tasks"] == config["benchmarks"][0]["tasks"]
        mon.approve(exp["id"], "alice")
        assert mon.apply(exp["id"])["new_checks"] == {"thresholds": [], "benchmarks": ["musique-k2-e1"]}


# ---------------------------------------------------------------- schema 1 files


SCHEMA_1 = """
CREATE TABLE cycles (id INTEGER PRIMARY KEY, ts REAL NOT NULL, harness_version INTEGER, ceiling_rate REAL,
    regression_pass_rate REAL, improvement_delta REAL, proposal_pass_rate REAL, auditor_agreement_rate REAL,
    score REAL NOT NULL, level TEXT NOT NULL, snapshot TEXT NOT NULL);
CREATE TABLE aggregates (id INTEGER PRIMARY KEY, ts REAL NOT NULL, score REAL NOT NULL, level TEXT NOT NULL,
    harness_version INTEGER, ceiling_rate REAL, regression_pass_rate REAL, improvement_delta REAL,
    proposal_pass_rate REAL, auditor_agreement_rate REAL);
CREATE TABLE expansions (id INTEGER PRIMARY KEY, ts REAL NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
    cycle_id INTEGER, thread_id TEXT, answer TEXT NOT NULL DEFAULT '', sources TEXT NOT NULL DEFAULT '[]',
    research_error TEXT, proposals TEXT NOT NULL DEFAULT '[]', approved_by TEXT, decided_ts REAL,
    applied_version INTEGER, note TEXT NOT NULL DEFAULT '');
INSERT INTO cycles VALUES (1, 1750000000, NULL, 0.5, 1.0, NULL, 0.5, 0.9, 0.61, 'ELEVATED', '{}');
INSERT INTO aggregates VALUES (1, 1750000000, 0.61, 'ELEVATED', NULL, 0.5, 1.0, NULL, 0.5, 0.9);
INSERT INTO expansions (id, ts, kind, status) VALUES (1, 1750000000, 'review', 'rejected');
PRAGMA user_version = 1;
"""


def test_a_schema_1_file_is_migrated_in_place(tmp_path):
    path = tmp_path / "monitor.db"
    with sqlite3.connect(path) as c:
        c.executescript(SCHEMA_1)
    with Monitor(path, clock=Clock()) as mon:
        report = mon.record_cycle(metrics_at(0.55), SNAPSHOT, expand=False)
        assert report.aggregate["cycles_tracked"] == 2 and report.aggregate["history"][0]["score"] == 0.61
        assert mon.expansion(1)["kind"] == "review" and mon.expansion(1)["trigger_reason"] is None
    with sqlite3.connect(path) as c:
        cols = [r[1] for r in c.execute("PRAGMA table_info(aggregates)")]
        assert c.execute("PRAGMA user_version").fetchone()[0] == 2
        assert c.execute(
            "SELECT benchmark_ceiling_rate, auditor_unanimous_rate FROM cycles WHERE id = 1"
        ).fetchone() == (
            0.5,
            0.9,
        )
    assert "ceiling_rate" not in cols and {"benchmark_ceiling_rate", "auditor_unanimous_rate", "action"} <= set(cols)


# ---------------------------------------------------------------- what the research bench reports


def test_the_bench_reports_the_documents_signals():
    from saturate.bench.research import cycle_metrics

    def runs(recalls, agreed=(1, 1)):
        return [
            {"task_id": str(i), "gold_recall": r, "judged": 2, "agreed": agreed[i % 2]} for i, r in enumerate(recalls)
        ]

    previous = {"musique": {"runs": {"saturate": runs([1.0, 0.5, 0.5, 1.0])}}}
    results = {
        "musique": {
            "runs": {"saturate": runs([1.0, 0.5, 1.0, 0.75], agreed=(2, 1))},
            "targets": {"a": {"met": True}, "b": {"met": False}},
        }
    }
    m = cycle_metrics(results, previous)
    assert m == {
        "benchmark_ceiling_rate": 0.5,  # tasks with gold recall > 0.95
        "regression_pass_rate": 0.75,  # task 3 dropped from 1.0 to 0.75
        "improvement_delta": pytest.approx(0.0625),  # mean recall 0.8125 vs 0.75
        "proposal_pass_rate": 0.5,
        "auditor_unanimous_rate": 0.75,  # 6 of 8 judged rounds agreed
    }
    first = cycle_metrics(results, None)
    assert first["improvement_delta"] is None and first["regression_pass_rate"] == 1.0
