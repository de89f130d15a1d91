"""Figure 7, ``saturate_help_s`` (<= 0.3 s): ``saturate --help`` as a subprocess, the console script next
to the interpreter (else ``python -m saturate.cli``), median of several runs interleaved with its
baseline, bare python (``python -c pass``).

One untimed run with ``PYTHONPROFILEIMPORTTIME=1`` comes first (it also warms the OS file cache): the
heaviest packages that saturate's own modules import go into the details and a note, so a missed target
says where the time goes.
"""

from __future__ import annotations

import shlex
import statistics
import sys
from pathlib import Path

from saturate.bench.perf.common import (
    ROOT,
    Figure,
    baseline,
    clean_env,
    run_command,
    saturate_command,
    time_commands,
)


def heaviest_imports(importtime: str, top: int = 5) -> list[tuple[str, str, float]]:
    """(package, imported by, ms) of the slowest packages outside saturate that saturate's own modules
    import directly (the cumulative times of those imports, summed per top-level package), read from
    ``-X importtime`` output, where children are printed before their parent."""
    entries = []
    for line in importtime.splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        entries.append(((len(name) - len(name.lstrip()) - 1) // 2, name.strip(), int(parts[1]) / 1000.0))
    ms: dict[str, float] = {}
    by: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []  # read backwards, the output is a pre-order walk: parents first
    for depth, name, cum_ms in reversed(entries):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        if parent.startswith("saturate.") and not name.startswith("saturate."):
            package = name.split(".")[0]
            ms[package] = ms.get(package, 0.0) + cum_ms
            by.setdefault(package, [])
            if parent not in by[package]:
                by[package].append(parent)
        stack.append((depth, name))
    heaviest = sorted(ms, key=lambda k: ms[k], reverse=True)[:top]
    return [(package, ", ".join(by[package]), ms[package]) for package in heaviest]


def bench_help(work: Path, p: dict, shared: dict) -> Figure:
    base, exe_desc = saturate_command()
    cmd = base + ["--help"]
    bare = [sys.executable, "-c", "pass"]
    env0 = clean_env()
    profiled = run_command(cmd, clean_env(PYTHONPROFILEIMPORTTIME="1"))  # untimed; warms the OS file cache
    heavy = heaviest_imports(profiled.stderr)
    runs = time_commands({"help": (cmd, env0), "bare": (bare, env0)}, {"help": p["help_runs"], "bare": p["help_runs"]})
    value, bare_m = statistics.median(runs["help"]), statistics.median(runs["bare"])
    fig = Figure(
        key="saturate_help_s",
        value=value,
        unit="s",
        op="<=",
        limit=0.3,
        baselines={"python_startup_s": baseline(bare_m, "s")},
        command=(
            f"{shlex.join(cmd)}  (cwd {ROOT}; median of {len(runs['help'])} runs interleaved with the baseline, "
            f"after one untimed run with PYTHONPROFILEIMPORTTIME=1); baseline: {shlex.join(bare)}"
        ),
        details={
            "help_runs_s": [round(x, 3) for x in runs["help"]],
            "python_startup_runs_s": [round(x, 3) for x in runs["bare"]],
            "help_minus_python_s": round(value - bare_m, 3),
            "heaviest_imports_by_saturate_ms": {f"{name} (by {parent})": round(ms, 1) for name, parent, ms in heavy},
            "script": exe_desc,
        },
    )
    fig.notes.append(
        f"saturate --help {value:.2f} s vs python -c pass {bare_m:.2f} s: {value - bare_m:+.2f} s for imports and "
        "argument parsing"
        + (
            "; heaviest imports by saturate's modules: "
            + ", ".join(f"{name} {ms:.0f} ms (by {parent})" for name, parent, ms in heavy)
            if heavy
            else ""
        )
    )
    return fig
