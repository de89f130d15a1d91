"""notebooks/quickstart.ipynb: committed without outputs, runs top to bottom (nbclient, a real kernel), answers
its showcase question right, shows its HTML report inline and leaves no data directory behind."""

from __future__ import annotations

import ast
import json
import re

import pytest

from saturate.graph import research

from conftest import EVAL_DATA, ROOT

NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"
# the showcase: MuSiQue 2hop__590911_47465, "The state where Henry Worrall died has how many congressional
# districts?" (gold: 4). The answer must name the bridge (Kansas) and the number in the sentence it leads with.
EXPECTED = ("Kansas", "4 congressional districts")


def code_cells() -> list[str]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def leading_sentence(answer: str) -> str:
    return re.split(r"(?<=\.) (?:\[\d+\] )?", answer, maxsplit=1)[0]


def test_committed_notebook_has_no_outputs():
    nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (pip install -e '.[test]')")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "the notebook has no code cells"
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, "strip the outputs before committing"
    assert "widgets" not in nb.metadata


def test_showcase_question_is_answered_right(home, musique_tasks, musique_corpus):
    """The notebook's question and research call (read from the notebook), run as the notebook runs them."""
    cells = code_cells()
    found = re.search(r't\["id"\] == "([^"]+)"', cells[0])
    assert found is not None
    task_id = found.group(1)
    task = next(t for t in musique_tasks if t["id"] == task_id)
    call = next(
        node
        for node in ast.walk(ast.parse(next(c for c in cells if "stream_handler=progress" in c)))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "research"
    )
    kwargs = {
        k.arg: ast.literal_eval(k.value)
        for k in call.keywords
        if k.arg is not None and isinstance(k.value, ast.Constant)
    }
    result = research(task["question"], corpus=str(musique_corpus), **kwargs)
    lead = leading_sentence(result.answer)
    assert all(name in lead for name in EXPECTED), result.answer
    assert any(gold in lead for gold in task["answers"])


@pytest.mark.slow
def test_notebook_runs_top_to_bottom(monkeypatch, tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat (pip install -e '.[test]')")
    nbclient = pytest.importorskip("nbclient", reason="notebook tests need nbclient (pip install -e '.[test]')")
    pytest.importorskip("ipykernel", reason="notebook tests need ipykernel (pip install -e '.[test]')")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's throwaway data directory goes under pytest's tmp
    # the evaluation data the assertions below judge by (EVAL_DATA), named even when absent: the notebook falls back
    # to ../shared/data, which SATURATE_EVAL_DATA=/nonexistent must not let it find
    monkeypatch.setenv("SATURATE_EVAL_DATA", str(EVAL_DATA))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        # a cell's timeout only catches a hang: without the evaluation data the notebook ranks the embedded corpus by
        # meaning, and its first cell then embeds 10,033 summaries (a minute or more on a busy machine)
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, when a cell fails

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    mimes = {m for o in outputs for m in o.get("data", {})}
    assert not [o for o in outputs if o.output_type == "error"]
    assert "image/svg+xml" in mimes and "image/png" in mimes and "text/html" in mimes  # diagram, chart, round table
    assert "paused after round 1" in text and "resumed and finished" in text and "changed: {'novelty_threshold'" in text
    assert "stop: stop:" not in text

    # the showcase answer, as the notebook prints it
    answer = next(line for line in text.splitlines() if line.startswith("answer: "))[len("answer: ") :]
    if (EVAL_DATA / "musique" / "corpus.jsonl").exists():
        assert all(name in leading_sentence(answer) for name in EXPECTED), answer
        assert "the data set's answer: 4" in text
    else:
        assert "photosynthesis" in answer.lower() and "[" in answer, answer  # on the question's subject, cited

    # the HTML report, written and shown inline (a frame with the whole self-contained page)
    assert "report.html" in text and str(tmp_path) in text
    frames = [o["data"]["text/html"] for o in outputs if "<iframe" in o.get("data", {}).get("text/html", "")]
    assert len(frames) == 1 and "srcdoc=" in frames[0]
    assert (
        "session report" in frames[0] and "demo-strict" in frames[0] and "&lt;svg class=&quot;chart&quot;" in frames[0]
    )

    # and cleaned up: no data directory left behind
    assert "gone" in text
    assert not list(tmp_path.glob("saturate-notebook-*")), list(tmp_path.iterdir())
