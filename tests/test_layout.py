"""The house: one package static tools read, declared layers, no cycles, a clean linter, a wheel that works.

- import-linter's contracts (``[tool.importlinter]`` in pyproject.toml): the CLI over the benchmarks and the
  MCP server over the monitor over the views over graph/, graph over nodes and sources, both over state; inside
  graph/ the API over the session layer over the wiring; no node imports another node; no import cycle anywhere
  (grimp reads every import statement, those inside functions too).
- One name per module: ``graph``, ``nodes``, ``sources``, ``state`` are refused by ruff (a planted import fails)
  and at import.
- A checkout made without symlinks builds the same wheel (setup.py maps the folders); anything else that is not
  a link refuses to build, naming the fix.
- ruff, configured in pyproject.toml (import sorting included), finds nothing, and the code is formatted
  with ``ruff format``.
- The wheel holds only ``saturate/`` and, installed into a fresh venv (outside the checkout), runs
  ``saturate research`` on the embedded corpus and ``saturate bench --limit 2``; ``import graph`` and
  friends fail there.
- An editable install is a plain path on sys.path (no import hook), so pyright follows ``saturate.*`` from
  anywhere; pyright in basic mode finds no error in graph/, nodes/, sources/, state/ and tests/.
"""

from __future__ import annotations

import importlib.util
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

from conftest import ROOT, eval_file

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


