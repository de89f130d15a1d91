"""``saturate monitor``: the monitor's command line (``add_arguments`` + ``run``, wired by the parser).

Plain text, one line per item; ``--json`` prints the same data as JSON. Exit 0, or 2 when an
operation is refused (the reason is printed on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys

from saturate.cli.output import EXIT_BAD_INPUT, say
from saturate.monitor.core import Monitor
from saturate.monitor.harness import MonitorError
from saturate.monitor.store import SNAPSHOT_RETENTION_DAYS, iso


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``saturate monitor`` flags (the caller's parser keeps its own --home)."""
    act = parser.add_mutually_exclusive_group()
    act.add_argument("--show", type=int, metavar="ID", help="an expansion: proposals, research answer and sources")
    act.add_argument("--approve", type=int, metavar="ID", help="approve a pending expansion (needs --by)")
    act.add_argument("--reject", type=int, metavar="ID", help="reject a pending or approved expansion (needs --by)")
    act.add_argument("--apply", type=int, metavar="ID", help="apply an approved expansion (one-way ratchet)")
    act.add_argument(
        "--prune", action="store_true", help=f"delete cycle snapshots older than {SNAPSHOT_RETENTION_DAYS} days"
    )
    parser.add_argument("--by", metavar="NAME", help="who approves or rejects")
    parser.add_argument("--json", action="store_true", help="print JSON instead of lines")


def run(args: argparse.Namespace) -> int:
    """``saturate monitor``: status by default; --show/--approve/--reject/--apply/--prune. 0 ok, 2 refused."""
    try:
        with Monitor(home=getattr(args, "home", None)) as mon:
            if args.approve is not None or args.reject is not None:
                if not args.by:
                    raise MonitorError(f"--{'approve' if args.approve is not None else 'reject'} needs --by NAME")
                if args.approve is not None:
                    out = mon.approve(args.approve, args.by)
                else:
                    out = mon.reject(args.reject, args.by)
                lines = [f"expansion {out['id']}: {out['status']} by {out['approved_by']}"]
                if out["status"] == "approved":
                    lines.append(f"apply it with: saturate monitor --apply {out['id']}")
            elif args.apply is not None:
                out = mon.apply(args.apply)
                new = out["new_checks"]
                lines = [
                    f"expansion {args.apply}: applied as harness version {out['version']} "
                    f"(version {out['parent']} archived)"
                ]
                lines += [f"raised threshold {n}: {out['config']['thresholds'][n]:g}" for n in new["thresholds"]]
                lines += [f"added benchmark {n} (disabled; the bench enables one per cycle)" for n in new["benchmarks"]]
            elif args.prune:
                out = {"pruned": mon.prune()}
                lines = [f"pruned {out['pruned']} cycle snapshot(s) older than {SNAPSHOT_RETENTION_DAYS} days"]
            elif args.show is not None:
                out = mon.expansion(args.show)
                lines = expansion_lines(out)
            else:
                out = mon.status()
                lines = status_lines(out)
    except MonitorError as exc:
        say(f"saturate: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    say(json.dumps(out, ensure_ascii=False, indent=2, default=str) if args.json else "\n".join(lines))
    return 0


def status_lines(s: dict) -> list[str]:
    if not s["cycles"]:
        lines = [f"level: none yet (no cycles recorded in {s['db']})"]
    else:
        agg, rm, c = s["aggregate"], s["aggregate"]["rolling_metrics"], s["consistency"]
        lines = [
            f"level: {s['level']} (score {s['score']:.3f}, cycle {s['last_cycle']} at {iso(s['last_ts'])})",
            f"trend: {rm['saturation_trend']}, slope {s['trend_slope']:+.4f} per cycle; "
            f"rolling average {rm['avg_saturation_score']:.3f} over the last {agg['cycles_tracked']} cycles",
            f"consecutive: {rm['consecutive_high_count']} HIGH, {rm['consecutive_critical_count']} CRITICAL "
            f"({s['cycles']} cycles in all)",
            f"consistency: {c['action']} (urgency {c['urgency']}): {c['reason'] or 'no consistent saturation'}",
        ]
    h = s["harness"]
    if h:
        lines.append(
            f"harness: version {h['version']}"
            + (f" (parent {h['parent']})" if h["parent"] else "")
            + f", {len(h['thresholds'])} thresholds, {len(h['enabled'])} benchmarks enabled, "
            f"{len(h['disabled'])} disabled" + ("" if h["settled"] else ", new checks being evaluated")
        )
    else:
        lines.append("harness: none registered yet")
    for e in s["pending_expansions"]:
        err = "; research failed" if e["research_error"] else ""
        lines.append(
            f"pending expansion {e['id']}: {e['kind']} ({e['trigger_reason']}), {e['status']} since {iso(e['ts'])}, "
            f"{e['proposals']} proposals, "
            f"research thread {e['thread_id']}{err} (saturate monitor --show {e['id']})"
        )
    if not s["pending_expansions"]:
        lines.append("pending expansions: none")
    lines += [f"flagged for review: harness version {v['version']}: {v['note']}" for v in s["flagged_versions"]]
    return lines


def expansion_lines(e: dict) -> list[str]:
    at = "" if e.get("score_at_trigger") is None else f", rolling average {e['score_at_trigger']:.2f}"
    lines = [
        f"expansion {e['id']}: {e['kind']}, {e['status']}, triggered at {iso(e['ts'])} after cycle {e['cycle_id']}"
        + (f" ({e['trigger_reason']}, urgency {e['urgency']}{at})" if e.get("trigger_reason") else "")
        + (f", decided by {e['approved_by']}" if e["approved_by"] else "")
        + (f", applied as version {e['applied_version']}" if e["applied_version"] else "")
    ]
    for i, p in enumerate(e["proposals"], 1):
        if p.get("kind") == "raise_threshold":
            lines.append(f"proposal {i}: raise threshold {p['name']} from {p['from']:g} to {p['to']:g}")
        elif p.get("kind") == "add_benchmark":
            b = p["benchmark"]
            line = f"proposal {i}: add benchmark {b['name']} (tasks {b['tasks']}): {b.get('why', '')}"
            lines.append(line.rstrip(": "))
        else:
            lines.append(f"proposal {i}: {json.dumps(p)}")
    lines.append(f"research ({e['thread_id']}): {' '.join(e['answer'].split()) or '(no answer)'}")
    lines += [f"source [{s['n']}] {s['title']} — {s['url']}" for s in e["sources"]]
    if e["research_error"]:
        lines.append(f"research error: {e['research_error']}")
    if e["note"]:
        lines.append(f"note: {e['note']}")
    return lines
