"""The Python API refuses misuse at its boundary, in Python's words (issue 24): a wrong type, an unknown keyword,
`sources` in single-source `research`, a non-callable handler — an ``ArgumentError`` (a ``BadInput``) naming the
argument, before anything is opened or run; results carry their thread id."""

from __future__ import annotations

import pytest

from saturate.graph import ArgumentError, open_checkpointer, research, research_multi, resume, verify
from saturate.state.errors import BadInput


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: research(123), "research() takes the task as a str (got int: '123')"),
        (lambda: research(["Berlin", "Wall"]), "research() takes the task as a str (got list"),
        (lambda: verify(None), "verify() takes the claim as a str (got NoneType"),
        (lambda: research("Berlin", chat_model=42), "research(chat_model=...) takes a LangChain chat model"),
        (lambda: research("Berlin", sources="wiki"), "for several sources in parallel use research_multi"),
        (lambda: research("Berlin", stream_handler=5), "research(stream_handler=...) takes a callable"),
        (lambda: research("Berlin", thread_id=5), "research(thread_id=...) takes a str (got int)"),
        (lambda: research("Berlin", home=3.5), "research(home=...) takes a path"),
        (lambda: research("Berlin", embeddings="x"), "research(embeddings=...) takes LangChain Embeddings"),
        (lambda: research("Berlin", settings=3), "research(settings=...) takes a Settings or a dict"),
        (lambda: research("Berlin", max_round=3), "unexpected keyword argument 'max_round'"),
        (lambda: research_multi("Berlin", sources=5), "research_multi(sources=...) takes spec strings"),
        (lambda: research_multi(7), "research_multi() takes the task as a str"),
        (lambda: resume(5), "resume() takes the thread_id as a str (got int"),
        (lambda: resume("x", chat_model=object()), "resume(chat_model=...) takes a LangChain chat model"),
    ],
)
def test_misuse_is_an_argument_error_in_pythons_words(home, call, message):
    with pytest.raises(ArgumentError) as err:
        call()
    assert message in str(err.value) and isinstance(err.value, BadInput)
    assert not (home / "sessions.db").exists()  # refused before anything was opened


def test_results_carry_their_thread_and_a_rerun_speaks_python(home):
    result = research("Berlin Wall", thread_id="t1")
    assert result.thread_id == "t1"
    assert research("Berlin Wall").thread_id  # a generated thread id is given back too
    with pytest.raises(BadInput, match=r"already exists: resume it, or give another thread id \(thread_id= in Python"):
        research("Berlin Wall", thread_id="t1")
    assert resume("t1").thread_id == "t1"
    with open_checkpointer() as saver:  # the data directory by default, as every other function
        assert saver is not None


SCRIPT = """
import sys
from saturate.graph.batch import run_batch
{body}
"""


def test_run_batch_from_a_script_without_the_main_guard_is_refused_before_spawning(home, tmp_path):
    import json
    import subprocess
    import sys

    from conftest import child_env

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "q1", "question": "Where is the Bubye River?"}) + "\n")
    call = f"report = run_batch({str(tasks)!r}, workers=1, out={str(tmp_path / 'out.jsonl')!r})\nprint(report.done)"
    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text(SCRIPT.format(body=call))
    done = subprocess.run(
        [sys.executable, str(unguarded)], env=child_env(home), capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and 'line 4 calls run_batch outside `if __name__ == "__main__":`' in done.stderr
    assert "bootstrapping phase" not in done.stderr and not (tmp_path / "out.jsonl").exists()
    guarded = tmp_path / "guarded.py"
    body = "if __name__ == '__main__':\n    " + call.replace("\n", "\n    ")
    guarded.write_text(SCRIPT.format(body=body))
    done = subprocess.run(
        [sys.executable, str(guarded)], env=child_env(home), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
