"""The benchmark harness config and its one-way ratchet (part of the saturation monitor).

A harness config is ``{"thresholds": {name: number}, "benchmarks": [{"name", "tasks", "corpus",
"enabled", ...}]}``. Thresholds are minimums the system must reach (higher = harder, e.g. a recall
target in [0, 1]). The harness may only get harder: ``check_ratchet(old, new)`` is the single
validation used by everything that changes a stored config (applying an expansion, enabling a
benchmark). It allows exactly: raising a threshold, adding a benchmark, and enabling a disabled
benchmark. Lowering a threshold, adding or removing a threshold name, removing, disabling or
editing a benchmark, or any other key is refused with ``RatchetError`` naming what and why.

``compute_proposals`` turns the current config and the latest cycle's snapshot into concrete
proposals (``raise_threshold`` / ``add_benchmark``); ``apply_proposals`` builds the next config
from them and runs the ratchet check.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from saturate.state.errors import BadInput
from saturate.state.files import bounded_lines

THRESHOLD_STEP = 0.25  # a met threshold is raised by this share of its remaining gap to 1.0 ...
THRESHOLD_MIN_STEP = 0.01  # ... but by at least this much (never above 1.0)
BUDGET_FLOOR = 1  # the tighter-budget variant never asks for fewer results per query than this
DEFAULT_RESULTS_PER_QUERY = 5  # state.settings default; the base of the tighter-budget variant
PROPOSAL_KINDS = ("raise_threshold", "add_benchmark")
DEFAULT_POLICY = "saturate"


class MonitorError(BadInput):
    """A monitor operation that cannot be done as asked (the message says why and what to do)."""


class RatchetError(MonitorError):
    """A harness change that would make the harness easier or change it in a non-allowed way."""


# ---------------------------------------------------------------- config shape


def check_config(config: Any) -> dict:
    """Validate the shape of a harness config; return a normalized copy (JSON round trip)."""
    if not isinstance(config, dict) or set(config) != {"thresholds", "benchmarks"}:
        raise MonitorError('a harness config is {"thresholds": {name: number}, "benchmarks": [...]} and nothing else')
    thresholds = config["thresholds"]
    if not isinstance(thresholds, dict):
        raise MonitorError("harness thresholds must be a {name: number} object")
    for name, value in thresholds.items():
        if not isinstance(name, str) or not name:
            raise MonitorError(f"threshold name {name!r} must be a non-empty string")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise MonitorError(f"threshold {name!r} must be a finite number (got {value!r})")
    benchmarks = config["benchmarks"]
    if not isinstance(benchmarks, list):
        raise MonitorError("harness benchmarks must be a list")
    seen: set[str] = set()
    for b in benchmarks:
        _check_benchmark(b)
        if b["name"] in seen:
            raise MonitorError(f"benchmark name {b['name']!r} appears twice")
        seen.add(b["name"])
    return json.loads(json.dumps(config))


def _check_benchmark(b: Any) -> dict:
    """``b`` when it is a well-formed benchmark entry; MonitorError saying what is wrong otherwise."""
    if not isinstance(b, dict) or not isinstance(b.get("name"), str) or not b["name"]:
        raise MonitorError(f"a benchmark needs a non-empty string name (got {b!r})")
    if not isinstance(b.get("tasks"), str) or not b["tasks"]:
        raise MonitorError(f"benchmark {b['name']!r} needs a tasks file path")
    if b.get("corpus") is not None and not isinstance(b["corpus"], str):
        raise MonitorError(f"benchmark {b['name']!r}: corpus must be a path or null")
    if not isinstance(b.get("enabled"), bool):
        raise MonitorError(f"benchmark {b['name']!r}: enabled must be true or false")
    return b


# ---------------------------------------------------------------- the ratchet


def check_ratchet(old: dict, new: dict) -> None:
    """Refuse any change from ``old`` to ``new`` except raising thresholds, adding benchmarks
    and enabling disabled ones. Raises RatchetError; returns None when the change is allowed."""
    old, new = check_config(old), check_config(new)
    why = "the harness is a one-way ratchet: it may only raise thresholds or add benchmarks"
    for name, value in old["thresholds"].items():
        if name not in new["thresholds"]:
            raise RatchetError(f"threshold {name!r} would be removed; {why}")
        if new["thresholds"][name] < value:
            raise RatchetError(
                f"threshold {name!r} would be lowered from {value:g} to {new['thresholds'][name]:g}; {why}"
            )
    for name in set(new["thresholds"]) - set(old["thresholds"]):
        raise RatchetError(f"threshold {name!r} would be added; new checks come as new benchmarks ({why})")
    new_by_name = {b["name"]: b for b in new["benchmarks"]}
    for b in old["benchmarks"]:
        nb = new_by_name.get(b["name"])
        if nb is None:
            raise RatchetError(f"benchmark {b['name']!r} would be removed; {why}")
        if b["enabled"] and not nb["enabled"]:
            raise RatchetError(f"benchmark {b['name']!r} would be disabled; {why}")
        if {k: v for k, v in nb.items() if k != "enabled"} != {k: v for k, v in b.items() if k != "enabled"}:
            raise RatchetError(f"benchmark {b['name']!r} would be changed; {why} (add a new benchmark instead)")


def apply_proposals(config: dict, proposals: list[dict]) -> tuple[dict, list[str], list[str]]:
    """The config after ``proposals`` (new benchmarks disabled), checked by ``check_ratchet``.

    Returns (new config, raised threshold names, added benchmark names). Nothing is changed in
    place; any refused proposal raises RatchetError and no proposal is applied.
    """
    old = check_config(config)
    new = json.loads(json.dumps(old))
    raised: list[str] = []
    added: list[str] = []
    if not isinstance(proposals, list):
        raise RatchetError("proposals must be a list")
    for i, p in enumerate(proposals, 1):
        kind = p.get("kind") if isinstance(p, dict) else None
        if kind == "raise_threshold":
            name = p.get("name")
            if not isinstance(name, str) or name not in old["thresholds"]:
                raise RatchetError(f"proposal {i}: unknown threshold {name!r}; only existing thresholds can be raised")
            to = p.get("to")
            if isinstance(to, bool) or not isinstance(to, (int, float)) or not math.isfinite(to):
                raise RatchetError(f"proposal {i}: threshold {name!r} needs a numeric 'to' (got {to!r})")
            if p.get("from") is not None and p["from"] != old["thresholds"][name]:
                raise RatchetError(
                    f"proposal {i}: threshold {name!r} is {old['thresholds'][name]:g} now, "
                    f"not {p['from']!r} as proposed; "
                    "the proposal is stale"
                )
            if to <= old["thresholds"][name]:
                raise RatchetError(
                    f"proposal {i}: threshold {name!r} would go from {old['thresholds'][name]:g} to {to:g}; "
                    "the harness is a one-way ratchet: thresholds may only be raised"
                )
            new["thresholds"][name] = to
            raised.append(name)
        elif kind == "add_benchmark":
            b = p.get("benchmark")
            b = _check_benchmark({**b, "enabled": False} if isinstance(b, dict) else b)
            if any(x["name"] == b["name"] for x in new["benchmarks"]):
                raise RatchetError(
                    f"proposal {i}: benchmark {b['name']!r} already exists; adding it would replace it "
                    "(the harness is a one-way ratchet: benchmarks are only added)"
                )
            new["benchmarks"].append({**b, "enabled": False})  # added disabled, enabled one at a time
            added.append(b["name"])
        else:
            raise RatchetError(
                f"proposal {i} ({kind!r}) refused: the harness is a one-way ratchet; only "
                f"{' and '.join(PROPOSAL_KINDS)} are allowed (nothing is lowered, removed or otherwise changed)"
            )
    check_ratchet(old, new)
    return new, raised, added


# ---------------------------------------------------------------- proposals


def _task_items(snapshot: dict) -> list[tuple[str | None, Any]]:
    """(benchmark, task item) pairs: the top-level ``tasks`` list, and the bench-native
    ``{set: {"runs": {policy: [...]}}}`` shape (default policy only, benchmark = set name)."""
    out: list[tuple[str | None, Any]] = []
    for t in snapshot.get("tasks") or []:
        out.append((t.get("benchmark") if isinstance(t, dict) else None, t))
    for name, res in snapshot.items():
        if isinstance(res, dict) and isinstance(res.get("runs"), dict):
            out += [
                (name, {**t, "policy": DEFAULT_POLICY})
                for t in res["runs"].get(DEFAULT_POLICY) or []
                if isinstance(t, dict)
            ]
    return out


def task_recalls(snapshot: dict | None) -> dict[str | None, dict[str, float]]:
    """Per-benchmark ``{task id: gold recall}`` from a bench snapshot.

    Items: ``{"id" | "task_id", "recall" | "gold_recall", "benchmark"?, "policy"?}``, in the snapshot's
    ``tasks`` list or bench-native under ``{set: {"runs": {"saturate": [...]}}}``. When ``policy`` is
    given only the default ``saturate`` policy counts. Items without a benchmark are keyed under None.
    """
    out: dict[str | None, dict[str, float]] = {}
    for bench, t in _task_items(snapshot or {}):
        if not isinstance(t, dict) or t.get("policy", DEFAULT_POLICY) != DEFAULT_POLICY:
            continue
        tid, recall = t.get("id", t.get("task_id")), t.get("recall", t.get("gold_recall"))
        if tid is None or isinstance(recall, bool) or not isinstance(recall, (int, float)):
            continue
        out.setdefault(bench, {})[str(tid)] = float(recall)
    return out


def met_targets(snapshot: dict | None) -> dict[str, bool] | None:
    """``{threshold name: met}`` from the snapshot's ``targets`` ({name: bool | {"met": bool}}) and,
    bench-native, ``{set: {"targets": {name: {"met": ...}}}}`` as ``"<set>.<name>"``; None if neither."""
    snapshot = snapshot or {}
    found: dict[str, Any] = {}
    if isinstance(snapshot.get("targets"), dict):
        found.update(snapshot["targets"])
    for name, res in snapshot.items():
        if isinstance(res, dict) and isinstance(res.get("targets"), dict):
            found.update({f"{name}.{k}": v for k, v in res["targets"].items()})
    if not found and not isinstance(snapshot.get("targets"), dict):
        return None
    return {str(k): bool(v.get("met")) if isinstance(v, dict) else bool(v) for k, v in found.items()}


def raised_value(value: float) -> float:
    """One ratchet step toward 1.0."""
    return round(min(1.0, value + max(THRESHOLD_MIN_STEP, (1.0 - value) * THRESHOLD_STEP)), 4)


def compute_proposals(config: dict | None, snapshot: dict | None, bench_dir: Path, tag: str) -> list[dict]:
    """Concrete proposals from the current harness and the latest cycle's snapshot.

    - every threshold the latest cycle met (all of them if the snapshot has no ``targets``) is raised
      by one step toward 1.0 (thresholds already at 1.0 are left alone);
    - for every enabled benchmark, its hardest subset (tasks below full recall in the latest cycle)
      is written as a task file under ``bench_dir`` and proposed as a new benchmark; when every task
      is at full recall, a tighter-budget variant (half the results per query) is proposed instead.
    """
    if not config:
        return []
    config = check_config(config)
    proposals: list[dict] = []
    met = met_targets(snapshot)
    for name, value in config["thresholds"].items():
        if (met is None or met.get(name)) and value < 1.0:
            proposals.append({"kind": "raise_threshold", "name": name, "from": value, "to": raised_value(value)})
    recalls = task_recalls(snapshot)
    names = {b["name"] for b in config["benchmarks"]}
    for b in config["benchmarks"]:
        if not b["enabled"]:
            continue
        per_task = recalls.get(b["name"]) or (recalls.get(None) if len(config["benchmarks"]) == 1 else None) or {}
        hard = {tid for tid, r in per_task.items() if r < 1.0}
        new = None
        if hard and len(hard) < len(per_task):
            path = _write_subset(b["tasks"], hard, bench_dir / f"{b['name']}-hard-{tag}.jsonl")
            if path:
                new = {
                    **_base(b),
                    "name": f"{b['name']}-hard-{tag}",
                    "tasks": str(path),
                    "derived_from": b["name"],
                    "why": f"the {len(hard)} of {len(per_task)} tasks below full recall in the latest cycle",
                }
        elif per_task and not hard:
            k = (b.get("settings") or {}).get("results_per_query", DEFAULT_RESULTS_PER_QUERY)
            if k // 2 >= BUDGET_FLOOR:
                new = {
                    **_base(b),
                    "name": f"{b['name']}-k{k // 2}-{tag}",
                    "derived_from": b["name"],
                    "settings": {**(b.get("settings") or {}), "results_per_query": k // 2},
                    "why": f"every task at full recall: the same tasks with {k // 2} results per query instead of {k}",
                }
        if new and new["name"] not in names:
            proposals.append({"kind": "add_benchmark", "benchmark": {**new, "enabled": False}})
            names.add(new["name"])
    return proposals


def _base(b: dict) -> dict:
    return {k: v for k, v in b.items() if k not in ("enabled", "why", "derived_from")}


def _write_subset(tasks_path: str, ids: set[str], out: Path) -> Path | None:
    """Copy the task lines whose id is in ``ids`` to ``out``; None if the tasks file is unreadable."""
    kept = []
    try:  # a bounded line at a time (state/files.py): the file may have changed since the benchmark read it
        for _, line in bounded_lines(tasks_path, "task file", ValueError):
            try:
                if str(json.loads(line).get("id")) in ids:
                    kept.append(line.rstrip("\r\n"))
            except (ValueError, AttributeError, RecursionError):
                continue
    except ValueError:  # not a regular file any more, a line past the bound, not UTF-8, unreadable
        return None
    if not kept:
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return out