def test_an_editable_install_is_a_plain_path_that_static_tools_follow(tmp_path):
    """The editable install puts the checkout on sys.path (no import hook), so pyright, run on a file outside the
    checkout, resolves `saturate.graph.api` and its types through the installed environment alone."""
    pth = [p for p in Path(sysconfig.get_paths()["purelib"]).glob("__editable__*saturate*.pth")]
    if not pth:
        pytest.skip("saturate is not installed in editable mode here")
    lines = pth[0].read_text().split()
    assert lines == [str(ROOT)], lines  # a path, not "import __editable___saturate_finder"
    user = tmp_path / "user.py"
    user.write_text(
        "from saturate.graph.api import research\n"
        "from saturate.state.settings import Settings\n"
        "s: Settings = Settings.model_validate({})\n"
        "n: int = s.max_rounds\n"
        "bad: str = s.max_rounds\n"  # a type error pyright can only see if it read state/settings.py
        "reveal_type(research)\n"
    )
    proc = subprocess.run(
        [_tool("pyright"), "--outputjson", "--pythonpath", sys.executable, str(user)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    report = json.loads(proc.stdout)
    errors = [d["message"] for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert len(errors) == 1 and '"int" is not assignable to "str"' in errors[0], errors
    revealed = [d["message"] for d in report["generalDiagnostics"] if d["severity"] == "information"]
    assert any("thread_id" in m for m in revealed), revealed  # research's real signature, read from graph/api.py


@pytest.mark.slow
def test_wheel_installs_and_runs_in_a_fresh_venv(tmp_path):
    """Build the wheel, install it into a fresh venv and run the two main commands there.

    The dependencies are not downloaded again: the fresh venv sees the running interpreter's
    site-packages through a .pth file (which does not activate the editable install's finder, since
    .pth files are only processed in site directories). What is tested is the package itself: complete,
    one top-level name, no path derived from the checkout. The benchmark at the end reads the evaluation data: without
    it the test is skipped there, after the rest has run.
    """
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
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"saturate"}, tops
    # package data: the trained reader's model, tokenizer and calibration with their sha256, the questions of the
    # reader's and the brief's benchmarks
    assert {
        "saturate/nodes/reading/model/reader.onnx",
        "saturate/nodes/reading/model/tokenizer.json",
        "saturate/nodes/reading/model/levels.json",
        "saturate/nodes/reading/model/reader.sha256",
        "saturate/bench/everyday.jsonl",
        "saturate/bench/open_questions.jsonl",
    } <= names
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)  # installed into by this pip, run as that interpreter (below)
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
    # pip --python: pip runs as the fresh venv's interpreter and installs there (no ensurepip: 5 s less; pip --prefix
    # from this interpreter would uninstall the editable install here)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_") and k != "PYTHONPATH"}
    env.update(SATURATE_HOME=str(tmp_path / "home"))
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
    musique = eval_file("musique", "corpus.jsonl").parent.parent
    eval_file("musique", "tasks.jsonl")
    bench = subprocess.run(
        [saturate, "bench", "--set", "musique", "--limit", "2", "--json"],
        cwd=work,
        env={**env, "SATURATE_EVAL_DATA": str(musique)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bench.returncode == 0, bench.stderr[-2000:]
    assert json.loads(bench.stdout)["policies"]["saturate"]["tasks"] == 2


def _setup_module():
    spec = importlib.util.spec_from_file_location("saturate_setup", ROOT / "setup.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not as __main__: only the layout function, no build
    return module


def _checkout(tmp_path: Path, links: str) -> Path:
    """A copy of the working tree; its links kept (``"links"``) or written as Git writes them with
    core.symlinks=false (``"text"``: a file holding the target)."""
    src = tmp_path / links
    shutil.copytree(
        ROOT,
        src,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", ".*cache", ".hypothesis"),
    )
    if links == "text":
        for name in ("graph", "nodes", "sources", "state"):
            link = src / "saturate" / name
            target = os.readlink(link)
            link.unlink()
            link.write_text(target)
    return src


def test_a_checkout_without_symlinks_is_mapped_and_a_broken_one_refused(tmp_path):
    setup = _setup_module()
    package_dir, packages = setup.layout(ROOT)
    assert package_dir == {"": "."}  # the links: a plain-path editable install
    assert {"saturate", "saturate.cli", "saturate.graph", "saturate.nodes.reading", "saturate.bench.perf"} <= set(
        packages
    )
    src = _checkout(tmp_path, "text")
    mapped, mapped_packages = setup.layout(src)
    assert mapped == {"saturate": "saturate", **{f"saturate.{n}": n for n in ("graph", "nodes", "sources", "state")}}
    assert sorted(mapped_packages) == sorted(packages)
    (src / "saturate" / "nodes").write_text("version https://git-lfs.github.com/spec/v1")  # not a link's text
    with pytest.raises(SystemExit) as refused:
        setup.layout(src)
    assert "saturate/nodes should be a link to ../nodes" in str(refused.value)
    assert "core.symlinks=true" in str(refused.value) and "git checkout -- saturate/nodes" in str(refused.value)


@pytest.mark.slow
def test_a_checkout_without_symlinks_builds_the_same_wheel(tmp_path):
    """Git for Windows' default clone (no symlinks) gives the same files in the wheel as a clone with them."""
    contents = {}
    for links in ("links", "text"):
        src = _checkout(tmp_path, links)
        out = tmp_path / f"wheel-{links}"
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
            check=True,
            capture_output=True,
        )
        (wheel,) = out.glob("saturate-*.whl")
        with zipfile.ZipFile(wheel) as z:
            contents[links] = {n: z.read(n) for n in z.namelist() if ".dist-info/" not in n}
    assert (
        "saturate/graph/api.py" in contents["text"] and "saturate/nodes/reading/model/reader.onnx" in contents["text"]
    )
    assert contents["text"] == contents["links"]


@pytest.mark.slow
def test_the_build_ships_the_data_folders_and_warns_of_nothing(tmp_path):
    """Issue 42: `pip install -e .` printed ~80 lines of setuptools' "Package would be ignored" about the reader's
    model and the shipped vectors (folders of data inside the package). Declared as packages (setup.py's
    DATA_PACKAGES), they are built with no warning, and their files are in the wheel."""
    src = _checkout(tmp_path, "links")
    out = tmp_path / "wheel"
    build = subprocess.run(  # -v: the build backend's own output, where setuptools warns
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    said = build.stdout + build.stderr
    assert "Building wheel for saturate" in said  # the backend's output is there to be read
    warned = [line for line in said.splitlines() if "would be ignored" in line or "absent from the `packages`" in line]
    assert not warned, warned
    (wheel,) = out.glob("saturate-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"saturate/sources/shipped/{p.name}" for p in (ROOT / "sources" / "shipped").iterdir()}
    model = {f"saturate/nodes/reading/model/{p.name}" for p in (ROOT / "nodes" / "reading" / "model").iterdir()}
    assert shipped and model and shipped | model <= names, sorted(names)


def test_short_module_names_are_refused(tmp_path):
    """`graph`, `nodes`, `sources`, `state` are only ever `saturate.*`: a planted import fails ruff, and importing
    one by its short name fails, from the checkout itself."""
    api = (ROOT / "graph" / "api.py").read_text(encoding="utf-8")
    planted = api.replace(
        "from __future__ import annotations\n",
        "from __future__ import annotations\n\nfrom state.settings import Settings  # noqa: F401\n",
        1,
    )
    assert planted != api
    for source, expect in ((api, 0), (planted, 1)):
        proc = subprocess.run(
            [_tool("ruff"), "check", "--no-cache", "--stdin-filename", "graph/api.py", "-"],
            cwd=ROOT,
            input=source,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == expect, proc.stdout[-2000:]
    assert "TID251" in proc.stdout and "import saturate.state, not state" in proc.stdout
    for short in ("graph", "nodes", "sources", "state"):
        proc = subprocess.run([sys.executable, "-c", f"import {short}"], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 1 and f"ImportError: import saturate.{short}, not {short}" in proc.stderr, proc.stderr


def test_no_test_module_imports_another():
    """Shared helpers live in conftest.py or a helper module (tests/local_site.py, saver_conformance.py, ...):
    importing a test module from another runs its module code twice and drags its autouse fixtures along."""
    import ast

    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[-1].startswith("test_")]
    assert not offenders, offenders
