"""tests/reading/ mirrors the reading library: every module of nodes/reading/ has its test_<module>.py here."""

from __future__ import annotations

from pathlib import Path

import saturate.nodes.reading as reading

HERE = Path(__file__).resolve().parent


def test_every_module_of_the_reading_library_has_its_test_file():
    library = Path(reading.__file__).resolve().parent
    modules = sorted(p.stem for p in library.glob("*.py") if p.stem != "__init__")
    assert len(modules) >= 12  # the glob found the library
    missing = [m for m in modules if not (HERE / f"test_{m}.py").is_file()]
    assert not missing, f"no tests/reading/test_<module>.py for {missing}"
