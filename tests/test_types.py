"""The type checker: pyright in basic mode (``[tool.pyright]`` in pyproject.toml) finds no error in the code and
the tests, so go-to-definition, completion and type checking work for anyone who opens the project."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


@pytest.mark.slow
def test_pyright_finds_no_error():
    exe = shutil.which("pyright", path=str(Path(sys.executable).parent)) or shutil.which("pyright")
    if exe is None:
        pytest.fail("pyright is not installed: pip install -e '.[test]'")
    proc = subprocess.run(
        [exe, "--outputjson", "--pythonpath", sys.executable],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(proc.stdout)
    errors = [
        f"{Path(d['file']).relative_to(ROOT)}:{d['range']['start']['line'] + 1}: {d['message'].splitlines()[0]}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert report["summary"]["filesAnalyzed"] > 150, report["summary"]
    assert not errors, f"{len(errors)} pyright errors:\n" + "\n".join(errors[:40])
