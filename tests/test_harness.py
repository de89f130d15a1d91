"""The suite's own harness (issue 42): every test runs in a data directory of its own (conftest.py's ``own_home``),
whatever the environment says — a test run with the user's SATURATE_HOME set once left a session and a corpus index
there; and one helper decides whether a test has the evaluation data (``eval_file``) — a benchmark test exited 2 with
"no evaluation data" in a fresh clone where every other data test was skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EVAL_DATA, ROOT, eval_file


def test_a_session_without_the_home_fixture_writes_in_the_tests_own_folder(tmp_path):
    """No fixture asked for: the session goes where ``own_home`` points, under this test's tmp_path."""
    from saturate.graph import research
    from saturate.sources import LocalCorpus

    corpus = LocalCorpus.from_records(
        [{"id": "1", "title": "Bubye River", "text": "The Bubye River flows through Zimbabwe near Beitbridge."}], "c"
    )
    research("Where does the Bubye River flow?", source=corpus, max_rounds=1, retrieval="lexical")
    home = Path(os.environ["SATURATE_HOME"])
    assert home.is_relative_to(tmp_path) and (home / "sessions.db").is_file(), home


@pytest.mark.slow
def test_a_test_run_leaves_the_users_data_folder_untouched(tmp_path):
    """The suite run (in part) with SATURATE_HOME and XDG_DATA_HOME naming the user's folders: a session without
    the ``home`` fixture (above), the test that once wrote there (research_multi without ``home``) and one with
    ``home``; both folders, and the user's folders of optimised models, are still absent afterwards."""
    user_home, xdg = tmp_path / "user-saturate-home", tmp_path / "user-xdg"
    user_cache, xdg_cache = tmp_path / "user-model-cache", tmp_path / "user-xdg-cache"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(SATURATE_HOME=str(user_home), XDG_DATA_HOME=str(xdg), SATURATE_MAX_ROUNDS="1")
    # and the folders of the models' optimised graphs (state/onnx_cache.py): the run keeps its own
    env.update(SATURATE_MODEL_CACHE=str(user_cache), XDG_CACHE_HOME=str(xdg_cache))
    tests = [
        "tests/test_harness.py::test_a_session_without_the_home_fixture_writes_in_the_tests_own_folder",
        "tests/test_multi_parts.py::test_leads_are_names_never_links_or_instructions_and_shown_text_has_no_link",
        "tests/test_api_arguments.py::test_results_carry_their_thread_and_a_rerun_speaks_python",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *tests],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0 and "3 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    left = [p for p in (user_home, xdg, user_cache, xdg_cache) if p.exists()]
    assert not left, sorted(str(p) for p in tmp_path.rglob("*"))


def test_no_evaluation_data_skips_and_data_without_the_file_fails(tmp_path):
    with pytest.raises(pytest.skip.Exception, match="no evaluation data at"):
        eval_file("musique", "tasks.jsonl", root=tmp_path / "absent")  # a fresh clone: no ../shared beside it
    (tmp_path / "data" / "musique").mkdir(parents=True)
    (tmp_path / "data" / "musique" / "tasks.jsonl").write_text("{}\n")
    assert eval_file("musique", "tasks.jsonl", root=tmp_path / "data") == tmp_path / "data" / "musique" / "tasks.jsonl"
    assert eval_file(root=tmp_path / "data") == tmp_path / "data"
    with pytest.raises(pytest.fail.Exception, match="has no webq/tasks.jsonl"):  # the data is there: never a skip
        eval_file("webq", "tasks.jsonl", root=tmp_path / "data")


def test_benchmarks_a_test_runs_read_the_evaluation_data_the_tests_found():
    """SATURATE_EVAL_DATA, for the benchmarks the tests run, names the folder ``eval_file`` checks, and only when it
    is there (without it a benchmark says "no evaluation data": exit 2, where the tests are skipped)."""
    if EVAL_DATA.is_dir():
        assert os.environ["SATURATE_EVAL_DATA"] == str(EVAL_DATA)
    else:
        assert "SATURATE_EVAL_DATA" not in os.environ
