"""The CLI starts fast: help, settings and argument errors import no LangGraph, LangChain or matplotlib.

Each command runs in a fresh interpreter (``saturate.cli.main``), which then writes the
names of every module it imported; the heavy ones must not be among them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from saturate.graph.models import ModelUnavailable
from saturate.graph.session import InputError
from saturate.monitor.harness import MonitorError
from saturate.sources.local import CorpusError
from saturate.state.errors import BadInput
from saturate.state.settings import SettingsError

from conftest import ROOT

HEAVY = ("langgraph", "langchain", "matplotlib")

RUN = """
import contextlib, io, json, sys
from saturate.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        code = main(json.loads(sys.argv[1]))
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(), "modules": sorted(sys.modules)}))
"""


def run_main(argv: list[str], home) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_")}
    p = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(argv)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "SATURATE_HOME": str(home)},
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize(
    "argv,code,expected",
    [
        (["--help"], 0, "research"),
        (["research", "--help"], 0, "--max-rounds"),
        (["settings"], 0, "max_rounds = 5"),
        (["settings", "--markdown"], 0, "| `max_rounds` |"),
        (["research"], 2, "the following arguments are required: task"),
        (["research", "x", "--max-rounds", "abc"], 2, "max_rounds: Input should be a valid integer"),
    ],
)
def test_light_commands_import_nothing_heavy(tmp_path, argv, code, expected):
    r = run_main(argv, tmp_path / "home")
    assert r["code"] == code, r["err"]
    assert expected in (r["out"] if code == 0 else r["err"])
    heavy = [m for m in r["modules"] if m.startswith(HEAVY)]
    assert not heavy, f"saturate {' '.join(argv)} imported {heavy[:10]}"


def test_bad_input_is_one_line_on_stderr(tmp_path):
    r = run_main(["research", "x", "--max-rounds", "abc"], tmp_path / "home")
    assert r["code"] == 2 and r["out"] == ""
    assert r["err"].startswith("saturate: error: ") and r["err"].count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["research", "x", "--max-round", "3"], "--max-rounds"),  # a prefix is not taken for the flag
        (["research", "x", "--max_rounds", "3"], "--max-rounds"),
        (["verify", "x", "--novelty-treshold=2"], "--novelty-threshold"),
        (["show", "t", "--htm", "r.html"], "--html"),
        (["bench", "natural", "--limt", "3"], "--limit"),  # a bench kind's flags, added when it is parsed
    ],
)
def test_an_unknown_flag_is_one_line_naming_the_nearest(home, capsys, argv, meant):
    """Issue 42: the CLI's settings (and every other flag) as the Python API's keywords: an unknown one is refused
    in one line, exit 2, naming the nearest flag of that command; nothing is suggested when nothing is near."""
    from saturate.cli import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1, err
    assert f"unrecognized arguments: {' '.join(argv[2:])}; did you mean {meant}? (see `saturate {argv[0]}" in err
    with pytest.raises(SystemExit) as exited:
        main(["research", "x", "--zzz", "3"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "unrecognized arguments: --zzz 3 (see" in err and "did you mean" not in err


def test_every_bad_input_error_is_a_badinput():
    for error in (SettingsError, InputError, CorpusError, MonitorError, ModelUnavailable):
        assert issubclass(error, BadInput) and issubclass(error, ValueError)


@pytest.mark.parametrize("argv", [["settings", "--markdown"], ["--help"], ["research", "--help"]])
def test_closed_pipe_exits_quietly(tmp_path, argv):
    """`saturate settings --markdown | head`: the reader leaves first; no BrokenPipeError traceback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_")}
    p = subprocess.Popen(
        [sys.executable, "-m", "saturate.cli", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**env, "SATURATE_HOME": str(tmp_path)},
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # before the command writes anything
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) in (0, 141) and "Traceback" not in err and "BrokenPipe" not in err, err


def test_help_and_table_show_ranges_and_design_names(tmp_path):
    r = run_main(["research", "--help"], tmp_path)
    text = " ".join(r["out"].split())
    assert "Default: 5. Range: 1–50. Design: MAX_SEARCH_ROUNDS." in text
    r = run_main(["settings", "--markdown"], tmp_path)
    row = next(line for line in r["out"].splitlines() if line.startswith("| `max_rounds`"))
    assert "`MAX_SEARCH_ROUNDS`" in row and "| 1–50 |" in row
    assert all(line.count("|") == 8 for line in r["out"].splitlines() if line.startswith("| `"))


def test_the_help_names_every_benchmark(tmp_path):
    """`saturate --help` lists the bench kinds from the one table of them (it once left `brief` out)."""
    from saturate.cli.bench import KINDS

    r = run_main(["--help"], tmp_path / "home")
    text = " ".join(r["out"].split())
    listed = text.split("benchmarks:", 1)[1].split(" monitor ", 1)[0]
    assert [k.strip().removesuffix(" (default)") for k in listed.split(",")] == list(KINDS)
