"""A session interrupted at any point resumes to exactly the state of an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from saturate.graph import research, resume, session_state
from saturate.graph.api import InputError

from conftest import ROOT, InterruptingSource, strip_timings

TASK = (
    "When did the provisional government ruling during the reign of terror the country premiering Prison Break start?"
)
KW = dict(seed=11, max_rounds=5, min_rounds=3, novelty_epsilon=0.5)


@pytest.fixture
def reference(home, musique_source):
    research(TASK, thread_id="ref", source=musique_source, **KW)
    return strip_timings(session_state("ref"))


@pytest.mark.parametrize("at_call", [2, 3, 4])
def test_resume_after_exception(home, musique_source, reference, at_call):
    with pytest.raises(KeyboardInterrupt):
        research(TASK, thread_id="cut", source=InterruptingSource(musique_source, at_call), **KW)
    interrupted = session_state("cut")
    assert interrupted["_next"] and not interrupted.get("result")
    result = resume("cut", source=musique_source)
    assert strip_timings(session_state("cut")) == reference
    # the stored result has no thread id (the thread is its key); the returned one carries it
    assert result.model_dump() == {**reference["result"], "thread_id": "cut"}


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from saturate.graph import research
    from saturate.sources import LocalCorpus
    src = LocalCorpus.open(sys.argv[1], sys.argv[2])
    kill_after = sys.argv[3]   # node name
    kill_round = int(sys.argv[4])
    state = {"round": 0}
    def handler(chunk):
        for node, update in chunk.items():
            if update and "round" in update:
                state["round"] = update["round"]
            if node == kill_after and state["round"] == kill_round:
                os.kill(os.getpid(), signal.SIGKILL)
    research(sys.argv[5], thread_id="killed", source=src, stream_handler=handler, **eval(sys.argv[6]))
    print("not killed")
    """
)


@pytest.mark.parametrize("node,rnd", [("search", 2), ("gate", 2), ("compress", 3)])
def test_resume_after_sigkill(home, musique_source, musique_corpus, reference, tmp_path, node, rnd):
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    proc = subprocess.run(
        [sys.executable, str(script), str(musique_corpus), str(tmp_path / "idx"), node, str(rnd), TASK, repr(KW)],
        cwd=ROOT,
        env={**os.environ, "SATURATE_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    killed = session_state("killed")
    assert killed["_next"] and not killed.get("result")
    resume("killed", source=musique_source)
    assert strip_timings(session_state("killed")) == reference


def test_resume_unknown_thread(home):
    with pytest.raises(InputError, match="unknown thread 'nope'"):
        resume("nope")


def test_resume_finished_session_returns_its_result(home, musique_source, reference):
    assert resume("ref", source=musique_source).model_dump() == {**reference["result"], "thread_id": "ref"}


def test_resume_rebuilds_source_from_checkpointed_settings(home, musique_source, musique_corpus):
    """Resume with no source given: the corpus setting stored in the checkpoint is reopened."""
    with pytest.raises(KeyboardInterrupt):
        research(TASK, thread_id="s", source=InterruptingSource(musique_source, 3), corpus=str(musique_corpus), **KW)
    result = resume("s")
    assert result.outcome == "answer"
    assert session_state("s")["records"][-1]["decision"] in ("stop", "cap")
