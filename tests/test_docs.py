"""The documentation keeps up with the code (issue 25): README.md is short and the pages in docs/ hold the rest.

- Every command and sub-command of the real parser (``saturate/cli/parser.py``, walked through its sub-parsers,
  ``bench``'s deferred kinds included) has a section ``### `saturate …``` in docs/cli.md, and every long option
  it takes appears in that section; a command that takes the settings as flags says ``--<setting>`` there.
- Every setting (a field of ``state.settings.Settings``) has a row in the settings table of
  docs/configuration.md with its environment variable (as ``state.settings.env_overrides`` reads it) and its flag.
- README.md is at most 300 lines and names every top-level command.
- Every relative link in README.md and docs/*.md points at a file that exists, and every ``#anchor`` at a
  heading of that page (GitHub's heading ids).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from saturate.cli.parser import build_parser
from saturate.state.settings import ENV_PREFIX, Settings, env_overrides

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CLI_PAGE = DOCS / "cli.md"
CONFIG_PAGE = DOCS / "configuration.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 300


# --- the command line ---------------------------------------------------------------------------------------


def _commands() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``("saturate", parser)``, ``("saturate research", parser)``, … ``("saturate bench tune", parser)``."""

    def walk(name: str, parser: argparse.ArgumentParser):
        add_deferred = getattr(parser, "_add_deferred", None)
        if add_deferred is not None:  # `bench` adds its kinds and their flags only when first used
            add_deferred()
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    yield from walk(f"{name} {sub_name}", sub)

    yield from walk("saturate", build_parser())


COMMANDS = dict(_commands())
ROOT_OPTIONS = {o for a in COMMANDS["saturate"]._actions for o in a.option_strings if o.startswith("--")}


def _options(parser: argparse.ArgumentParser) -> tuple[set[str], bool]:
    """The command's own long options (not the settings' flags, not --help, not the root's --home and
    --database-url that every command repeats), and whether it takes the settings as flags."""
    own, settings = set(), False
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if action.dest.startswith("setting_"):  # saturate/cli/settings.py::add_setting_flags
            settings = True
            continue
        own |= {o for o in action.option_strings if o.startswith("--")}
    if parser is not COMMANDS["saturate"]:
        own -= ROOT_OPTIONS
    return own, settings


def _cli_sections() -> dict[str, str]:
    """docs/cli.md's ``### `saturate …``` sections by command."""
    sections: dict[str, str] = {}
    for part in re.split(r"(?m)^(?=### )", _without_code_blocks(CLI_PAGE.read_text(encoding="utf-8"))):
        m = re.match(r"### `(saturate[\w -]*)`", part)
        if m:
            sections[m.group(1).strip()] = part
    return sections


def _mentions(text: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def test_the_parser_walk_sees_every_command():
    assert {"saturate research", "saturate bench", "saturate bench tune", "saturate monitor"} <= set(COMMANDS)
    assert "--fill-p" in _options(COMMANDS["saturate bench tune"])[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_and_flag_is_in_the_cli_reference(command):
    section = _cli_sections().get(command)
    assert section is not None, f"docs/cli.md has no section ### `{command}`"
    own, settings = _options(COMMANDS[command])
    missing = sorted(o for o in own if not _mentions(section, o))
    assert not missing, f"docs/cli.md, ### `{command}`, does not document {missing}"
    if settings:
        assert "--<setting>" in section, f"docs/cli.md, ### `{command}`: it takes every setting as --<setting>"


def test_the_cli_reference_documents_no_command_that_does_not_exist():
    extra = sorted(set(_cli_sections()) - set(COMMANDS))
    assert not extra, f"docs/cli.md documents commands the parser does not have: {extra}"


def test_the_readme_names_every_command():
    readme = README.read_text(encoding="utf-8")
    top = sorted(c for c in COMMANDS if c.count(" ") == 1)
    missing = [c for c in top if f"`{c}" not in readme]
    assert not missing, f"README.md's CLI at a glance does not name {missing}"


# --- the settings -------------------------------------------------------------------------------------------


def _settings_rows() -> dict[str, list[str]]:
    """The settings table of docs/configuration.md: its cells by setting name."""
    text = CONFIG_PAGE.read_text(encoding="utf-8")
    assert "<!-- settings-table:start -->" in text, "docs/configuration.md has lost its settings table"
    block = text.split("<!-- settings-table:start -->")[1].split("<!-- settings-table:end -->")[0]
    rows = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        m = re.fullmatch(r"`(\w+)`", cells[0]) if cells else None
        if m:
            rows[m.group(1)] = cells
    return rows


def _env_var(name: str) -> str:
    """The variable the settings are read from, checked against the code that reads them."""
    var = f"{ENV_PREFIX}{name.upper()}"
    assert env_overrides({var: "x"}) == {name: "x"}, f"{var} does not set {name}"
    return var


@pytest.mark.parametrize("name", sorted(Settings.model_fields))
def test_every_setting_is_in_the_configuration_table_with_its_env_var(name):
    row = _settings_rows().get(name)
    assert row is not None, f"docs/configuration.md's settings table has no row for `{name}`"
    assert f"`{_env_var(name)}`" in row, f"`{name}`: its environment variable is not in its row"
    assert f"`--{name.replace('_', '-')}`" in row, f"`{name}`: its flag is not in its row"


def test_the_configuration_table_has_no_setting_that_does_not_exist():
    extra = sorted(set(_settings_rows()) - set(Settings.model_fields))
    assert not extra, f"docs/configuration.md lists settings that do not exist: {extra}"


# --- the README's length ------------------------------------------------------------------------------------


def test_the_readme_fits_a_screen_or_two():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES}): move detail to docs/"


