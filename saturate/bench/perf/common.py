"""What every measurement of ``saturate bench perf`` shares: the Figure, number formatting, the timing
helpers, the inputs (tasks, corpora), the subprocess commands and the environment header.

Only the standard library is imported at module level: the CLI imports this package to build its
parser, so ``saturate --help`` must not pay for it.
"""

from __future__ import annotations

import functools
import os
import platform
import resource
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from saturate.graph.paths import eval_data_if_named
from saturate.graph.session import InputError
from saturate.sources import LocalCorpus, open_wiki
from saturate.sources.wiki import wiki_data_path
from saturate.sources.wiki import wiki_records as read_records
from saturate.state.files import MAX_EVAL_FILE_BYTES, bounded_jsonl, regular_file

ROOT = Path.cwd()  # subprocesses (cold start, workers) run from where the benchmark was started
# the evaluation data when $SATURATE_EVAL_DATA names it; None, or files missing from it: the fallbacks below
EVAL_DATA = eval_data_if_named()
MUSIQUE_CORPUS = EVAL_DATA / "musique" / "corpus.jsonl" if EVAL_DATA else None
TASK_FILES = (EVAL_DATA / "musique" / "tasks.jsonl", EVAL_DATA / "hotpotqa" / "tasks.jsonl") if EVAL_DATA else ()

SEED = 7
DURABILITY = "sync"

# Used when the evaluation data is not named or has no musique/: questions the embedded Wikipedia corpus can answer.
FALLBACK_TASKS = [
    "What is the name of the waterfall on the Zambezi river between Zambia and Zimbabwe?",
    "How does photosynthesis convert light into chemical energy?",
    "Who painted the ceiling of the Sistine Chapel and in which city is it?",
    "Which empire built Machu Picchu and when was it abandoned?",
    "What causes the seasons on Earth and how does axial tilt matter?",
    "Who wrote On the Origin of Species and what voyage inspired it?",
    "How do vaccines train the immune system against viruses?",
    "What language family does Hungarian belong to?",
    "Which river flows through Baghdad and into the Persian Gulf?",
    "Who was the first person to walk on the Moon and on which mission?",
    "What is the capital of Australia and why was it chosen?",
    "How did the printing press of Johannes Gutenberg change Europe?",
]

# repetitions: full run / --quick
PLAN: dict[bool, dict[str, Any]] = {
    False: {
        "quick": False,
        "ovh_tasks": 12,
        "ovh_reps": 2,
        "nov_calls": 2000,
        "nov_slow_calls": 30,
        "fts_titles": 250,
        "fts_descriptions": 250,
        "fts_questions": 400,
        "cache_queries": 300,
        "cold_runs": 2,
        "warm_runs": 2,
        "import_runs": 2,
        "help_runs": 9,
        "sessions": 60,
        "workers": (2, 4),
        "async_conc": 4,
        "processes": 2,
        "session_runs": 3,
    },
    True: {
        "quick": True,
        "ovh_tasks": 2,
        "ovh_reps": 1,
        "nov_calls": 100,
        "nov_slow_calls": 5,
        "fts_titles": 40,
        "fts_descriptions": 40,
        "fts_questions": 40,
        "cache_queries": 40,
        "cold_runs": 1,
        "warm_runs": 1,
        "import_runs": 1,
        "help_runs": 3,
        "sessions": 4,
        "workers": (2,),
        "async_conc": 2,
        "processes": 0,
        "session_runs": 1,
    },
}


# ------------------------------------------------------------------ figures and formatting


@dataclass
class Figure:
    key: str
    value: float
    unit: str
    op: str  # "<=" or ">="
    limit: float
    baselines: dict[str, dict]  # name -> {"value", "unit"}
    command: str  # what produced the figure
    details: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    extra_rows: list[tuple[str, float, str]] = field(default_factory=list)  # shown under the figure, no target

    @property
    def target(self) -> str:
        return f"{self.op} {self.limit:g} {self.unit}"

    @property
    def met(self) -> bool:
        return self.value <= self.limit if self.op == "<=" else self.value >= self.limit

    def as_json(self) -> dict:
        return {
            "value": num(self.value),
            "unit": self.unit,
            "target": self.target,
            "met": self.met,
            "baselines": {k: {"value": num(v["value"]), "unit": v["unit"]} for k, v in self.baselines.items()},
            "details": self.details,
            "command": self.command,
            "notes": self.notes,
        }


