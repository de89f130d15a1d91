"""Small CLI faults found by probing (issue 24), each with the test that failed before its fix: an invalid
environment variable is named as such, `--home` works after the command too, `runs` keeps one line a session at
80 columns, and the Ctrl-C message names the thread to resume."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from saturate.cli import main

from conftest import child_env, in_the_foreground

SAT = [sys.executable, "-m", "saturate.cli"]


def run(home, *args, **env):
    return subprocess.run(
        [*SAT, *args], env=child_env(home, **env), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_an_invalid_environment_variable_is_named(home):
    done = run(home, "research", "Bubye River", SATURATE_MAX_ROUNDS="abc")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "SATURATE_MAX_ROUNDS (environment): Input should be a valid integer" in done.stderr
    assert (
        run(home, "research", "Bubye River", "--max-rounds", "2", "--quiet", SATURATE_MAX_ROUNDS="abc").returncode == 0
    )


def test_home_after_the_command(home, tmp_path):
    other = tmp_path / "other"
    assert (
        run(home, "research", "Bubye River", "--thread", "elsewhere", "--quiet", "--home", str(other)).returncode == 0
    )
    listed = json.loads(run(home, "runs", "--json", "--home", str(other)).stdout)
    assert [r["thread"] for r in listed] == ["elsewhere"]
    assert json.loads(run(home, "runs", "--json").stdout) == []  # the default home has nothing


@pytest.mark.slow
def test_runs_piped_keeps_one_whole_line_a_session_whatever_the_columns(home):
    """Piped, the table cut the task to "What …" at 80 columns (issue 35): a pipe gets every cell whole on one line
    (an 80-column terminal wraps instead: tests/test_first_hour.py)."""
    long_task = "What is the name of the waterfall in the country where the Bubye River is found, and who named it?"
    assert run(home, "research", long_task, "--thread", "s20261124-121936-40f98b", "--quiet").returncode == 0
    table = run(home, "runs", COLUMNS="80").stdout.splitlines()
    rows = [line for line in table if line.startswith("│")]
    assert len(rows) == 1 and "s20261124-121936-40f98b" in rows[0] and "…" not in rows[0]
    assert long_task[:80] in rows[0]
    stamp = json.loads(run(home, "runs", "--json").stdout)[0]["updated"]
    assert rows[0].rstrip("│ ").endswith(stamp[17:19])  # the time is whole, to the second


def test_ctrl_c_names_the_thread_to_resume(home):
    proc = subprocess.Popen(
        [
            *SAT,
            "research",
            "How does photosynthesis work?",
            "--thread",
            "cc1",
            "--min-rounds",
            "40",
            "--max-rounds",
            "40",
        ],
        env=child_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=in_the_foreground,
    )
    lines = []
    assert proc.stderr is not None
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("round 1:"):
            proc.send_signal(signal.SIGINT)
            break
    rest = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130, "".join(lines) + rest
    assert "continue it with `saturate resume cc1`" in rest


def test_ctrl_c_after_the_last_step_says_the_session_finished(home, monkeypatch, capsys):
    """A Ctrl-C that landed while the result printed said "interrupted … resume" while `runs` said done (issue 35):
    it says the session had finished and how to print it (exit 130: the printing was interrupted)."""
    import saturate.cli as cli
    import saturate.cli.research as research_cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(research_cli, "print_result", interrupted)
    # the CLI makes a second Ctrl-C end the process at once (a SIGINT handler): not in this test's process
    monkeypatch.setattr(cli, "stop_at_next_interrupt", lambda: None)
    assert main(["research", "Where is the Bubye River?", "--thread", "late1", "--max-rounds", "1"]) == 130
    err = capsys.readouterr().err
    assert "the session late1 had finished — `saturate show late1` prints it" in err and "resume" not in err


class Down:
    """A source whose every search fails (no network)."""

    name = "down"

    def search(self, query, k):
        raise ConnectionError("network unreachable")

    def fetch(self, result):
        return ""


def test_when_every_search_failed_the_stop_reason_says_so(home):
    from saturate.graph import research

    result = research("Where is the Bubye River?", source=Down(), novelty_epsilon=0.0)
    assert result.outcome == "no_results" and result.debug["errors"]
    assert "the search failed, so nothing new came in" in result.stop_reason
    assert "already known" not in result.stop_reason


def test_checkpoints_of_a_multi_source_session_has_no_empty_fork_list(home, capsys):
    from saturate.cli import main
    from saturate.graph import research_multi

    research_multi("Where is the Bubye River?", sources="local,wiki", thread_id="mx")
    assert main(["checkpoints", "mx"]) == 0
    out = capsys.readouterr().out
    assert "fork points: none — mx has no completed round to fork from" in out and "in []" not in out


@pytest.mark.slow
def test_an_output_path_that_cannot_be_written_is_one_line(home, tmp_path):
    assert run(home, "research", "Bubye River", "--thread", "w1", "--quiet").returncode == 0
    cases = [
        (("graph", "--out", "/dev/null"), "cannot write /dev/null: File exists (--out takes a folder)"),
        # refused before the session is read (state/files.py output_path), naming the flag and the path
        (("show", "w1", "--html", "/"), "--html / is a folder: it takes a regular file"),
        (("show", "w1", "--md", "/"), "--md / is a folder: it takes a regular file"),
        (("show", "w1", "--chart", str(tmp_path / "f" / "x.png" / "y.png")), "y.png cannot be used (Not a directory)"),
    ]
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "x.png").write_text("a file, not a folder")
    for args, message in cases:
        done = run(home, *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)


def test_a_task_that_is_not_utf8_is_bad_input(home):
    done = subprocess.run(
        [*SAT, "research", b"Bubye \xff\xfe River"], env=child_env(home), capture_output=True, timeout=60
    )
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and "is not valid UTF-8 text" in err and "Traceback" not in err


def test_a_second_ctrl_c_while_a_batch_exits_ends_130_at_once(home, tmp_path, musique_corpus, musique_tasks):
    """The first Ctrl-C stops the batch (its finished tasks written); the process then waits for the workers'
    steps under way. A second one then ended inside Python's exit: a KeyboardInterrupt traceback and -2. Now it
    leaves at once with 130 and one line."""
    import time

    tasks = tmp_path / "t.jsonl"
    tasks.write_text("".join(json.dumps({"id": t["id"], "question": t["question"]}) + "\n" for t in musique_tasks[:8]))
    out = tmp_path / "out.jsonl"
    slow = ["--min-rounds", "40", "--max-rounds", "40", "--novelty-epsilon", "0"]  # sessions of seconds
    proc = subprocess.Popen(
        [*SAT, "batch", str(tasks), "--workers", "2", "--out", str(out), "--corpus", str(musique_corpus), *slow],
        env=child_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=in_the_foreground,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)  # to the parent only: the workers go on with their sessions
    time.sleep(0.5)  # the parent has printed its summary and waits for the workers at exit
    proc.send_signal(signal.SIGINT)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "stopped at once (second Ctrl-C)" in err


def test_a_lone_surrogate_in_a_corpus_or_task_line_is_named(home, tmp_path):
    """JSON allows "\\ud800" alone; no UTF-8 text holds it: the corpus index (and a batch's result line) failed
    with UnicodeEncodeError tracebacks. A valid pair (an emoji) is fine."""
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"id": "1", "title": "Bubye River \\ud83d\\ude00", "text": "The Bubye River is in Zimbabwe."}\n'
        '{"id": "2", "title": "Limpopo", "text": "The Limpopo \\udc00 River flows to the Indian Ocean."}\n'
    )
    done = run(home, "research", "Bubye River", "--corpus", str(corpus))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "line 2 holds \\udc00, half of a surrogate pair" in done.stderr
    corpus.write_text(corpus.read_text().splitlines()[0] + "\n")
    assert run(home, "research", "Bubye River", "--corpus", str(corpus), "--max-rounds", "2").returncode == 0
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('{"id": "a", "question": "Bubye \\ud800 River"}\n')
    done = run(home, "batch", str(tasks), "--corpus", str(corpus))
    assert done.returncode == 2 and "line 1 holds \\ud800" in done.stderr and "Traceback" not in done.stderr


def test_a_bidi_override_in_a_thread_id_is_refused_and_never_shown_raw(home, tmp_path, monkeypatch):
    """U+202E reversed the rest of the line wherever the id was shown (the checkpoints title, the HTML and
    Markdown reports). New ids with one are refused; a session that has one (made before) is shown escaped."""
    from saturate.graph import research, session

    rlo = "ab\u202ecd"
    done = run(home, "research", "Bubye River", "--thread", rlo)
    assert done.returncode == 2 and "bidi overrides" in done.stderr and "\u202e" not in done.stderr
    monkeypatch.setattr(session, "check_thread", lambda t: t)  # as an older saturate let it in
    research("Bubye River", thread_id=rlo, max_rounds=2)
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    shown = [run(home, "checkpoints", rlo), run(home, "show", rlo, "--html", str(html), "--md", str(md))]
    assert [d.returncode for d in shown] == [0, 0], [d.stderr for d in shown]
    assert not any("\u202e" in d.stdout + d.stderr for d in shown)
    for text in (shown[0].stdout, html.read_text(), md.read_text()):
        assert "\u202e" not in text and "ab\\u202ecd" in text


def test_a_full_disk_before_the_first_checkpoint_says_run_it_again(home, monkeypatch, capsys):
    """Issue 36: a full disk before anything was saved said "free space, then resume", and resume then said unknown
    thread. It says what is true: nothing was saved; free space and run the command again."""
    import sqlite3

    import saturate.graph.session as session

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(session, "start", full)
    assert main(["research", "Where is the Bubye River?", "--thread", "full0"]) == 1
    err = capsys.readouterr().err
    assert "the session full0 saved no step" in err and "run the command again" in err and "resume" not in err, err
    assert "no space left" in err or "cannot be written" in err


def test_a_perf_workdir_that_is_no_folder_is_one_line(home, tmp_path):
    """``bench perf --workdir /dev/null`` (or any existing file) was a FileExistsError traceback."""
    afile = tmp_path / "afile"
    afile.write_text("mine")
    for workdir in ("/dev/null", str(afile)):
        done = run(home, "bench", "perf", "--quick", "--only", "cache_hit_ms", "--workdir", workdir)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert (
            done.stderr.strip() == f"saturate: error: --workdir {workdir} exists and is not a folder; it takes a folder"
        )
    assert afile.read_text() == "mine"
