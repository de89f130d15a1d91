"""The house: one namespaced install, declared layers with no cycles, a clean linter, and a wheel that works.

- import-linter's contracts (``[tool.importlinter]`` in pyproject.toml): graph → nodes → state and
  graph → sources → state; inside graph/ the CLI over the benchmarks over the monitor over the views over
  the API over the session layer over the wiring; no node imports another node; no import cycle anywhere
  (grimp reads every import statement, those inside functions too).
- ruff, configured in pyproject.toml (import sorting included), finds nothing, and the code is formatted
  with ``ruff format``.
- The wheel holds only ``saturate/`` and, installed into a fresh venv (outside the checkout), runs
  ``saturate research`` on the embedded corpus and ``saturate bench --limit 2``; ``import graph`` and
  friends fail there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, shared_file

BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    exe = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if exe is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return exe


def test_import_contracts_hold():
    proc = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_ruff_is_clean():
    proc = subprocess.run([_tool("ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    fmt = subprocess.run([_tool("ruff"), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True)
    assert fmt.returncode == 0, "run `ruff format .`:\n" + fmt.stdout[-4000:]


def test_only_saturate_is_installed_at_top_level(tmp_path):
    """Outside the checkout, the generic folder names are not importable; saturate.* is."""
    code = (
        "import importlib.util, json; "
        "print(json.dumps({n: importlib.util.find_spec(n) is not None for n in "
        "('saturate.graph', 'saturate.nodes', 'saturate.state', 'saturate.sources', "
        "'graph', 'nodes', 'state', 'sources')}))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    assert found == {
        "saturate.graph": True,
        "saturate.nodes": True,
        "saturate.state": True,
        "saturate.sources": True,
        "graph": False,
        "nodes": False,
        "state": False,
        "sources": False,
    }


@pytest.mark.slow
def test_wheel_installs_and_runs_in_a_fresh_venv(tmp_path):
    """Build the wheel, install it into a fresh venv and run the two main commands there.

    The dependencies are not downloaded again: the fresh venv sees the running interpreter's
    site-packages through a .pth file (which does not activate the editable install's finder, since
    .pth files are only processed in site directories). What is tested is the package itself: complete,
    one top-level name, no path derived from the checkout.
    """
    musique = shared_file("musique", "tasks.jsonl").parent.parent
    wheels = tmp_path / "wheels"
    # built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("saturate-*.whl")
    tops = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"saturate"}, tops
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "_saturate_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # the fresh venv's own pip: pip --prefix from this interpreter would uninstall the editable install here
    subprocess.run(
        [py, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True, capture_output=True
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_") and k != "PYTHONPATH"}
    env.update(SATURATE_HOME=str(tmp_path / "home"), SATURATE_SHARED_DATA=str(musique))
    where = subprocess.run(
        [py, "-c", "import saturate.graph, saturate.state.settings as s; print(s.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(site)), where
    saturate = env_dir / "bin" / "saturate"
    research = subprocess.run(
        # the embedded corpus by words (its vectors cost ~50 s to build); the bench below ranks musique by meaning
        [saturate, "research", "What is the capital of Zimbabwe?", "--quiet", "--seed", "1", "--retrieval", "lexical"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert research.returncode == 0, research.stderr[-2000:]
    assert "[1]" in research.stdout
    bench = subprocess.run(
        [saturate, "bench", "--set", "musique", "--limit", "2", "--json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bench.returncode == 0, bench.stderr[-2000:]
    assert json.loads(bench.stdout)["policies"]["saturate"]["tasks"] == 2