def num(x: float) -> float:
    """Six significant digits, for JSON."""
    return float(f"{float(x):.6g}")


def baseline(value: float, unit: str) -> dict:
    return {"value": float(value), "unit": unit}


def fmt(value: float, unit: str = "") -> str:
    v = float(value)
    s = f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
    if abs(v) < 0.01 and v != 0:
        s = f"{v:.2e}"
    return f"{s} {unit}".strip()


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ timing (every figure is measured with these)


class Stopwatch:
    """Wall time of a ``with`` block (``time.perf_counter``); works around awaits and thread pools too."""

    seconds: float = 0.0

    def __enter__(self) -> Stopwatch:
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._t0

    @property
    def ms(self) -> float:
        return self.seconds * 1000.0


def latencies_ms(fn: Callable[[Any], Any], items: Iterable[Any]) -> list[float]:
    """The latency (ms) of ``fn(item)`` for each item, one call each."""
    out = []
    for item in items:
        with Stopwatch() as sw:
            fn(item)
        out.append(sw.ms)
    return out


def per_call_ms(fn: Callable[[], Any], calls: int, batches: int = 5) -> tuple[float, list[float]]:
    """Median over ``batches`` of the mean time per call (ms) of ``calls // batches`` calls each, after one
    warm-up call (``timeit``, with the garbage collector left on, as in the code being measured)."""
    n = max(1, calls // batches)
    fn()  # warm
    timer = timeit.Timer(fn, setup="gc.enable()", timer=time.perf_counter)
    means = [total * 1000.0 / n for total in timer.repeat(repeat=batches, number=n)]
    return statistics.median(means), means


def percentile(values: list[float], p: int) -> float:
    """Percentile p (1-99), linear interpolation between closest ranks."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def clean_env(home: Path | None = None, **extra: str) -> dict:
    """The caller's environment without SATURATE_* settings; ``home`` becomes SATURATE_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_")}
    if home is not None:
        env["SATURATE_HOME"] = str(home)
    return {**env, **extra}


def run_command(cmd: list[str], env: dict) -> subprocess.CompletedProcess:
    """Run ``cmd`` from ROOT; a failure raises with the end of its stderr."""
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`{shlex.join(cmd)}` exited {proc.returncode}:\n{proc.stderr.strip()[-2000:]}")
    return proc


def time_command(cmd: list[str], env: dict) -> float:
    """Wall seconds of one run of ``cmd`` (a subprocess, interpreter start-up included)."""
    with Stopwatch() as sw:
        run_command(cmd, env)
    return sw.seconds


def time_commands(commands: dict[str, tuple[list[str], dict]], runs: dict[str, int]) -> dict[str, list[float]]:
    """Wall seconds of each named command, ``runs[name]`` times, interleaved so that a burst of load from
    other processes hits every command alike."""
    out: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(max(runs.values(), default=0)):
        for name, (cmd, env) in commands.items():
            if i < runs[name]:
                out[name].append(time_command(cmd, env))
    return out


def saturate_command() -> tuple[list[str], str]:
    """The installed console script next to the interpreter (else on PATH, else ``python -m saturate.cli``)."""
    here = Path(sys.executable).parent
    exe = shutil.which("saturate", path=str(here)) or shutil.which("saturate")
    if exe:
        return [exe], exe
    cmd = [sys.executable, "-m", "saturate.cli"]
    return cmd, f"{shlex.join(cmd)} (no saturate script found)"


# ------------------------------------------------------------------ inputs


def read_jsonl(path: Path) -> list[dict]:
    """The records of a task file of the evaluation data, each with a "question" string: read a bounded line at a
    time (state/files.py); a damaged file (not JSON, not UTF-8, too large, a FIFO) is InputError, one line."""
    rows = [rec for _, rec in bounded_jsonl(path, "task file", InputError)]
    for n, rec in enumerate(rows, 1):
        if not isinstance(rec.get("question"), str):
            raise InputError(f"{path}: record {n} has no question")
    return rows


def questions() -> list[str]:
    """Multi-hop questions of the evaluation data (musique first), or the built-in fallback list."""
    out: list[str] = []
    for path in TASK_FILES:
        if path.exists():
            out += [t["question"] for t in read_jsonl(path)]
    return out or list(FALLBACK_TASKS)


def session_tasks(n: int) -> list[str]:
    """n musique questions (cycled), or the built-in fallback list."""
    path = TASK_FILES[0] if TASK_FILES else None
    qs = [t["question"] for t in read_jsonl(path)] if path and path.exists() else list(FALLBACK_TASKS)
    return [qs[i % len(qs)] for i in range(n)]


def task_corpus_file() -> Path | None:
    """The corpus the sessions' tasks are asked of: the musique corpus if present, else None (the embedded one)."""
    return MUSIQUE_CORPUS if MUSIQUE_CORPUS is not None and MUSIQUE_CORPUS.exists() else None


def task_corpus(index_dir: Path, corpus: Path | None = None):
    """(source, description) over ``corpus``, else the embedded Wikipedia one. A worker process opens the corpus its
    parent names: its environment is the parent's without SATURATE_*, so it cannot find the evaluation data itself
    (issue 42: the worker sessions ran on the embedded corpus while the others ran on musique's)."""

    if corpus is not None:  # the evaluation data's: a regular file within its bound (state/files.py)
        regular_file(corpus, "corpus", InputError, max_bytes=MAX_EVAL_FILE_BYTES)
        return LocalCorpus.open(corpus, index_dir), f"LocalCorpus.open({rel(corpus)})"
    return open_wiki(index_dir), "open_wiki() (embedded corpus; no musique/ in $SATURATE_EVAL_DATA)"


@functools.lru_cache(maxsize=1)
def wiki_records() -> list[dict]:
    """The embedded corpus's records ({id, title, text, url}), read once."""

    return list(read_records(wiki_data_path()))


def runtime(context):
    """LangGraph's own Runtime for calling nodes outside a graph (no-op stream writer, no store)."""

    return Runtime(context=context)


def rel(path: Path) -> str:
    try:
        return os.path.relpath(path, ROOT)
    except ValueError:
        return str(path)


# ------------------------------------------------------------------ environment header


def command_line() -> str:
    """The command that started this process, as the user typed it (``python -m NAME`` when run as a module)."""
    argv = sys.argv[1:]
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        return shlex.join([sys.executable, "-m", spec.name.removesuffix(".__main__"), *argv])
    return shlex.join([Path(sys.argv[0]).name if sys.argv else "python", *argv])


def git_rev() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5, check=False
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if rev.returncode:
            return "unknown"
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class CpuWatch:
    """CPU used by *other* processes while the benchmark ran (machine busy time minus our own)."""

    def __init__(self):
        self.t0, self.busy0, self.own0 = time.perf_counter(), self._busy(), self._own()

    @staticmethod
    def _busy() -> float | None:
        try:
            with open("/proc/stat") as fh:
                f = [int(x) for x in fh.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        busy = sum(f[:3]) + sum(f[5:8])  # user nice system + irq softirq steal
        return busy / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _own() -> float:

        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    def others(self) -> float | None:
        """Average number of CPUs other processes kept busy since start."""
        busy = self._busy()
        if busy is None or self.busy0 is None:
            return None
        wall = time.perf_counter() - self.t0
        return max(0.0, (busy - self.busy0) - (self._own() - self.own0)) / wall if wall > 0 else None


def header(args, work: Path) -> list[str]:
    """The command line, the code and the machine: the first lines of every report."""

    try:
        lg = version("langgraph")
    except PackageNotFoundError:
        lg = "?"
    run = "quick" if getattr(args, "quick", False) else "full"
    return [
        f"$ {getattr(args, 'command_line', None) or command_line()}",
        (
            f"  cwd {Path.cwd()} · commit {git_rev()} · python {platform.python_version()} · langgraph {lg} · "
            f"sqlite {sqlite3.sqlite_version} · {os.cpu_count()} cpus · {run} run"
        ),
        f"  workdir {work}",
    ]
