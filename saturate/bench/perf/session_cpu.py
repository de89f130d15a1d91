"""``session_cpu_s`` (<= 1.5 s) and ``session_peak_rss_mb`` (<= 400 MB): what a warm default ``saturate research``
costs the machine, from the command line, on the embedded corpus.

Five fixed questions, each run ``session_runs`` times (3; the order reversed every other pass, so a burst of load
hits every question alike) in one data folder that already holds the corpus's index and vectors (an untimed first
session puts them there). Before each run the search cache (``cache.db``) is emptied: each session searches the
corpus as a question new to the data folder does, instead of replaying the results of the run before.

- ``session_cpu_s``: the median CPU seconds (user + system) of a session's process, its children included
  (``os.wait4``'s resource usage: CPU time, not wall time, so it moves less with other work on the machine);
- ``session_peak_rss_mb``: the largest peak resident memory (max RSS) among those sessions.

The ONNX models' optimised graphs (``state/onnx_cache.py``) are kept in the work directory (the untimed session
writes them); each timed session is followed by the same one with ``SATURATE_MODEL_CACHE=off``, whose CPU and peak
memory are printed as baselines: that cut measured before and after in the same run.

Beside them, the **import share**: the modules the session imported (read from one untimed run with
``PYTHONPROFILEIMPORTTIME=1``, the ``-X importtime`` of Python, in the order it imported them) imported again in a
bare interpreter, its CPU measured the same way, interleaved with the sessions; and ``python -c pass``.

The bytecode cache is warm, as in any installed package: the sessions run with ``PYTHONPYCACHEPREFIX`` in the work
directory (written by the untimed runs) and without ``PYTHONDONTWRITEBYTECODE``, so that compiling saturate's own
modules on every start is not counted where the environment forbids writing ``__pycache__``.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from saturate.bench.perf.cli_help import heaviest_imports
from saturate.bench.perf.common import ROOT, SEED, Figure, baseline, clean_env, saturate_command

QUESTIONS = (
    "What is the capital of Canada?",
    "How does photosynthesis convert light into chemical energy?",
    "What is the speed of light?",
    "Who painted the Mona Lisa?",
    "What is the name of the waterfall on the Zambezi river between Zambia and Zimbabwe?",
)
CACHE_FILES = ("cache.db", "cache.db-wal", "cache.db-shm")


def session_env(home: Path, pycache: Path, **extra: str) -> dict:
    """The sessions' environment: ``clean_env(home)`` with the bytecode cache in ``pycache`` (see the module's text)."""
    env = clean_env(home, PYTHONPYCACHEPREFIX=str(pycache), **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# Linux keeps a process's peak RSS across fork and exec: a child started by this (by then large) benchmark process
# reported the benchmark's own peak (2,239 MB for a 373 MB session). So a small launcher starts the command and
# reports what os.wait4 says of it: the launcher's own memory, not ours, is what the command starts from.
LAUNCHER = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)\n"
    "_, status, u = os.wait4(p.pid, 0)\n"
    "print(os.waitstatus_to_exitcode(status), u.ru_utime + u.ru_stime, u.ru_maxrss)"
)


def cpu_and_rss(cmd: list[str], env: dict) -> tuple[float, float]:
    """(CPU seconds, user + system, of ``cmd`` and the children it waited for; its peak RSS in MB), run from ROOT with
    its output discarded (through ``LAUNCHER``); a failure raises with the end of its stderr."""
    with tempfile.TemporaryFile() as err:
        done = subprocess.run(
            [sys.executable, "-c", LAUNCHER, *cmd],
            env=env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        fields = done.stdout.decode("ascii", "replace").split()
        code = int(fields[0]) if len(fields) == 3 else done.returncode or 1
        if code != 0:
            err.seek(0)
            tail = err.read().decode("utf-8", "replace").strip()[-2000:]
            raise RuntimeError(f"`{shlex.join(cmd)}` exited {code}:\n{tail}")
    return float(fields[1]), int(fields[2]) / 1024.0  # Linux: ru_maxrss in KB


def imported_modules(importtime: str) -> list[str]:
    """The modules a process imported at the top of its import stack (``-X importtime`` lines at depth 0, in order):
    importing them again imports everything it imported. ``__main__`` modules are left out (they would run)."""
    out: list[str] = []
    for line in importtime.splitlines():
        parts = line.split("|")
        if not line.startswith("import time:") or len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        if name.startswith(" ") and not name.startswith("  "):  # depth 0: one space after the bar
            mod = name.strip()
            if not mod.endswith("__main__") and mod not in out:
                out.append(mod)
    return out


def import_replay_code(modules: list[str]) -> str:
    """Python code importing ``modules`` in order (one that fails is skipped: it failed in the session too), with the
    garbage collector paused and what was imported then frozen, as the command imports its engine
    (``saturate.cli.loading``): the replay costs what the imports cost the session."""
    lines = ["import gc, importlib", "gc.disable()"]
    lines += [f"try:\n    importlib.import_module({m!r})\nexcept Exception:\n    pass" for m in modules]
    lines += ["gc.freeze()", "gc.enable()"]
    return "\n".join(lines)


def _measure(work: Path, p: dict, shared: dict) -> dict:
    """The runs of both figures, measured once."""
    if "session_cpu" in shared:
        return shared["session_cpu"]
    base, exe_desc = saturate_command()
    questions = QUESTIONS[:1] if p["quick"] else QUESTIONS
    runs = p["session_runs"]
    home, pycache = work / "session-cpu-home", work / "session-cpu-pycache"

    def cmd(q: str) -> list[str]:
        return base + ["research", q, "--seed", str(SEED)]

    # the models' optimised graphs (state/onnx_cache.py) in the work directory, written by the untimed run: the
    # figure is a warm session's wherever the user's cache is; the same sessions without them (the cut of issue 46
    # measured in the same run) are interleaved with them
    env = session_env(home, pycache, SATURATE_MODEL_CACHE=str(work / "session-cpu-models"))
    env_uncached = session_env(home, pycache, SATURATE_MODEL_CACHE="off")
    # untimed: the index and vectors put in place, the bytecode cache written, the imports recorded (--quick: by the
    # profiled run alone, whose recorded imports then include the index's)
    if not p["quick"]:
        cpu_and_rss(cmd(questions[0]), env)
    profiled = subprocess.run(
        cmd(questions[0]), env=session_env(home, pycache, PYTHONPROFILEIMPORTTIME="1"), cwd=ROOT, capture_output=True
    )
    importtime = profiled.stderr.decode("utf-8", "replace")
    if profiled.returncode != 0:
        code = profiled.returncode
        raise RuntimeError(f"the session with PYTHONPROFILEIMPORTTIME=1 exited {code}:\n{importtime[-2000:]}")
    modules = imported_modules(importtime)
    replay = [sys.executable, "-c", import_replay_code(modules)]
    bare = [sys.executable, "-c", "pass"]
    cpu_and_rss(replay, env)  # its bytecode cached too
    sessions: dict[str, list[float]] = {q: [] for q in questions}
    rss: list[float] = []
    uncached: list[float] = []
    uncached_rss: list[float] = []
    imports: list[float] = []
    python: list[float] = []

    def session(q: str, environment: dict) -> tuple[float, float]:
        for name in CACHE_FILES:  # the search cache emptied: the question is new to the data folder
            (home / name).unlink(missing_ok=True)
        return cpu_and_rss(cmd(q), environment)

    for r in range(runs):
        for q in questions if r % 2 == 0 else questions[::-1]:
            cpu, peak = session(q, env)
            sessions[q].append(cpu)
            rss.append(peak)
            cpu, peak = session(q, env_uncached)
            uncached.append(cpu)
            uncached_rss.append(peak)
        imports.append(cpu_and_rss(replay, env)[0])
        python.append(cpu_and_rss(bare, env)[0])
    everything = [x for v in sessions.values() for x in v]
    top_level_ms = sum(
        int(parts[1]) / 1000.0
        for parts in (line.split("|") for line in importtime.splitlines() if line.startswith("import time:"))
        if len(parts) == 3 and parts[1].strip().isdigit() and parts[2].startswith(" ") and parts[2][1] != " "
    )
    shared["session_cpu"] = {
        "questions": questions,
        "runs": runs,
        "sessions": sessions,
        "cpu": statistics.median(everything),
        "rss": rss,
        "uncached": statistics.median(uncached),
        "uncached_rss": max(uncached_rss),
        "imports": statistics.median(imports),
        "python": statistics.median(python),
        "modules": len(modules),
        "importtime_ms": top_level_ms,
        "heaviest": heaviest_imports(importtime),
        "cmd": cmd("QUESTION"),
        "script": exe_desc,
    }
    return shared["session_cpu"]


def _how(m: dict) -> str:
    return (
        f"SATURATE_HOME=<a warm data folder> {shlex.join(m['cmd'])} (cwd {ROOT}) for {len(m['questions'])} questions "
        f"x {m['runs']} runs, the search cache emptied before each, bytecode cached (PYTHONPYCACHEPREFIX); CPU = user "
        "+ system of the process and its children (os.wait4); import share: the session's imports (-X importtime, "
        "one untimed run) replayed in a bare interpreter, measured alike and interleaved; the models' optimised "
        "graphs in the work directory (SATURATE_MODEL_CACHE), each session also run without them, interleaved"
    )


def bench_session_cpu(work: Path, p: dict, shared: dict) -> Figure:
    m = _measure(work, p, shared)
    cpu, imports, python = m["cpu"], m["imports"], m["python"]
    share = imports / cpu if cpu else 0.0
    fig = Figure(
        key="session_cpu_s",
        value=cpu,
        unit="s",
        op="<=",
        limit=1.5,
        baselines={
            "imports_cpu_s": baseline(imports, "s"),
            "import_share": baseline(share, "x"),
            "python_startup_cpu_s": baseline(python, "s"),
            "without_model_graphs_cpu_s": baseline(m["uncached"], "s"),
        },
        command=_how(m),
        details={
            "cpu_s_by_question": {q: [round(x, 3) for x in v] for q, v in m["sessions"].items()},
            "import_cpu_s": round(imports, 3),
            "after_imports_cpu_s": round(cpu - imports, 3),
            "modules_imported": m["modules"],
            "importtime_top_level_ms": round(m["importtime_ms"], 1),
            "heaviest_imports_by_saturate_ms": {f"{n} (by {by})": round(ms, 1) for n, by, ms in m["heaviest"]},
            "script": m["script"],
        },
    )
    fig.extra_rows.append(("session_after_imports_cpu_s", cpu - imports, "s"))
    fig.notes.append(
        f"a warm session {cpu:.2f} s of CPU, of which its imports {imports:.2f} s ({share:.0%}: {m['modules']} "
        f"top-level imports replayed; -X importtime's own sum {m['importtime_ms'] / 1000:.2f} s of wall time); "
        f"python -c pass {python:.3f} s; without the models' optimised graphs kept (SATURATE_MODEL_CACHE=off, the "
        f"same sessions interleaved) {m['uncached']:.2f} s"
        + (
            "; heaviest imports by saturate's modules: "
            + ", ".join(f"{n} {ms:.0f} ms (by {by})" for n, by, ms in m["heaviest"])
            if m["heaviest"]
            else ""
        )
    )
    return fig


def bench_session_rss(work: Path, p: dict, shared: dict) -> Figure:
    m = _measure(work, p, shared)
    peak = max(m["rss"])
    return Figure(
        key="session_peak_rss_mb",
        value=peak,
        unit="MB",
        op="<=",
        limit=400,
        baselines={
            "median_peak_rss_mb": baseline(statistics.median(m["rss"]), "MB"),
            "without_model_graphs_peak_rss_mb": baseline(m["uncached_rss"], "MB"),
        },
        command=f"the largest max RSS (os.wait4) of the sessions of session_cpu_s: {_how(m)}",
        details={"peak_rss_mb_runs": [round(x, 1) for x in m["rss"]]},
    )
