"""notebooks/quickstart.ipynb: committed without outputs, and runs top to bottom (nbclient, a real kernel)."""

from __future__ import annotations

import time

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


def test_committed_notebook_has_no_outputs():
    nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (pip install -e '.[test]')")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "the notebook has no code cells"
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, "strip the outputs before committing"
    assert "widgets" not in nb.metadata


def test_notebook_runs_top_to_bottom(monkeypatch, tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (pip install -e '.[test]')")
    nbclient = pytest.importorskip("nbclient", reason="notebook tests need nbclient (pip install -e '.[test]')")
    pytest.importorskip("ipykernel", reason="notebook tests need ipykernel (pip install -e '.[test]')")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's throwaway data directory goes under pytest's tmp
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    t0 = time.monotonic()
    client.execute()  # raises CellExecutionError, with the cell and traceback, when a cell fails
    elapsed = time.monotonic() - t0

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    mimes = {m for o in outputs for m in o.get("data", {})}
    assert not [o for o in outputs if o.output_type == "error"]
    assert "image/svg+xml" in mimes and "image/png" in mimes and "text/html" in mimes  # diagram, chart, round table
    assert "paused after round 1" in text and "resumed and finished" in text and "changed: {'novelty_threshold'" in text
    assert "report.html" in text and str(tmp_path) in text
    assert elapsed < 60, f"the notebook took {elapsed:.0f} s"