# --- links --------------------------------------------------------------------------------------------------


def _without_code_blocks(text: str) -> str:
    """The text outside fenced code blocks (``` … ```), line for line."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else line)
    return "\n".join(out)


def _anchors(page: Path) -> set[str]:
    """GitHub's ids of a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats -1, -2 …"""
    seen: dict[str, int] = {}
    ids = set()
    for line in _without_code_blocks(page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6} +(.+?) *#* *$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def _links(page: Path) -> list[str]:
    """The targets of the page's Markdown links, outside code blocks and code spans."""
    text = re.sub(r"`[^`\n]*`", "", _without_code_blocks(page.read_text(encoding="utf-8")))
    return re.findall(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)


def _broken_links(page: Path) -> list[str]:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: …: not checked offline
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.relative_to(ROOT)})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_exists(page):
    broken = _broken_links(page)
    assert not broken, f"{page.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_the_link_checker_sees_links_and_anchors():
    assert "docs/cli.md" in _links(README) and "every-command-and-flag" in _anchors(CLI_PAGE)
    assert "research-benchmark-saturate-bench" in _anchors(DOCS / "benchmarks.md")


def test_every_page_in_docs_is_linked_from_the_readme():
    readme_links = {t.partition("#")[0] for t in _links(README)}
    unlinked = [p.name for p in DOCS.glob("*.md") if f"docs/{p.name}" not in readme_links]
    assert not unlinked, f"README.md's Documentation list does not link {unlinked}"


def _run_clean(args: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd`` as a new user runs it: nothing of the caller's environment (SATURATE_*, PYTHONPATH),
    ``home`` its data directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_") and k != "PYTHONPATH"}
    env["SATURATE_HOME"] = str(home)
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _python_example(page: Path, heading: str | None = None) -> str:
    """The first ```python block of ``page`` (after ``heading``, when given)."""
    text = page.read_text(encoding="utf-8")
    return (text.split(heading, 1)[1] if heading else text).split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "heading", "runs"),
    [(README, "## Python API", 2), (DOCS / "python-api.md", None, 1)],
    ids=["readme", "api"],
)
def test_the_python_examples_run_as_pasted_from_anywhere(tmp_path, page, heading, runs):
    """Issue 42: the README's example searched `../shared/data/musique/corpus.jsonl`, a CorpusError and a traceback
    in a fresh clone (and from any other folder). It runs on what the package ships (the embedded corpus), pasted
    into Python outside the checkout with a data directory of its own, with nothing of the caller's environment
    (SATURATE_*) — and as often as it is pasted: it named its session once, so a second paste failed (issue 35)."""
    example = _python_example(page, heading)
    assert "../" not in example and not re.search(r"^\s*corpus=", example, re.M)  # no file beside the checkout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for _ in range(runs):
        run = _run_clean(["-c", example], elsewhere, tmp_path / "home")
        assert run.returncode == 0, run.stderr[-2000:]
        assert "Victoria Falls" in run.stdout
    assert (tmp_path / "home" / "sessions.db").exists() and not list(elsewhere.iterdir())  # its own home, only


@pytest.mark.slow
def test_the_readme_first_session_is_what_its_command_prints(tmp_path):
    """The README's first session is the command's own output, line for line (the round lines on stderr, the rest on
    stdout): its rounds 3 to 5 had drifted unseen when a change of the gap queries (plan_query's
    PART_GAP_MIN_SOURCES) made them search other words. Run as shown, in a data directory of its own."""
    block = README.read_text(encoding="utf-8").split("## A first session", 1)[1]
    lines = block.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    assert lines[0].startswith("$ saturate research ")
    command = ["-m", "saturate", *shlex.split(lines[0].removeprefix("$ saturate "))]
    run = _run_clean(command, tmp_path, tmp_path / "home")
    assert run.returncode == 0, run.stderr[-2000:]
    printed = (run.stderr + run.stdout).splitlines()
    assert sorted(printed) == sorted(lines[1:]), "\n".join(sorted(set(printed) ^ set(lines[1:])))
