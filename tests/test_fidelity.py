"""docs/fidelity.md: every row of every document's table names a test, and every test and code location it
names exists (the suite runs the tests themselves)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "fidelity.md"
SEEDS = ("000_d2ea375336de0a7d", "001_d81fe8d819191b04", "002_6ab8558f01e3a1e1", "003_6319ea3770ccbb60",
         "004_80f3bd2012c97928")  # fmt: skip
REF = re.compile(r"`([\w./-]+\.py)::([\w.]+)`")


def sections() -> dict[str, list[list[str]]]:
    """{document id: table rows as cells} for the five documents' sections."""
    out: dict[str, list[list[str]]] = {}
    current = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"## (\d{3}) — .*\(`(\w+)\.txt`\)", line)
        if heading:
            current = heading.group(2)
            out[current] = []
        elif line.startswith("## "):
            current = None
        elif current and line.startswith("|") and not line.startswith(("| mechanism", "|---")):
            out[current].append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return out


def defines(path: Path, dotted: str) -> bool:
    text = path.read_text(encoding="utf-8")
    for part in dotted.split("."):
        pattern = rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(part)}\b|^\s*{re.escape(part)}\s*(?::|=)"
        if not re.search(pattern, text, re.MULTILINE):
            return False
    return True


def test_every_document_has_its_table_and_every_row_names_a_test():
    found = sections()
    assert list(found) == list(SEEDS)
    for seed, rows in found.items():
        assert len(rows) >= 5, seed
        for cells in rows:
            assert len(cells) == 4, (seed, cells[0])
            mechanism, code, test, deviation = cells
            assert REF.search(code), f"{seed}: {mechanism!r} names no code location"
            assert any(p.startswith("tests/") for p, _ in REF.findall(test)), f"{seed}: {mechanism!r} names no test"
            assert deviation, f"{seed}: {mechanism!r} says nothing about deviations"


def test_every_named_test_and_code_location_exists():
    refs = set(REF.findall(DOC.read_text(encoding="utf-8")))
    tests = {(p, n) for p, n in refs if p.startswith("tests/")}
    assert len(tests) >= 60 and len(refs - tests) >= 60
    missing = []
    for path, name in sorted(refs):
        file = ROOT / path
        if not file.is_file():
            missing.append(f"{path} (no such file)")
        elif path.startswith("tests/"):
            if not re.search(rf"^def {re.escape(name)}\(", file.read_text(encoding="utf-8"), re.MULTILINE):
                missing.append(f"{path}::{name}")
        elif not defines(file, name):
            missing.append(f"{path}::{name}")
    assert not missing, "named in docs/fidelity.md but not found:\n" + "\n".join(missing)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_documents_named_are_the_shared_seeds(seed):
    seeds = ROOT.parent / "shared" / "seeds"
    if not seeds.is_dir():
        pytest.skip(f"the design documents are not at {seeds}")
    assert (seeds / f"{seed}.txt").is_file()
