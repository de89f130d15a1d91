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
        (
            lambda: research("Berlin", max_round=3),
            "unexpected keyword argument 'max_round'; did you mean `max_rounds`?",
        ),
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


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("max_round", "max_rounds"),
        ("novelty_treshold", "novelty_threshold"),
        ("seeed", "seed"),
        ("thread", "thread_id"),
    ],
)
def test_an_unknown_keyword_names_the_nearest_setting_or_keyword(home, given, meant):
    """Issue 42: `max_round` said "unexpected keyword" and no more; the nearest setting (difflib) is suggested, or
    the function's own keyword (`thread` → `thread_id`), and nothing when nothing is near."""
    for call in (research, research_multi):
        with pytest.raises(ArgumentError) as err:
            call("Berlin", **{given: 3})
        assert f"unexpected keyword argument {given!r}; did you mean `{meant}`?" in str(err.value)
    with pytest.raises(ArgumentError) as err:
        research("Berlin", zzz=3)
    assert "unexpected keyword argument 'zzz': keywords beyond" in str(err.value) and "did you mean" not in str(
        err.value
    )


def test_settings_name_the_nearest_setting_to_an_unknown_one():
    from saturate.state.settings import SettingsError, load_settings

    with pytest.raises(SettingsError, match=r"unknown setting 'max_round'; did you mean `max_rounds`\?$"):
        load_settings({"max_round": 3})
    with pytest.raises(SettingsError, match=r"unknown setting 'zzz'$"):
        load_settings({"zzz": 3})


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


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: __import__("saturate").session_state(123), "session_state(thread_id=...) takes a str"),
        (lambda: __import__("saturate").session_state("x", home=5), "home=... takes a path"),
        (lambda: _graph("list_sessions")(home=5), "home=... takes a path"),
        (lambda: _prune(older_than_days="x"), "prune(older_than_days=...) takes a number of days"),
        (lambda: _prune(home=[]), "home=... takes a path"),
        (lambda: _graph("run_batch")(123, workers=1, out="o.jsonl"), "run_batch(path=...) takes a path"),
        (lambda: _graph("run_batch")("t.jsonl", workers="2", out="o.jsonl"), "run_batch(workers=...) takes an int"),
        (lambda: _graph("run_batch")("t.jsonl", workers=1, out="o.jsonl", overrides=5), "run_batch(overrides=...)"),
        (lambda: _graph("run_batch")("t.jsonl", workers=1, out=5), "run_batch(out=...) takes a path"),
        (lambda: _graph("list_checkpoints")(5), "unknown thread '5'"),
    ],
)
def test_every_public_function_names_the_argument_it_cannot_use(home, call, named):
    """Issue 36: these raised Python's own TypeError or AttributeError without naming the argument."""
    with pytest.raises(BadInput) as err:
        call()
    assert named in str(err.value)


def _graph(name):
    return getattr(__import__("saturate.graph", fromlist=[name]), name)


def _prune(**kwargs):
    from saturate.graph.prune import prune

    return prune(**kwargs)


class OwnSource:
    """A source of one's own (Python API): ``mode`` "hang" never answers, "bare" returns dicts without title or
    snippet, "hostile" returns javascript:, data: and file: links beside a real one."""

    name = "own"

    def __init__(self, mode: str):
        self.mode = mode

    def search(self, query, k):
        if self.mode == "hang":
            import threading

            threading.Event().wait()  # never returns
        if self.mode == "bare":
            return [{"url": "https://example.org/bubye", "id": "b"}]
        return [
            {"url": "javascript:alert(1)", "title": "Bubye River", "snippet": "The Bubye River is in Zimbabwe."},
            {"url": "data:text/html,<b>x</b>", "title": "Bubye", "snippet": "Bubye River Zimbabwe."},
            {"url": "file:///etc/passwd", "title": "Bubye River", "snippet": "Bubye River."},
            "not a result",
            {"url": "https://example.org/bubye", "title": "Bubye River", "snippet": "The Bubye River is in Zimbabwe."},
        ]

    def fetch(self, result):
        return None


@pytest.mark.parametrize("mode", ["hang", "bare", "hostile"])
def test_a_source_of_ones_own_is_bounded_and_its_results_checked(home, mode):
    result = research(
        "Where is the Bubye River?", source=OwnSource(mode), search_timeout_s=1, max_rounds=2, min_rounds=1
    )
    urls = [s.url for s in result.sources]
    assert all(u.startswith("https://") for u in urls), urls  # never javascript:, data:, file:
    assert "javascript:" not in result.answer and "file:" not in result.answer
    if mode == "hang":
        assert result.outcome == "no_results" and any("timeout" in e for e in result.debug["errors"])
    else:
        assert urls == ["https://example.org/bubye"] or not urls
