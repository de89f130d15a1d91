"""The CLI starts fast: help, settings and argument errors import no LangGraph, LangChain or matplotlib.

Each command runs in a fresh interpreter (``saturate.graph.cli.main``), which then writes the
names of every module it imported; the heavy ones must not be among them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from saturate.graph.models import ModelUnavailable
from saturate.graph.monitor.harness import MonitorError
from saturate.graph.session import InputError
from saturate.sources.local import CorpusError
from saturate.state.errors import BadInput
from saturate.state.settings import SettingsError

from conftest import ROOT

HEAVY = ("langgraph", "langchain", "matplotlib")

RUN = """
import contextlib, io, json, sys
from saturate.graph.cli import main
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


def test_every_bad_input_error_is_a_badinput():
    for error in (SettingsError, InputError, CorpusError, MonitorError, ModelUnavailable):
        assert issubclass(error, BadInput) and issubclass(error, ValueError)
