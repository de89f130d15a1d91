"""The saturation monitor: is the research benchmark still hard for this agent?

It implements the design document "Saturation Detection Algorithm v1.0" (seed 003, docs/fidelity.md).
Each benchmark run (``saturate bench``) is a *cycle*. The bench reports five metrics per cycle; the
monitor stores them in SQLite (``monitor.db`` in the data directory, see ``monitor.store``), scores
how saturated the benchmark is, watches a rolling window and, when saturation is consistent, runs a
research session with the agent itself on how to make the benchmark harder and stores concrete
proposals for a human to approve.

Signals (the document's names → what this harness measures; rates in [0, 1])
    benchmark_ceiling_rate  "% of benchmarks scoring > 95 %": the share of benchmark tasks whose gold
                            recall under the default ``saturate`` policy is above 0.95 (with 2-4 gold
                            paragraphs a task: all of them found). Normalised ÷ 0.80, capped at 1.
    regression_pass_rate    "% of regression tests passing": the share of tasks whose gold recall did not
                            drop vs the previous cycle on the same task set (1.0 on the first cycle; see
                            ``regression_pass_rate()``). Normalised: 1.0 only at exactly 100 %, else 0.5.
    improvement_delta       the cycle's improvement: the change of the mean gold recall vs the previous
                            cycle (None on a first cycle); kept per cycle, permanently, in ``aggregates``.
                            The score's ``improvement_delta_trend`` signal is ``compute_trend_score`` of
                            ``delta_history``: the deltas of the last 20 cycles that have one, this cycle's
                            last (a caller may pass ``delta_history`` itself). The document says "trend of
                            improvement magnitudes"; we use the signed deltas, so a regression counts as a
                            decline. Recall deltas are small: the trend score stays 0 unless the deltas fall
                            by more than 0.01 per cycle.
    proposal_pass_rate      "% of proposals passing eval": the share of benchmark targets (thresholds of
                            the harness config) met in this cycle. Normalised ÷ 0.85, capped at 1.
    auditor_unanimous_rate  "% of cycles with all auditors agreeing": per cycle, the share of rounds on which
                            the novelty judges agree on continue/stop (heuristic vs seed-heuristic without a
                            model; model vs heuristic with one). Normalised ÷ 0.90, capped at 1.

Score, levels, window, consistency (``monitor.score``, the document's functions under its names)
    score = 0.30 ceiling + 0.25 regression + 0.20 trend + 0.15 proposals + 0.10 auditors
    (``compute_saturation_score``); levels NORMAL < 0.5 ≤ ELEVATED < 0.7 ≤ HIGH < 0.85 ≤ CRITICAL
    (``get_level``). After every cycle the aggregate over the last 20 cycles is rebuilt
    (``build_aggregate``: average score, trend from the least-squares slope, consecutive HIGH and
    CRITICAL counts exactly as ``computeRollingMetrics`` counts them) and ``check_consistency`` decides,
    first match wins: under 10 cycles → CONTINUE ("Insufficient data"); 5 consecutive CRITICAL →
    TRIGGER_EXPANSION_RESEARCH, urgency CRITICAL (an ``urgent_expansion``); 10 consecutive HIGH →
    TRIGGER_EXPANSION_RESEARCH, urgency HIGH (an ``expansion``); rolling average ≥ 0.70 and increasing →
    FLAG_FOR_REVIEW (urgency MEDIUM): the human is notified (the bench prints it, ``saturate monitor``
    shows it; stored with the cycle), no research is started — as the document's ``recordCycle`` does.
    Each cycle's action, reason and urgency are kept in ``aggregates``.
    Deviation: the document would spawn research on every cycle while the condition holds; here an
    expansion of a kind is not started again while one of that kind is open (pending, or approved but
    not applied): the cycle reports ``suppressed``.

Expansions (status pending → approved|rejected → applied → rolled_back)
    ``start_expansion`` stores the event (kind, trigger reason, urgency, the rolling average at the
    trigger: the document's ``saturation_score_at_trigger``), runs the agent itself (``graph.api.research``,
    embedded offline corpus, thread ``monitor-expansion-<id>-<timestamp>``) on ``EXPANSION_TASK`` and
    stores its answer and sources as context for the human, plus proposals computed from the harness
    config and the latest snapshot (``monitor.harness.compute_proposals``): raise each met threshold one
    step toward 1.0, and add per enabled benchmark its hardest subset (tasks below full recall, written to
    ``<data dir>/monitor/benchmarks/``) or, when all tasks are at full recall, a tighter-budget variant
    (half the results per query, in the benchmark's ``settings``). Proposals are
    ``{"kind": "raise_threshold", "name", "from", "to"}`` or ``{"kind": "add_benchmark", "benchmark": {...}}``.
    A failed research session is recorded (``research_error``); the proposals are stored anyway.
    ``apply`` needs an approved expansion (the human gate); it enforces the one-way ratchet (only raise
    thresholds / add benchmarks; ``monitor.harness.check_ratchet`` is the single check for every config
    change), archives the current harness version and creates version N+1 with the new benchmarks
    disabled. ``enable_next_benchmark`` enables one disabled benchmark, at most one per recorded cycle.
    ``check_new`` evaluates the new checks (raised thresholds + enabled new benchmarks): more than half
    failed at once → the archived parent version becomes current again, the failed version is flagged
    for review and the expansion is ``rolled_back`` (the only way a harness gets easier). Check names are
    the raised thresholds' and the new benchmarks' names; checks missing from ``results`` are reported,
    not counted. Once every new benchmark is enabled and a ``check_new`` does not roll back, the version
    is settled: later failures are ordinary regressions, not grounds for a rollback.

Harness config (registered once by the bench with ``init_harness``; afterwards the stored one is
authoritative and changes only through approved expansions): ``{"thresholds": {name: minimum},
"benchmarks": [{"name", "tasks", "corpus", "enabled", ...}]}``; thresholds are minimums the system
must reach, so higher = harder. Exactly one version is current (``archived = 0``).

Modules: ``core`` (this: the ``Monitor`` API), ``score`` (the document's formulas), ``harness``
(config shape, ratchet, proposals), ``store`` (SQLite schema). The command line, ``saturate monitor``,
is ``saturate/cli/monitor.py``: it imports this module, never the reverse.

Retention: cycle rows (with their snapshots) older than 90 days are deleted by ``prune`` (also run by
every ``record_cycle``); aggregates, harness versions and expansions are permanent.

What the bench passes (snapshot keys the monitor reads for proposals; everything is stored as is)
    ``tasks``:   [{"id", "recall", "benchmark"?, "policy"?}] — per-task gold recall; only policy
                 ``saturate`` counts when a policy is given; items without ``benchmark`` are used when
                 the harness has a single benchmark.
    ``targets``: {threshold name: bool | {"met": bool}} — which thresholds this cycle met.
    Also read as is: ``saturate.bench.research``'s own result ``{set: {"targets": {name: {"met"}}, "runs":
    {"saturate": [{"task_id", "gold_recall"}]}}}`` — threshold names are then ``"<set>.<target>"``
    (e.g. ``musique.recall_at_5``) and benchmark names the set names.
A cycle, from the bench:  ``m = Monitor(); m.init_harness(DEFAULT_CONFIG); m.enable_next_benchmark();
run the enabled benchmarks of m.harness()["config"]; m.check_new({check: passed}); m.record_cycle(metrics, snapshot)``
(``record_cycle`` runs the expansion's research session synchronously when one is due, ~2 s offline).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from saturate.graph.paths import home_dir
from saturate.monitor.harness import (
    MonitorError,
    RatchetError,
    apply_proposals,
    check_config,
    check_ratchet,
    compute_proposals,
)
from saturate.monitor.score import (
    CONSISTENCY_THRESHOLDS,
    EXPANSION_KINDS,
    WEIGHTS,
    WINDOW_SIZE,
    CycleReport,
    build_aggregate,
    check_consistency,
    check_metrics,
    compute_rolling_metrics,
    compute_saturation_score,
    compute_slope,
    compute_trend_score,
    expansion_kind,
    get_level,
    normalize_signals,
    regression_pass_rate,
)
from saturate.monitor.store import (
    METRICS,
    OPEN_STATUSES,
    SNAPSHOT_RETENTION_DAYS,
    Store,
    dumps,
    iso,
    to_epoch,
)
from saturate.state.settings import load_settings

EXPANSION_TASK = "How can a multi-hop retrieval benchmark be made harder so that it stops saturating?"
DB_NAME = "monitor.db"

ResearchFn = Callable[[str, str], Any]  # (task, thread_id) -> AgentResult-like (answer, sources)

__all__ = [
    "CONSISTENCY_THRESHOLDS",
    "EXPANSION_TASK",
    "METRICS",
    "WEIGHTS",
    "WINDOW_SIZE",
    "CycleReport",
    "Monitor",
    "MonitorError",
    "RatchetError",
    "build_aggregate",
    "check_consistency",
    "check_metrics",
    "check_ratchet",
    "compute_rolling_metrics",
    "compute_saturation_score",
    "compute_slope",
    "compute_trend_score",
    "get_level",
    "normalize_signals",
    "regression_pass_rate",
]


# ---------------------------------------------------------------- the monitor


def default_research(home: Path) -> ResearchFn:
    """The agent itself on the embedded offline corpus (source local, no corpus file, no network)."""

    def research_fn(task: str, thread_id: str):
        # heavy: LangGraph; the monitor's status commands must not pay for it (the CLI imports this module)
        from saturate.graph.api import research

        return research(
            task, thread_id=thread_id, home=home, settings=load_settings({"source": "local", "corpus": None})
        )

    return research_fn


class Monitor:
    """The monitor on ``path`` (default ``<data dir>/monitor.db``); ``clock()`` → epoch seconds."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        home: str | Path | None = None,
        clock: Callable[[], float] | None = None,
    ):
        if path is None:
            path = home_dir(home) / DB_NAME
        self.store = Store(path)
        self.home = self.store.path.parent
        self.clock = clock

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _now(self, now: Any) -> float:
        return to_epoch(now, self.clock)

    # ------------------------------------------------------------ harness

    def init_harness(self, config: dict, now: Any = None) -> dict:
        """Register ``config`` as harness version 1 if there is none; return the current version.
        An existing harness is authoritative (it only changes through approved expansions)."""
        config = check_config(config)
        with self.store.tx() as c:
            if self.store.current_version() is None:
                c.execute(
                    "INSERT INTO harness_versions (version, created_ts, config, note) VALUES (1, ?, ?, 'initial')",
                    (self._now(now), dumps(config)),
                )
        return _present(self.store.current_version(), "the harness version just registered")

    def harness(self) -> dict | None:
        """The current harness version: version, config, parent, new_checks, flags..."""
        return self.store.current_version()

    def last_snapshot(self) -> dict | None:
        """The latest stored bench snapshot (for the previous cycle's per-task recall)."""
        return self.store.last_snapshot()

    def expansion(self, expansion_id: int) -> dict:
        exp = self.store.expansion(expansion_id)
        if exp is None:
            raise MonitorError(f"no expansion {expansion_id}: see `saturate monitor` for the pending ones")
        return exp

    # ------------------------------------------------------------ cycles

    def record_cycle(
        self,
        metrics: dict,
        snapshot: dict,
        now: Any = None,
        *,
        research_fn: ResearchFn | None = None,
        expand: bool = True,
    ) -> CycleReport:
        """The document's ``recordCycle``: store one cycle, score it, update the aggregate, check consistency
        and start the expansion research it calls for (``expand=False``: report it only).

        ``metrics``: ``METRICS`` (``improvement_delta`` None on a first cycle) and optionally ``delta_history``;
        without it the history is the stored deltas of the last cycles plus this one (``WINDOW_SIZE`` at most).
        """
        ts = self._now(now)
        m = check_metrics(metrics)
        if "delta_history" not in m:
            previous = self.store.deltas(WINDOW_SIZE)
            m["delta_history"] = (previous + ([m["improvement_delta"]] if m["improvement_delta"] is not None else []))[
                -WINDOW_SIZE:
            ]
        normalized = normalize_signals(m)
        score = compute_saturation_score(m)
        level = get_level(score)
        current = self.store.current_version()
        version = current["version"] if current else None
        values = [m[k] for k in METRICS]
        with self.store.tx() as c:
            cur = c.execute(
                f"INSERT INTO cycles (ts, harness_version, {', '.join(METRICS)}, score, level, snapshot) "
                f"VALUES (?, ?, {', '.join('?' * len(METRICS))}, ?, ?, ?)",
                (ts, version, *values, score, level, dumps(snapshot)),
            )
            cycle_id = _inserted_id(cur)
            c.execute(
                f"INSERT INTO aggregates (id, ts, score, level, harness_version, {', '.join(METRICS)}) "
                f"VALUES (?, ?, ?, ?, ?, {', '.join('?' * len(METRICS))})",
                (cycle_id, ts, score, level, version, *values),
            )
        aggregate = self.aggregate(ts)
        consistency = check_consistency(aggregate)
        with self.store.tx() as c:
            c.execute(
                "UPDATE aggregates SET action = ?, reason = ?, urgency = ? WHERE id = ?",
                (consistency["action"], consistency["reason"], consistency["urgency"], cycle_id),
            )
        kind = expansion_kind(consistency)
        suppressed = kind is not None and any(e["kind"] == kind for e in self.store.expansions(OPEN_STATUSES))
        expansion_id = None
        if kind and not suppressed and expand:
            expansion_id = self.start_expansion(
                kind,
                research_fn,
                now=ts,
                reason=consistency["reason"],
                score_at_trigger=aggregate["rolling_metrics"]["avg_saturation_score"],
            )["id"]
        self.prune(ts)
        return CycleReport(
            cycle_id,
            cycle_name(cycle_id),
            ts,
            version,
            m,
            normalized,
            score,
            level,
            aggregate,
            consistency,
            suppressed,
            expansion_id,
        )

    def aggregate(self, now: Any = None) -> dict:
        """The rolling-window aggregate over the last ``WINDOW_SIZE`` cycles, in the document's shape."""
        rows = self.store.window(WINDOW_SIZE)
        history = [{"cycle_id": cycle_name(r["id"]), "score": r["score"], "level": r["level"]} for r in rows]
        last = rows[-1]["ts"] if rows else (self._now(now) if now is not None else None)
        return build_aggregate(history, WINDOW_SIZE, iso(last) if last is not None else None)

    def prune(self, now: Any = None) -> int:
        """Delete cycle snapshots older than the retention; aggregates and expansions stay. Returns the count."""
        cutoff = self._now(now) - SNAPSHOT_RETENTION_DAYS * 86400
        with self.store.tx() as c:
            return c.execute("DELETE FROM cycles WHERE ts < ?", (cutoff,)).rowcount

    # ------------------------------------------------------------ expansions

    def start_expansion(
        self,
        kind: str,
        research_fn: ResearchFn | None = None,
        now: Any = None,
        *,
        reason: str | None = None,
        score_at_trigger: float | None = None,
    ) -> dict:
        """The document's ``triggerExpansionResearch``: store a pending expansion with proposals, then run the
        research session for context. ``kind``: ``urgent_expansion`` (urgency CRITICAL) or ``expansion`` (HIGH)."""
        urgency = {v: k for k, v in EXPANSION_KINDS.items()}.get(kind)
        if urgency is None:
            raise MonitorError(f"unknown expansion kind {kind!r}; one of {', '.join(EXPANSION_KINDS.values())}")
        ts = self._now(now)
        current = self.store.current_version()
        last = _present(self.store.one("SELECT MAX(id) AS id FROM aggregates"), "MAX(id)")["id"]
        if score_at_trigger is None and last is not None:
            score_at_trigger = self.aggregate()["rolling_metrics"]["avg_saturation_score"]
        with self.store.tx() as c:
            exp_id = _inserted_id(
                c.execute(
                    "INSERT INTO expansions (ts, kind, status, cycle_id, trigger_reason, urgency, score_at_trigger) "
                    "VALUES (?, ?, 'pending', ?, ?, ?, ?)",
                    (ts, kind, last, reason or f"started by hand ({kind})", urgency, score_at_trigger),
                )
            )
        proposals = compute_proposals(
            current["config"] if current else None,
            self.store.last_snapshot(),
            self.home / "monitor" / "benchmarks",
            f"e{exp_id}",
        )
        thread_id = f"monitor-expansion-{exp_id}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime(ts))}"
        with self.store.tx() as c:
            c.execute(
                "UPDATE expansions SET proposals = ?, thread_id = ? WHERE id = ?", (dumps(proposals), thread_id, exp_id)
            )
        answer, sources, error = "", [], None
        try:
            result = (research_fn or default_research(self.home))(EXPANSION_TASK, thread_id)
            answer, sources = _answer_sources(result)
        except Exception as exc:  # the proposals stand without the research context; the error is kept
            error = f"{type(exc).__name__}: {exc}"
        with self.store.tx() as c:
            c.execute(
                "UPDATE expansions SET answer = ?, sources = ?, research_error = ? WHERE id = ?",
                (answer, dumps(sources), error, exp_id),
            )
        return _present(self.expansion(exp_id), f"expansion {exp_id}")

    def approve(self, expansion_id: int, approver: str, now: Any = None, proposals: list[dict] | None = None) -> dict:
        """Approve a pending expansion. ``proposals``: the human's amended list instead of the stored one.
        What is approved is ratchet-checked against the current harness now (and again by ``apply``)."""
        exp = self._decidable(expansion_id, approver, ("pending",), "approved")
        chosen = exp["proposals"] if proposals is None else proposals
        current = self.store.current_version()
        apply_proposals(current["config"] if current else {"thresholds": {}, "benchmarks": []}, chosen)
        note = (
            exp["note"]
            if proposals is None
            else (exp["note"] + f"; proposals amended by {approver.strip()}").lstrip("; ")
        )
        with self.store.tx() as c:
            c.execute(
                "UPDATE expansions SET status = 'approved', approved_by = ?, decided_ts = ?, proposals = ?, note = ? "
                "WHERE id = ?",
                (approver.strip(), self._now(now), dumps(chosen), note, exp["id"]),
            )
        return self.expansion(exp["id"])

    def reject(self, expansion_id: int, approver: str, now: Any = None) -> dict:
        exp = self._decidable(expansion_id, approver, OPEN_STATUSES, "rejected")
        with self.store.tx() as c:
            c.execute(
                "UPDATE expansions SET status = 'rejected', approved_by = ?, decided_ts = ? WHERE id = ?",
                (approver.strip(), self._now(now), exp["id"]),
            )
        return self.expansion(exp["id"])

    def _decidable(self, expansion_id: int, approver: str, allowed: tuple[str, ...], verb: str) -> dict:
        exp = self.expansion(expansion_id)
        if not isinstance(approver, str) or not approver.strip():
            raise MonitorError(f"say who {verb} expansion {exp['id']} (--by NAME)")
        if exp["status"] not in allowed:
            raise MonitorError(
                f"expansion {exp['id']} is {exp['status']}; only a {' or '.join(allowed)} one can be {verb}"
            )
        return exp

    def apply(self, expansion_id: int, now: Any = None) -> dict:
        """Apply an approved expansion: archive the current version, create N+1 (new benchmarks disabled)."""
        exp = self.expansion(expansion_id)
        if exp["status"] != "approved":
            hint = (
                f": approve it first (saturate monitor --approve {exp['id']} --by NAME)"
                if exp["status"] == "pending"
                else ""
            )
            raise MonitorError(f"expansion {exp['id']} is {exp['status']}, not approved; nothing applied{hint}")
        if not exp["proposals"]:
            raise MonitorError(f"expansion {exp['id']} has no proposals to apply; reject it instead")
        current = self.store.current_version()
        if current is None:
            raise MonitorError("no harness registered yet (the bench registers it with init_harness)")
        new_config, raised, added = apply_proposals(
            current["config"], exp["proposals"]
        )  # RatchetError: nothing applied
        ts = self._now(now)
        with self.store.tx() as c:
            if (self.store.current_version() or {}).get("version") != current["version"]:
                raise MonitorError("the harness changed while applying; try again")
            version = c.execute("SELECT MAX(version) FROM harness_versions").fetchone()[0] + 1
            c.execute("UPDATE harness_versions SET archived = 1 WHERE version = ?", (current["version"],))
            c.execute(
                "INSERT INTO harness_versions (version, created_ts, config, parent, note, expansion_id, new_checks) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    version,
                    ts,
                    dumps(new_config),
                    current["version"],
                    f"expansion {exp['id']} ({exp['kind']}) approved by {exp['approved_by']}",
                    exp["id"],
                    dumps({"thresholds": raised, "benchmarks": added}),
                ),
            )
            c.execute(
                "UPDATE expansions SET status = 'applied', applied_version = ? WHERE id = ?", (version, exp["id"])
            )
        return _present(self.store.version(version), f"harness version {version}")

    def enable_next_benchmark(self, now: Any = None) -> str | None:
        """Enable the first disabled benchmark of the current version: at most one per recorded cycle.
        Returns its name, or None (nothing disabled, or one was already enabled since the last cycle)."""
        current = self.store.current_version()
        if current is None:
            return None
        cycles = self.store.cycle_count()
        if current["enabled_at_cycle"] == cycles:
            return None
        old = current["config"]
        nxt = next((b for b in old["benchmarks"] if not b["enabled"]), None)
        if nxt is None:
            return None
        new = {**old, "benchmarks": [{**b, "enabled": True} if b is nxt else b for b in old["benchmarks"]]}
        check_ratchet(old, new)
        with self.store.tx() as c:
            c.execute(
                "UPDATE harness_versions SET config = ?, enabled_at_cycle = ? WHERE version = ? AND archived = 0",
                (dumps(new), cycles, current["version"]),
            )
        return nxt["name"]

    def check_new(self, results: dict[str, bool], now: Any = None) -> dict:
        """Judge the new checks of a freshly applied version (raised thresholds + enabled new benchmarks).

        ``results``: {check name: passed}. More than half of the evaluated new checks failed at once →
        roll back to the archived parent (flagged for review). Returns {"action": none|ok|settled|rolled_back, ...}.
        """
        ts = self._now(now)
        current = self.store.current_version()
        if current is None or current["expansion_id"] is None or current["settled_ts"] is not None:
            return {"action": "none", "reason": "no freshly applied harness version to check"}
        enabled = {b["name"] for b in current["config"]["benchmarks"] if b["enabled"]}
        checks = current["new_checks"]["thresholds"] + [b for b in current["new_checks"]["benchmarks"] if b in enabled]
        evaluated = {name: bool(results[name]) for name in checks if name in results}
        failed = [name for name, ok in evaluated.items() if not ok]
        out = {
            "version": current["version"],
            "expansion_id": current["expansion_id"],
            "checked": sorted(evaluated),
            "failed": failed,
            "missing": [n for n in checks if n not in results],
        }
        if evaluated and len(failed) * 2 > len(evaluated):
            note = (
                f"rolled back at {iso(ts)}: failed {len(failed)} of {len(evaluated)} new checks at once "
                f"({', '.join(failed)})"
            )
            with self.store.tx() as c:
                c.execute(
                    "UPDATE harness_versions SET archived = 1, flagged_for_review = 1, note = note || '; ' || ? "
                    "WHERE version = ?",
                    (note, current["version"]),
                )
                c.execute("UPDATE harness_versions SET archived = 0 WHERE version = ?", (current["parent"],))
                c.execute(
                    "UPDATE expansions SET status = 'rolled_back', note = ? WHERE id = ?",
                    (note, current["expansion_id"]),
                )
            return {**out, "action": "rolled_back", "current_version": current["parent"], "note": note}
        if evaluated and set(current["new_checks"]["benchmarks"]) <= enabled:
            with self.store.tx() as c:
                c.execute("UPDATE harness_versions SET settled_ts = ? WHERE version = ?", (ts, current["version"]))
            return {**out, "action": "settled", "current_version": current["version"]}
        return {**out, "action": "ok" if evaluated else "none", "current_version": current["version"]}

    # ------------------------------------------------------------ status

    def status(self) -> dict:
        aggregate = self.aggregate()
        cycles = self.store.cycle_count()
        last = self.store.one("SELECT * FROM aggregates ORDER BY id DESC LIMIT 1")
        current = self.store.current_version()
        harness = None
        if current:
            bs = current["config"]["benchmarks"]
            harness = {
                "version": current["version"],
                "parent": current["parent"],
                "thresholds": current["config"]["thresholds"],
                "enabled": [b["name"] for b in bs if b["enabled"]],
                "disabled": [b["name"] for b in bs if not b["enabled"]],
                "settled": current["expansion_id"] is None or current["settled_ts"] is not None,
            }
        scores = [h["score"] for h in aggregate["history"]]
        return {
            "db": str(self.store.path),
            "cycles": cycles,
            "level": last["level"] if last else None,
            "score": last["score"] if last else None,
            "last_cycle": last["id"] if last else None,
            "last_ts": last["ts"] if last else None,
            "aggregate": aggregate,
            "trend_slope": compute_slope(list(range(len(scores))), scores),
            "consistency": check_consistency(aggregate) if last else None,
            "harness": harness,
            "pending_expansions": [
                {
                    k: e[k]
                    for k in ("id", "ts", "kind", "status", "urgency", "trigger_reason", "thread_id", "approved_by")
                }
                | {"research_error": e["research_error"], "proposals": len(e["proposals"])}
                for e in self.store.expansions(OPEN_STATUSES)
            ],
            "flagged_versions": [
                {"version": v["version"], "note": v["note"]} for v in self.store.versions() if v["flagged_for_review"]
            ],
        }


def _present(row: dict | None, what: str) -> dict:
    """A row the caller has just written (or that always exists); MonitorError if it is not there."""
    if row is None:
        raise MonitorError(f"{what} is not in the monitor's database")
    return row


def _inserted_id(cursor: Any) -> int:
    """The id of the row an INSERT just added (a DB-API cursor's ``lastrowid`` is optional in its type)."""
    if cursor.lastrowid is None:
        raise MonitorError("the monitor's database added no row")
    return cursor.lastrowid


def cycle_name(row_id: int) -> str:
    """The document's cycle id ("cycle-1735600000000" there): here ``cycle-<row id>``, unique and ordered."""
    return f"cycle-{row_id}"


def _answer_sources(result: Any) -> tuple[str, list[dict]]:
    get = (lambda o, k: o.get(k)) if isinstance(result, dict) else getattr
    sources = []
    for s in get(result, "sources") or []:
        s = s if isinstance(s, dict) else s.model_dump()
        sources.append({k: s.get(k) for k in ("n", "title", "url")})
    return str(get(result, "answer") or ""), sources
