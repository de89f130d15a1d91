"""Same seed, same sessions, whichever way they run (issue 42): ``saturate bench perf``'s throughput figure runs one
batch of seeded sessions sequentially, on threads, on asyncio, without a checkpointer and in worker processes, and
compares how each ended — the whole final state, less its wall-clock fields. Replay and resume are built on that."""

from __future__ import annotations

import json

import pytest

from saturate.bench.perf import throughput
from saturate.bench.perf.common import FALLBACK_TASKS, task_corpus, wiki_records

# the words of the first four fallback tasks' answers (a waterfall on the Zambezi, photosynthesis, the Sistine
# Chapel, Machu Picchu): the corpus below holds their pages among others
WORDS = ("Zambezi", "Victoria Falls", "photosynthesis", "chlorophyll", "Sistine", "Michelangelo", "Machu Picchu")


@pytest.fixture
def corpus(tmp_path):
    """A corpus of the tests' own (a few hundred of the embedded summaries): neither the embedded corpus nor the
    evaluation data's, so a worker that opened either of those instead would end its sessions differently."""
    records = wiki_records()
    kept = [r for i, r in enumerate(records) if i % 40 == 0 or any(w in r["title"] + r["text"] for w in WORDS)]
    path = tmp_path / "own.jsonl"
    path.write_text("\n".join(json.dumps({k: r[k] for k in ("id", "title", "text", "url")}) for r in kept) + "\n")
    return path


@pytest.mark.slow
def test_the_same_seeded_sessions_end_alike_in_every_way(corpus, tmp_path, monkeypatch):
    """The figure's own comparison, on a corpus of the test's own: the worker processes are told which corpus (their
    environment is the parent's without SATURATE_*; each has its own PYTHONHASHSEED), and every way's sessions end
    with the same answer, rounds and final state."""
    work = tmp_path / "work"
    source, desc = task_corpus(work / "index", corpus)
    monkeypatch.setattr(throughput, "session_tasks", lambda n: FALLBACK_TASKS[:n])
    shared = {"task_source": source, "task_corpus_desc": desc, "task_corpus_file": corpus}
    plan = {"sessions": 4, "workers": (2,), "async_conc": 2, "processes": 2}
    fig = throughput.bench_sessions(work, plan, shared)
    assert fig.details["sessions_ending_differently"] == {}, fig.notes
    assert fig.details["same_results_in_every_way"] is True
    assert fig.details["rounds_total"] > plan["sessions"]  # sessions of several rounds, not trivially alike
    assert not any("WARNING" in note for note in fig.notes)
    assert "processes_2_sessions_per_s" in fig.baselines  # the worker processes were among the ways compared


def test_a_session_is_compared_by_its_whole_final_state_less_the_clock():
    """What the ways compare: any field of the final state, at any depth, except the wall-clock ones."""
    state = {
        "result": {"answer": "Victoria Falls [1]"},
        "records": [{"round": 1, "query": "q", "durations_ms": {"search": 1.5}, "novelty": 3.2}],
        "pages": [{"url": "https://x", "ms": 12.0}],
    }
    again = json.loads(json.dumps(state))
    again["records"][0]["durations_ms"] = {"search": 9.9}
    again["pages"][0]["ms"] = 3.0
    assert throughput.state_digest(again) == throughput.state_digest(state)
    again["records"][0]["novelty"] = 3.3
    assert throughput.state_digest(again) != throughput.state_digest(state)
    (got,) = throughput._answers([state])
    assert got == ("Victoria Falls [1]", 1, throughput.state_digest(state))
