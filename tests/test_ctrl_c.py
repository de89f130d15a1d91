"""Ctrl-C at any moment of the `saturate` command: one line and 130, never a traceback (issues 36 and 42).

A Ctrl-C in the first 50 ms landed inside `import saturate` (typing, argparse, pydantic …) before the early handler
existed: a KeyboardInterrupt traceback and returncode -2. The handler is now the command's first instruction
(saturate/__init__.py), before anything is imported. What comes before that instruction is Python's own start
(the interpreter, site, the import machinery looking for `saturate`): a signal there is Python's to handle, so a
real signal sent at a chosen delay is checked for what is true whichever moment it lands in, and the moments from
the first instruction on are each reached deterministically (a Ctrl-C raised as each module is looked up).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, child_env, in_the_foreground

SAT = [sys.executable, "-m", "saturate.cli"]
SCRIPT = shutil.which("saturate", path=os.path.dirname(sys.executable))  # the console script pip wrote
CODE = [(ROOT / name).resolve() for name in ("saturate", "graph", "nodes", "sources", "state")]
EARLY = "saturate: interrupted before anything started; nothing was saved"


def before_saturate_ran(code: int, err: str) -> bool:
    """Whether a Ctrl-C landed while Python itself was still starting, before saturate's first instruction: killed
    by the signal before Python had a handler of its own (-2, nothing said), or a KeyboardInterrupt raised in
    Python's start (site, the import machinery looking for saturate: -2, or 1 with "Fatal Python error") whose
    traceback holds no line of saturate's code (line 0 is a module not started yet)."""
    if code == -signal.SIGINT and not err:
        return True
    frames = [(Path(f), int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+)', err)]
    ours = [f for f, n in frames if n > 0 and any(f.resolve().is_relative_to(c) for c in CODE)]
    return code in (1, -signal.SIGINT) and err.rstrip().endswith("KeyboardInterrupt") and not ours


def said_one_line(code: int, err: str) -> bool:
    return code == 130 and "Traceback" not in err and len(err.splitlines()) == 1 and err.startswith("saturate: ")


# Put on PYTHONPATH as sitecustomize.py: Python imports it at start, before it runs the console script. It raises a
# Ctrl-C as the n-th module not loaded yet is looked up ($TRIP_AT; 0: none, and the names are written at exit).
TRIP = r"""
import atexit, os, signal, sys

n, seen = int(os.environ["TRIP_AT"]), []


class Trip:
    def find_spec(self, name, path=None, target=None):
        seen.append(name)
        if len(seen) == n:
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, Trip())
if n == 0:
    atexit.register(lambda: os.write(2, ("looked up: " + " ".join(seen) + "\n").encode()))
"""


def _trip(n: int, site: Path, home: Path, *args: str, start=in_the_foreground) -> subprocess.CompletedProcess:
    """The console script run as a shell runs it (its file, by the interpreter its first line names, which is this
    one; a foreground job's Ctrl-C), with a Ctrl-C raised as the n-th module is looked up."""
    assert SCRIPT, "the console script `saturate` is not installed beside this Python (pip install -e .)"
    (site / "sitecustomize.py").write_text(TRIP)
    env = child_env(home, PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    return subprocess.run(
        [sys.executable, SCRIPT, *args],
        env={**env, "TRIP_AT": str(n)},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=start,
    )


@pytest.mark.slow
def test_a_ctrl_c_as_any_module_of_the_command_loads_is_one_line_and_130(tmp_path):
    """The console script, run as it is (`saturate settings`), with a Ctrl-C raised as the n-th module not loaded
    yet is looked up, for n from the second on (the first is `saturate` itself: the import machinery
    before saturate's first instruction) to the last, through the loading (typing, argparse, pydantic, the
    settings) and the command's own imports. Each: exit 130 and one line, the early line before `main` has read
    the arguments."""
    counted = _trip(0, tmp_path, tmp_path / "home", "settings")
    assert counted.returncode == 0, counted.stderr[-2000:]
    looked_up = counted.stderr.rsplit("looked up: ", 1)[1].split()
    assert looked_up[0] == "saturate" and "typing" in looked_up and "argparse" in looked_up, looked_up
    total = len(looked_up)
    points = sorted({2, 3, 4, *range(5, total, max(1, total // 8)), total})
    for n in points:
        run = _trip(n, tmp_path, tmp_path / "home", "settings")
        assert said_one_line(run.returncode, run.stderr), (n, looked_up[n - 1], run.returncode, run.stderr[-1500:])
        assert run.stdout == "" or run.stderr.strip() != EARLY  # "before anything started" only while it had not
    # one lookup earlier, before saturate's first instruction, the same Ctrl-C is Python's own traceback: what every
    # point above gave without the handler
    first = _trip(1, tmp_path, tmp_path / "home", "settings")
    assert first.returncode == -signal.SIGINT and before_saturate_ran(first.returncode, first.stderr), first.stderr


def _in_the_background() -> None:  # as a shell starts `saturate … &` without job control
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.slow
def test_a_ctrl_c_while_the_session_code_loads_says_nothing_was_saved(tmp_path):
    """`saturate research` loads the session code (LangGraph, numpy, …) after `main` took over; a Ctrl-C inside
    numpy's own loading left it half made, reading the session's status then failed, and the line said "the
    session is checkpointed — continue it with `saturate resume`" for a thread that did not exist."""
    task = ["research", "Where is the Bubye River?", "--max-rounds", "1", "--thread"]
    counted = _trip(0, tmp_path, tmp_path / "home", *task, "counted")
    assert counted.returncode == 0, counted.stderr[-2000:]
    looked_up = counted.stderr.rsplit("looked up: ", 1)[1].split()
    numpy = [i + 1 for i, name in enumerate(looked_up) if name.startswith("numpy")]
    # where it failed: numpy.exceptions and numpy.dtypes, after numpy's core had loaded (numpy 2); else a few of its
    # first lookups
    points = [n for n in numpy if looked_up[n - 1] in ("numpy.exceptions", "numpy.dtypes")] or numpy[:12:3]
    assert points, looked_up
    for n in points:
        run = _trip(n, tmp_path, tmp_path / "home", *task, f"cut{n}")
        assert said_one_line(run.returncode, run.stderr), (looked_up[n - 1], run.stderr[-1500:])
        assert "saved its first step; nothing to resume" in run.stderr, (looked_up[n - 1], run.stderr)
        env = child_env(tmp_path / "home")
        shown = subprocess.run([*SAT, "show", f"cut{n}"], env=env, capture_output=True, text=True, timeout=120)
        assert shown.returncode == 2 and "unknown thread" in shown.stderr  # nothing was saved indeed


@pytest.mark.slow
def test_a_command_started_with_ctrl_c_ignored_keeps_it_ignored(tmp_path):
    """A shell's background job (`saturate … &` in a script) starts with SIGINT ignored, and Python leaves it so:
    the command's handler, which took over whatever it found, no longer does — the Ctrl-C meant for the foreground
    neither stops nor kills it."""
    for n in (2, 40):
        run = _trip(n, tmp_path, tmp_path / "home", "settings", start=_in_the_background)
        assert run.returncode == 0 and "max_rounds" in run.stdout and run.stderr == "", (n, run.stderr[-1500:])


@pytest.mark.slow
@pytest.mark.parametrize("after_s", [0.0, 0.01, 0.05, 0.2])
@pytest.mark.parametrize("how", ["script", "-m"])
def test_a_real_ctrl_c_just_after_start_is_one_line_and_130_once_saturate_runs(tmp_path, after_s, how):
    """A real SIGINT right after the command is started and a little later: wherever it lands, never a traceback
    out of saturate's code — one line and 130, or, while Python itself is still starting (before saturate's first
    instruction, mostly at 0 and 10 ms), what Python does then (``before_saturate_ran``)."""
    cmd = [SCRIPT] if how == "script" and SCRIPT else SAT
    proc = subprocess.Popen(
        [*cmd, "settings"],
        env=child_env(tmp_path / "home"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=in_the_foreground,
    )
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=120)[1].decode(errors="replace")
    if proc.returncode == 0:
        return  # the command finished before the signal landed: nothing to check
    assert said_one_line(proc.returncode, err) or before_saturate_ran(proc.returncode, err), (proc.returncode, err)


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["/venv/bin/python3", "/venv/bin/saturate", "research", "x"], True),  # the console script, as a shell runs it
        (["python", "-m", "saturate.cli", "settings"], True),
        (["python", "-X", "dev", "-msaturate", "runs"], True),
        (["python", "-c", "from multiprocessing.spawn import spawn_main", "--multiprocessing-fork"], False),  # a worker
        (["python", "-m", "pytest", "-m", "saturate"], False),
        (["python", "app.py", "saturate"], False),  # a program of one's own that imports saturate
        (["python"], False),
    ],
)
def test_the_handler_is_the_commands_only(monkeypatch, argv, command):
    """Only the command itself sets the early handler: told by how the interpreter was started (sys.orig_argv),
    not by sys.argv, which a batch's spawned worker sets to the console script's as it loads it."""
    import saturate

    monkeypatch.setattr(sys, "orig_argv", argv)
    assert saturate._is_the_command() is command


def test_what_counts_as_before_saturate_ran():
    """The judge of the test above, on the outcomes seen: Python's own start (killed before its handler; a
    KeyboardInterrupt in site or the import machinery) yes; a traceback through saturate's code, a silent 130 or a
    second line, no."""
    site = 'Fatal Python error: init_import_site\n  File "<frozen site>", line 73, in <module>\nKeyboardInterrupt\n'
    assert before_saturate_ran(-signal.SIGINT, "") and before_saturate_ran(1, site)
    machinery = (
        f'  File "{SCRIPT}", line 3, in <module>\n  File "{ROOT}/saturate/__init__.py", line 0\nKeyboardInterrupt'
    )
    assert before_saturate_ran(-signal.SIGINT, machinery)
    ours = f'Traceback:\n  File "{ROOT}/saturate/__init__.py", line 57, in <module>\nKeyboardInterrupt\n'
    assert not before_saturate_ran(-signal.SIGINT, ours)
    assert not before_saturate_ran(-signal.SIGINT, "saturate: interrupted\n")
    assert said_one_line(130, EARLY + "\n") and not said_one_line(130, "") and not said_one_line(130, "a\nb\n")
    assert not said_one_line(-signal.SIGINT, EARLY + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("after_s", [0.05, 0.4, 1.2, 2.5])
def test_ctrl_c_at_any_moment_says_only_what_is_true(home, after_s):
    """Issue 36: a Ctrl-C before the first checkpoint printed a KeyboardInterrupt traceback, or said "checkpointed —
    resume" for a thread that did not exist. Whenever it lands: exit 130, one line, no traceback, and "resume" only
    when there is something to resume (then `resume` knows the thread)."""
    thread = f"early{int(after_s * 100)}"
    proc = subprocess.Popen(
        [*SAT, "research", "How does photosynthesis work?", "--thread", thread, "--max-rounds", "3"],
        env=child_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=in_the_foreground,
    )
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=120)[1]
    if proc.returncode == 0:
        return  # the session finished before the signal landed: nothing to check
    if before_saturate_ran(proc.returncode, err):  # Python itself was still starting (a machine under load)
        shown = subprocess.run([*SAT, "show", thread], env=child_env(home), capture_output=True, text=True, timeout=60)
        assert shown.returncode == 2 and "unknown thread" in shown.stderr  # nothing was saved
        return
    assert proc.returncode == 130 and "Traceback" not in err, err
    said = [line for line in err.splitlines() if line.startswith("saturate: interrupted")]
    assert len(said) <= 1, err
    if not said:  # landed as the finished session's result was written: nothing claimed, the session is done
        said = ["had finished"]
    shown = subprocess.run([*SAT, "show", thread], env=child_env(home), capture_output=True, text=True, timeout=60)
    if "saturate resume" in said[0] or "had finished" in said[0]:
        assert shown.returncode == 0, (err, shown.stderr)  # the thread it names exists
    else:
        assert "nothing" in said[0] and "run the command again" in said[0] or "nothing was saved" in said[0]
        assert shown.returncode == 2 and "unknown thread" in shown.stderr  # and nothing was saved indeed


@pytest.mark.slow
def test_a_terminal_ctrl_c_in_a_batch_is_said_once_and_truly(home, tmp_path, musique_corpus, musique_tasks):
    """A terminal's Ctrl-C goes to the whole process group, the batch's workers too. They load the console script
    (multiprocessing's spawn runs it as __mp_main__, under its sys.argv) and took the command's early handler: each
    printed "interrupted before anything started; nothing was saved" — false — and left; without it, an idle worker
    printed a KeyboardInterrupt traceback. Here one worker has finished the short task and waits (no task is left),
    the other runs a long session: the command says it once, the session under way stops checkpointed."""
    import json

    short, long = musique_tasks[:2]
    lines = [
        {"id": short["id"], "question": short["question"], "settings": {"max_rounds": 1}},
        {"id": long["id"], "question": long["question"], "settings": {"min_rounds": 40, "max_rounds": 40}},
    ]
    tasks = tmp_path / "t.jsonl"
    tasks.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out.jsonl"
    cmd = [SCRIPT] if SCRIPT else SAT
    proc = subprocess.Popen(
        [*cmd, "batch", str(tasks), "--workers", "2", "--out", str(out), "--corpus", str(musique_corpus)],
        env=child_env(home, SATURATE_NOVELTY_EPSILON="0"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's foreground job
        preexec_fn=in_the_foreground,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 1):
        time.sleep(0.05)
    assert json.loads(out.read_text().splitlines()[0])["id"] == short["id"]  # the long one still runs
    os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C: every process of the job
    err = proc.communicate(timeout=120)[1]
    said = [line for line in err.splitlines() if line.startswith("saturate:")]
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert len(said) == 1 and "nothing was saved" not in err and "re-run the same command" in said[0], err
    from saturate.graph import session_state

    assert session_state(f"t-{long['id']}")["_status"] != "done"  # it stopped where it was, checkpointed
