"""The saturation monitor: is the research benchmark still hard for this agent?

Each benchmark run (``saturate bench``) is a *cycle*. The bench reports five metrics per cycle; the
monitor stores them in SQLite (``monitor.db`` in the data directory, see ``monitor.store``),
scores how saturated the benchmark is, watches the trend over a rolling window and, when the
benchmark has consistently stopped being hard, runs a research session with the agent itself on how
to make it harder and stores concrete proposals for a human to approve.

Metric mapping (the issue's names → what this harness measures; each in [0, 1], higher = more saturated)
    ceiling_rate            benchmark ceiling rate: the share of benchmark tasks at full gold recall
                            under the default ``saturate`` policy.
    regression_pass_rate    regression pass rate: the share of tasks whose gold recall did not drop vs
                            the previous cycle on the same task set (1.0 on the first cycle); see
                            ``regression_pass_rate()``.
    improvement_delta       improvement-delta history: the change of the main recall figure vs the
                            previous cycle (kept per cycle, permanently, in ``aggregates``). It enters
                            the score as stagnation = 1 - min(1, |delta| / 0.05): no change → 1.0.
                            None = no comparable previous cycle: stagnation is left out and the other
                            weights are renormalized.
    proposal_pass_rate      proposal pass rate: the share of benchmark targets (policies meeting their
                            thresholds) met in this cycle.
    auditor_agreement_rate  auditor agreement rate: the share of rounds on which two novelty judges
                            agree on continue/stop (heuristic vs seed-heuristic without a model; model
                            vs heuristic with one). Computed by the caller.

Score and levels
    score = Σ WEIGHTS[c] * component[c], clamped to [0, 1] and rounded to 6 places. The seed's exact
    weights were not available: WEIGHTS below (ceiling 0.30, regression 0.20, stagnation 0.25,
    proposal 0.15, agreement 0.10) are OUR ASSUMPTION — change them in ``WEIGHTS`` in
    ``graph/monitor/score.py`` (they must sum to 1; the level and trigger constants are there too).
    Levels: NORMAL < 0.5 ≤ ELEVATED < 0.7 ≤ HIGH < 0.85 ≤ CRITICAL.

Rolling window and consistency detection
    Over the last ``WINDOW`` (20) cycles: the average score, the slope of a least-squares line over the
    cycle index, and the runs (counted back from the latest cycle, within the window) of HIGH-or-above
    and of CRITICAL. Nothing fires before ``MIN_CYCLES`` (10) cycles. Then, first match wins:
    5 consecutive CRITICAL → ``urgent_expansion``; 10 consecutive HIGH-or-above → ``expansion``;
    rolling average ≥ 0.70 with a rising trend (slope > 1e-9) → ``review``. A trigger does not fire
    again while an expansion of the same kind is open (pending, or approved but not applied).

Expansions (all three triggers create one; status pending → approved|rejected → applied → rolled_back)
    ``start_expansion`` runs the agent itself (``graph.api.research``, embedded offline corpus, thread
    ``monitor-expansion-<id>-<timestamp>``) on ``EXPANSION_TASK`` and stores its answer and sources as
    context for the human, plus proposals computed from the harness config and the latest snapshot
    (``monitor.harness.compute_proposals``): raise each met threshold one step toward 1.0, and add
    per enabled benchmark its hardest subset (tasks below full recall, written to
    ``<data dir>/monitor/benchmarks/``) or, when all tasks are at full recall, a tighter-budget variant
    (half the results per query, in the benchmark's ``settings``). Proposals are
    ``{"kind": "raise_threshold", "name", "from", "to"}`` or ``{"kind": "add_benchmark", "benchmark": {...}}``.
    A failed research session is recorded (``research_error``); the proposals are stored anyway.
    ``apply`` needs an approved expansion; it enforces the one-way ratchet (only raise thresholds / add
    benchmarks; ``monitor.harness.check_ratchet`` is the single check for every config change), archives
    the current harness version and creates version N+1 with the new benchmarks disabled.
    ``enable_next_benchmark`` enables one disabled benchmark, at most one per recorded cycle.
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

Modules: ``core`` (this: the ``Monitor`` API), ``score`` (score, levels, window,
triggers), ``harness`` (config shape, ratchet, proposals), ``store`` (SQLite schema).
The command line, ``saturate monitor``, is ``graph/cli/monitor.py``: it imports this module, never the reverse.

Retention: cycle rows (with their snapshots) older than 90 days are deleted by ``prune`` (also run by
every ``record_cycle``); aggregates, harness versions and expansions are permanent.

What the bench passes (snapshot keys the monitor reads for proposals; everything is stored as is)
    ``tasks``:   [{"id", "recall", "benchmark"?, "policy"?}] — per-task gold recall; only policy
                 ``saturate`` counts when a policy is given; items without ``benchmark`` are used when
                 the harness has a single benchmark.
    ``targets``: {threshold name: bool | {"met": bool}} — which thresholds this cycle met.
    Also read as is: ``graph.bench.research``'s own result ``{set: {"targets": {name: {"met"}}, "runs":
    {"saturate": [{"task_id", "gold_recall"}]}}}`` — threshold names are then ``"<set>.<target>"``
    (e.g. ``musique.recall_at_5``) and benchmark names the set names.
A cycle, from the bench:  ``m = Monitor(); m.init_harness(DEFAULT_CONFIG); m.enable_next_benchmark();
run the enabled benchmarks of m.harness()["config"]; m.check_new({check: passed}); m.record_cycle(metrics, snapshot)``
(``record_cycle`` runs the expansion's research session synchronously when a trigger fires, ~2 s offline).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from saturate.graph.monitor.harness import (
    MonitorError,
    RatchetError,
    apply_proposals,
    check_config,
    check_ratchet,
    compute_proposals,
)
from saturate.graph.monitor.score import (
    WEIGHTS,
    WINDOW,
    CycleReport,
    Window,
    check_metrics,
    components,
    detect,
    level_for,
    regression_pass_rate,
    rolling_window,
    saturation_score,
    trend,
)
from saturate.graph.monitor.store import (
    METRICS,
    OPEN_STATUSES,
    SNAPSHOT_RETENTION_DAYS,
    TRIGGERS,
    Store,
    dumps,
    iso,
    to_epoch,
)
from saturate.graph.paths import home_dir
from saturate.state.settings import load_settings

EXPANSION_TASK = "How can a multi-hop retrieval benchmark be made harder so that it stops saturating?"
DB_NAME = "monitor.db"

ResearchFn = Callable[[str, str], Any]  # (task, thread_id) -> AgentResult-like (answer, sources)

__all__ = [
    "EXPANSION_TASK",
    "WEIGHTS",
    "CycleReport",
    "Monitor",
    "MonitorError",
    "RatchetError",
    "Window",
    "check_metrics",
    "check_ratchet",
    "detect",
    "level_for",
    "regression_pass_rate",
    "rolling_window",
    "saturation_score",
    "trend",
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
        return self.store.current_version()

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
        """Store one cycle, score it, update the window and start an expansion if one is due
        (``expand=False``: report the trigger only)."""
        ts = self._now(now)
        m = check_metrics(metrics)
        comps = components(m)
        score = saturation_score(m)
        level = level_for(score)
        current = self.store.current_version()
        version = current["version"] if current else None
        values = [m[k] for k in METRICS]
        with self.store.tx() as c:
            cur = c.execute(
                f"INSERT INTO cycles (ts, harness_version, {', '.join(METRICS)}, score, level, snapshot) "
                f"VALUES (?, ?, {', '.join('?' * len(METRICS))}, ?, ?, ?)",
                (ts, version, *values, score, level, dumps(snapshot)),
            )
            cycle_id = cur.lastrowid
            c.execute(
                f"INSERT INTO aggregates (id, ts, score, level, harness_version, {', '.join(METRICS)}) "
                f"VALUES (?, ?, ?, ?, ?, {', '.join('?' * len(METRICS))})",
                (cycle_id, ts, score, level, version, *values),
            )
        window, cycles = self._window()
        trigger = detect(cycles, window)
        suppressed = trigger is not None and any(e["kind"] == trigger for e in self.store.expansions(OPEN_STATUSES))
        expansion_id = None
        if trigger and not suppressed and expand:
            expansion_id = self.start_expansion(trigger, research_fn, now=ts)["id"]
        self.prune(ts)
        return CycleReport(
            cycle_id, ts, version, m, comps, score, level, window, cycles, trigger, suppressed, expansion_id
        )

    def _window(self) -> tuple[Window, int]:
        rows = self.store.window(WINDOW)
        return rolling_window([(r["level"], r["score"]) for r in rows]), self.store.cycle_count()

    def prune(self, now: Any = None) -> int:
        """Delete cycle snapshots older than the retention; aggregates and expansions stay. Returns the count."""
        cutoff = self._now(now) - SNAPSHOT_RETENTION_DAYS * 86400
        with self.store.tx() as c:
            return c.execute("DELETE FROM cycles WHERE ts < ?", (cutoff,)).rowcount

    # ------------------------------------------------------------ expansions

    def start_expansion(self, kind: str, research_fn: ResearchFn | None = None, now: Any = None) -> dict:
        """Store a pending expansion with proposals, then run the research session for context."""
        if kind not in TRIGGERS:
            raise MonitorError(f"unknown trigger {kind!r}; one of {', '.join(TRIGGERS)}")
        ts = self._now(now)
        current = self.store.current_version()
        last = self.store.one("SELECT MAX(id) AS id FROM aggregates")["id"]
        with self.store.tx() as c:
            exp_id = c.execute(
                "INSERT INTO expansions (ts, kind, status, cycle_id) VALUES (?, ?, 'pending', ?)", (ts, kind, last)
            ).lastrowid
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
        return self.expansion(exp_id)

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
            if self.store.current_version()["version"] != current["version"]:
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
        return self.store.version(version)

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
        window, cycles = self._window()
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
        return {
            "db": str(self.store.path),
            "cycles": cycles,
            "level": last["level"] if last else None,
            "score": last["score"] if last else None,
            "last_cycle": last["id"] if last else None,
            "last_ts": last["ts"] if last else None,
            "window": asdict(window),
            "trigger": detect(cycles, window),
            "harness": harness,
            "pending_expansions": [
                {k: e[k] for k in ("id", "ts", "kind", "status", "thread_id", "approved_by", "research_error")}
                | {"proposals": len(e["proposals"])}
                for e in self.store.expansions(OPEN_STATUSES)
            ],
            "flagged_versions": [
                {"version": v["version"], "note": v["note"]} for v in self.store.versions() if v["flagged_for_review"]
            ],
        }


def _answer_sources(result: Any) -> tuple[str, list[dict]]:
    get = (lambda o, k: o.get(k)) if isinstance(result, dict) else getattr
    sources = []
    for s in get(result, "sources") or []:
        s = s if isinstance(s, dict) else s.model_dump()
        sources.append({k: s.get(k) for k in ("n", "title", "url")})
    return str(get(result, "answer") or ""), sources
