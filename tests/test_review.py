"""A person in the loop (``review`` setting): LangGraph ``interrupt()`` before the first search and before the
answer is final, resumed with ``Command(resume=...)`` from Python, ``resume --approve | --edit FILE`` from
scripts, and an interactive prompt on a terminal (a pty); the pause is a checkpoint that survives kill -9."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from argparse import Namespace

import pexpect
import pytest
from langgraph.types import Command

from saturate.cli.review import decision_from_args
from saturate.graph import list_sessions, research, research_multi, resume, session_state, verify
from saturate.graph.api import InputError
from saturate.state.review import ReviewError

from conftest import child_env

TASK = "Where is the Bubye River?"
SAT = [sys.executable, "-m", "saturate.cli"]


def queries(thread: str) -> list[tuple[str, str]]:
    return [(r["query"], r["planner"]) for r in session_state(thread)["records"]]


def test_python_edit_the_plan_send_the_answer_back_then_approve(home):
    paused = research(TASK, thread_id="p", review="both", max_rounds=3)
    assert paused.outcome == "review" and paused.thread_id == "p"
    assert paused.review == {"point": "plan", "task": TASK, "queries": [TASK]}
    assert session_state("p")["_status"] == "waiting for review of the plan" and not session_state("p")["records"]
    assert [s["status"] for s in list_sessions() if s["thread"] == "p"] == ["waiting for review of the plan"]

    # edit: the whole list (one query replaced, one added); round 1 searches the first at once
    answer = resume("p", review={"action": "edit", "queries": ["Bubye River Zimbabwe", "Bubye River Limpopo"]})
    assert answer.outcome == "review" and answer.review["point"] == "answer" and answer.review["answer"]
    assert queries("p")[:2] == [("Bubye River Zimbabwe", "reviewed"), ("Bubye River Limpopo", "planned")]
    rounds = len(queries("p"))

    # send back with a note through LangGraph's own Command: the note is the next round's query
    again = resume("p", review=Command(resume={"action": "more", "note": "Bubye River Beitbridge"}))
    assert again.outcome == "review" and again.review["point"] == "answer"
    assert queries("p")[rounds] == ("Bubye River Beitbridge", "reviewer")

    done = resume("p", review="approve")
    assert done.outcome == "answer" and done.thread_id == "p" and done.answer
    assert "answer approved by the reviewer" in done.debug["notes"]
    assert any("sent back for more search by the reviewer" in n for n in session_state("p")["notes"])
    assert session_state("p")["_status"] == "done"
    with pytest.raises(InputError, match="is not waiting for a review: done"):
        resume("p", review="approve")


def test_approve_the_plan_as_is_and_without_a_decision_it_asks_again(home):
    assert research(TASK, thread_id="a", review="plan").outcome == "review"
    again = resume("a")  # no decision: the same question, nothing searched
    assert again.outcome == "review" and again.review["point"] == "plan" and not session_state("a")["records"]
    done = resume("a", review="approve")
    assert done.outcome == "answer" and queries("a")[0] == (TASK, "task")
    assert "plan approved by the reviewer" in session_state("a")["records"][0]["fallbacks"]


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        ({"action": "more", "note": "x"}, "more applies to the answer"),
        ({"action": "edit", "queries": []}, "needs at least one query"),
        ({"action": "edit", "queries": ["  "]}, "needs at least one query"),
        ({"action": "yes"}, "review decision: action: Input should be 'approve', 'edit' or 'more'"),
        ({"action": "approve", "extra": 1}, "review decision: extra: Extra inputs are not permitted"),
        (42, "a review decision is 'approve' or a dict with an action"),
    ],
)
def test_a_bad_decision_is_refused_before_anything_runs(home, decision, message):
    research(TASK, thread_id="b", review="plan")
    with pytest.raises(ReviewError, match=message):
        resume("b", review=decision)
    assert session_state("b")["_status"] == "waiting for review of the plan"


def test_a_claim_waits_for_its_verdict_and_multi_source_refuses_review(home):
    paused = verify("The Bubye River is in Zimbabwe.", thread_id="c", review="answer")
    assert paused.outcome == "review" and paused.review["outcome"] in ("True", "False", "Invalid")
    assert resume("c", review="approve").outcome == paused.review["outcome"]
    with pytest.raises(InputError, match="works with single-source sessions"):
        research_multi(TASK, sources="local,wiki", review="plan")


def run_cli(*args, home, stdin=subprocess.DEVNULL):
    return subprocess.run([*SAT, *args], env=child_env(home), capture_output=True, text=True, timeout=120, stdin=stdin)


@pytest.mark.slow
def test_cli_from_scripts_waits_with_exit_4_and_resumes_with_approve_or_edit(home, tmp_path):
    p = run_cli("research", TASK, "--review", "both", "--thread", "s", home=home)
    assert p.returncode == 4, p.stderr
    assert "waiting for review of the plan: thread s" in p.stdout and f"  1. {TASK}" in p.stdout
    assert "saturate resume s --approve | --edit FILE" in p.stdout
    runs = json.loads(run_cli("runs", "--json", home=home).stdout)
    assert [r["status"] for r in runs if r["thread"] == "s"] == ["waiting for review of the plan"]

    plan = tmp_path / "plan.txt"
    plan.write_text("# the queries, one per line\nBubye River Zimbabwe\n\nBubye River Limpopo\n")
    p = run_cli("resume", "s", "--edit", str(plan), home=home)
    assert p.returncode == 4 and "waiting for review of the answer: thread s" in p.stdout, p.stderr
    note = tmp_path / "note.txt"
    note.write_text("Bubye River Beitbridge\n")
    assert run_cli("resume", "s", "--edit", str(note), home=home).returncode == 4
    p = run_cli("resume", "s", "--approve", "--json", home=home)
    assert p.returncode == 0, p.stderr
    assert [q for q, _ in queries_of(home, "s")][:2] == ["Bubye River Zimbabwe", "Bubye River Limpopo"]
    assert ("Bubye River Beitbridge", "reviewer") in queries_of(home, "s")
    p = run_cli("resume", "s", "--approve", home=home)
    assert p.returncode == 2 and p.stderr.strip() == "saturate: error: thread 's' is not waiting for a review: done"
    p = run_cli("resume", "s", "--edit", str(tmp_path / "missing.txt"), home=home)
    assert p.returncode == 2 and "--edit file" in p.stderr and "not found" in p.stderr and "Traceback" not in p.stderr


def queries_of(home, thread: str) -> list[tuple[str, str]]:
    state = json.loads(run_cli("show", thread, "--json", home=home).stdout)
    return [(r["query"], r["planner"]) for r in state["records"]]


def spawn(home, *args) -> pexpect.spawn:
    env = child_env(home, COLUMNS="200")
    return pexpect.spawn(SAT[0], [*SAT[1:], *args], env=env, encoding="utf-8", timeout=90, dimensions=(50, 200))


@pytest.mark.slow
def test_cli_interactive_prompt_on_a_terminal(home):
    child = spawn(home, "research", TASK, "--review", "both", "--thread", "i", "--max-rounds", "3")
    child.expect("plan> ")
    child.sendline("+ Bubye River Limpopo")
    child.expect("2. Bubye River Limpopo")
    child.expect("plan> ")
    child.sendline("-1")
    child.expect("plan> ")
    child.sendline("")  # approve the edited plan
    child.expect("answer> ")
    child.sendline("m")
    child.expect("what to search for: ")
    child.sendline("Bubye River Beitbridge")
    child.expect("answer> ")
    child.sendline("")
    child.expect("thread: i")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    got = queries_of(home, "i")
    assert got[0] == ("Bubye River Limpopo", "reviewed") and ("Bubye River Beitbridge", "reviewer") in got


@pytest.mark.slow
def test_killed_while_waiting_then_resumed(home):
    child = spawn(home, "research", TASK, "--review", "plan", "--thread", "k")
    child.expect("plan> ")
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    child.close()
    assert child.signalstatus == signal.SIGKILL
    assert "waiting for review of the plan" in run_cli("show", "k", "--json", home=home).stdout
    p = run_cli("resume", "k", "--approve", home=home)
    assert p.returncode == 0 and "thread: k" in p.stdout, p.stderr
    assert queries_of(home, "k")[0] == (TASK, "task")


def edit_files(tmp_path) -> dict[str, tuple[str, str]]:
    """``--edit`` paths that are no plan (path, what the one line says), each made in ``tmp_path``."""
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")  # read_text() waited for a writer forever
    (tmp_path / "binary").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")  # taken for queries, replaced chars
    (tmp_path / "nul").write_bytes(b"Bubye River\x00\x00\x00\n")  # UTF-8, yet binary
    (tmp_path / "big").write_text("Bubye River\n" * 2_000)  # 24,000 bytes: read whole, then cut silently
    return {
        "folder": (str(tmp_path / "folder"), "is a folder, not a regular file"),
        "fifo": (str(tmp_path / "fifo"), "is a device, pipe or socket, not a regular file"),
        "device": ("/dev/zero", "is a device, pipe or socket, not a regular file"),
        "binary": (str(tmp_path / "binary"), "is not UTF-8 text"),
        "nul": (str(tmp_path / "nul"), "holds NUL bytes: a binary file, not text"),
        "big": (str(tmp_path / "big"), "is larger than 20,000 bytes"),
    }


def test_an_edit_file_is_a_bounded_regular_text_file(home, tmp_path):
    """``resume --edit FILE`` read the whole file before cutting it to 20,000 characters (/dev/zero exhausted
    memory), hung on a FIFO and took a binary file's bytes for the plan's queries: each is one line, exit 2, and the
    session still waits for its review. A file at the bound is read whole. The child runs under a 4 GB address-space
    limit, so without the bound /dev/zero ends in a MemoryError, not in the kernel's OOM killer."""
    research(TASK, thread_id="w", review="plan")
    cap = lambda: resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))  # noqa: E731
    for name, (path, said) in edit_files(tmp_path).items():
        p = subprocess.run(
            [*SAT, "resume", "w", "--edit", path],
            env=child_env(home),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            preexec_fn=cap,
        )
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, (name, p.stderr)
        assert said in p.stderr and "Traceback" not in p.stderr, (name, p.stderr)
    assert session_state("w")["_review"]["point"] == "plan"  # nothing was decided
    at_bound = tmp_path / "at-bound.txt"
    at_bound.write_text("Bubye River Zimbabwe\n" + "#" * 19_978 + "\n")  # 20,000 bytes exactly
    assert at_bound.stat().st_size == 20_000  # MAX_EDIT_BYTES
    decision = decision_from_args(Namespace(edit=str(at_bound), approve=False), "plan")
    assert decision == {"action": "edit", "queries": ["Bubye River Zimbabwe"]}
