"""Shared fixtures: real local corpora (SQLite FTS5), a fresh data directory per test."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from saturate.sources.local import LocalCorpus

ROOT = Path(__file__).resolve().parents[1]
# A run started in the background by a shell without job control (`(pytest &)`, some CI runners) inherits SIGINT
# ignored, and so would every process the tests start: the tests that press Ctrl-C on a session would see it ignored
# (exit 0, not 130). The tests press it themselves: here it is Python's own, and what they start gets the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# The public evaluation data (musique/, hotpotqa/, webq/, factcheck/): $SATURATE_EVAL_DATA, else the project's
# copy beside the checkout (docs/development.md). The benchmarks the tests run are given it the same way.
EVAL_DATA = Path(os.environ.get("SATURATE_EVAL_DATA") or ROOT.parent / "shared" / "data")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` (servers, wheels, many sessions: up to a minute each) run first, in their order: on
    two workers a slow one left for the end ran alone while the other worker idled (a sort every worker makes alike,
    as pytest-xdist requires)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def eval_file(*parts: str, root: Path | None = None) -> Path:
    """The one place that decides a test needs the evaluation data: the folder (no ``parts``) or a file in it, each
    test asking for every file it or the benchmark it runs reads. No data folder at all (a fresh clone with no
    ``../shared`` beside it, SATURATE_EVAL_DATA naming nothing): the test is skipped, saying so. The folder there
    without the file: the test fails — where the data is (CI), no test that needs it is ever skipped."""
    root = EVAL_DATA if root is None else root
    if not root.is_dir():
        pytest.skip(f"no evaluation data at {root} (set SATURATE_EVAL_DATA: docs/development.md)")
    path = root.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"the evaluation data at {root} has no {'/'.join(parts)}", pytrace=False)
    return path


def fake_eval_data(root: Path) -> Path:
    """A minimal evaluation data folder in the layout the benchmarks read (musique/, hotpotqa/: tasks.jsonl and
    corpus.jsonl; webq/tasks.jsonl; factcheck/claims.jsonl), its records made up here: for the
    tests of what a benchmark does with a damaged file, never a copy of the real data."""
    paragraphs = [
        ("Bubye River", "The Bubye River is a river in southern Zimbabwe, a tributary of the Limpopo River."),
        ("Limpopo River", "The Limpopo River rises in South Africa and flows east to the Indian Ocean."),
        ("Harare", "Harare is the capital and most populous city of Zimbabwe."),
    ]
    corpus = [{"id": f"p{i}", "title": t, "text": x} for i, (t, x) in enumerate(paragraphs)]
    tasks = [
        {"id": "q1", "question": "Which river does the Bubye flow into?", "answers": ["Limpopo River"]},
        {"id": "q2", "question": "What is the capital of Zimbabwe?", "answers": ["Harare"]},
    ]
    hops = [{**t, "gold_ids": ["p0", "p1"] if t["id"] == "q1" else ["p2"], "hops": 2} for t in tasks]
    hit = {"url": "https://example.org/bubye", "passage": paragraphs[0][1], "stance": "support"}
    claims = [{"id": "c1", "claim": "The Bubye River is in Zimbabwe.", "label": "True", "hits": [hit]}]
    files = {
        "musique/tasks.jsonl": hops,
        "musique/corpus.jsonl": corpus,
        "hotpotqa/tasks.jsonl": hops,
        "hotpotqa/corpus.jsonl": corpus,
        "webq/tasks.jsonl": tasks,
        "factcheck/claims.jsonl": claims,
    }
    for name, rows in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


def _eval_env() -> dict[str, str]:
    return {"SATURATE_EVAL_DATA": str(EVAL_DATA)} if EVAL_DATA.is_dir() else {}


def child_env(home: Path | str, *, drop: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """The environment of a child process (the CLI, a batch, a server): the caller's without its SATURATE_* settings
    (and without ``drop``'s prefixes), SATURATE_HOME=home, local corpora ranked by words (see ``home``) unless the
    test runs under ``hybrid_home`` and passes its home, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SATURATE_", *drop))}
    env["SATURATE_HOME"] = str(home)
    env.update(_eval_env())
    if _MODEL_CACHE:
        env["SATURATE_MODEL_CACHE"] = str(_MODEL_CACHE[0])
    under_fixture = os.environ.get("SATURATE_HOME") == str(home)
    if not under_fixture or "SATURATE_RETRIEVAL" in os.environ:
        env["SATURATE_RETRIEVAL"] = "lexical"
    return {**env, **extra}


# The suite's own knobs, read by the tests and never by saturate (test_report_browser.py, test_fuzz.py,
# test_real_model.py): kept when a test's environment is cleared.
SUITE_KNOBS = frozenset({"SATURATE_CHROMIUM", "SATURATE_FUZZ_N", "SATURATE_LLAMA_MODEL", "SATURATE_LLAMA_PYTHON"})


# The folder of the ONNX models' optimised graphs (state/onnx_cache.py) for this run: one per run (per xdist worker),
# never the user's ~/.cache, and not one per test (each test's home would hold 113 MB and optimise again).
_MODEL_CACHE: list[Path] = []


def _clear_saturate_env(mp: pytest.MonkeyPatch) -> None:
    """The caller's SATURATE_* out of the environment (its settings, its SATURATE_HOME), but the suite's knobs; the
    evaluation data as the tests find it (``EVAL_DATA``); the run's folder of optimised models."""
    for key in list(os.environ):
        if key.startswith("SATURATE_") and key not in SUITE_KNOBS:
            mp.delenv(key)
    for key, value in _eval_env().items():
        mp.setenv(key, value)
    if _MODEL_CACHE:
        mp.setenv("SATURATE_MODEL_CACHE", str(_MODEL_CACHE[0]))


@pytest.fixture(scope="session", autouse=True)
def _run_home(tmp_path_factory):
    """The module and session fixtures (set up before a test's own fixtures) run in a data directory of this run's,
    never in the user's."""
    _MODEL_CACHE[:] = [tmp_path_factory.mktemp("model-cache")]
    with pytest.MonkeyPatch.context() as mp:
        _clear_saturate_env(mp)
        mp.setenv("SATURATE_HOME", str(tmp_path_factory.mktemp("run-home")))
        yield


@pytest.fixture(autouse=True)
def own_home(tmp_path, monkeypatch):
    """Every test runs in a data directory of its own, whatever the environment says: the caller's SATURATE_*
    cleared, SATURATE_HOME a folder under the test's tmp_path (not made until something writes there). A test run
    with SATURATE_HOME set once left a session and a corpus index in the user's folder (issue 42: a test that called
    ``research_multi`` without ``home``); tests/test_harness.py proves it untouched. ``home`` names a folder of
    its own on top of this, for the tests that look inside it."""
    _clear_saturate_env(monkeypatch)
    own = tmp_path / "own-home"
    monkeypatch.setenv("SATURATE_HOME", str(own))
    return own


@pytest.fixture
def home(own_home, tmp_path, monkeypatch):
    """A fresh SATURATE_HOME (the caller's SATURATE_* settings cleared: ``own_home``). Local corpora rank by words
    here (SATURATE_RETRIEVAL=lexical: a fresh home would embed a corpus in every test); the tests of retrieval by
    meaning (test_retrieval.py) use ``hybrid_home``."""
    h = tmp_path / "home"
    monkeypatch.setenv("SATURATE_HOME", str(h))
    monkeypatch.setenv("SATURATE_RETRIEVAL", "lexical")
    return h


@pytest.fixture
def hybrid_home(home, monkeypatch):
    """``home`` with the default retrieval: words and meaning."""
    monkeypatch.delenv("SATURATE_RETRIEVAL")
    return home


@pytest.fixture(scope="session")
def musique_corpus() -> Path:
    return eval_file("musique", "corpus.jsonl")


@pytest.fixture(scope="session")
def musique_tasks() -> list[dict]:
    return [json.loads(line) for line in eval_file("musique", "tasks.jsonl").open()]


@pytest.fixture(scope="session")
def musique_source(musique_corpus, tmp_path_factory):
    return LocalCorpus.open(musique_corpus, tmp_path_factory.mktemp("musique-index"))


@pytest.fixture(scope="session")
def wiki_source(tmp_path_factory):
    from saturate.sources import open_wiki

    return open_wiki(tmp_path_factory.mktemp("wiki-index"))


def strip_timings(state: dict) -> dict:
    """A state without wall-clock fields, for comparing runs."""

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("durations_ms", "ms")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    return clean({k: v for k, v in state.items() if not k.startswith("_")})


class InterruptingSource:
    """A real corpus; raises KeyboardInterrupt (escapes every node, as a Ctrl-C would) on the ``at_call``-th
    search: the session stays resumable."""

    def __init__(self, inner, at_call: int = 2):
        self.inner, self.at_call, self.calls = inner, at_call, 0
        self.name = inner.name

    def search(self, query, k):
        self.calls += 1
        if self.calls == self.at_call:
            raise KeyboardInterrupt("simulated Ctrl-C")
        return self.inner.search(query, k)

    def fetch(self, result):
        return self.inner.fetch(result)

    def documents(self, ids):  # the corpus's whole texts, as the source a resume gets offers them
        return self.inner.documents(ids)


BRIDGE = "When did the Sydney Harbour Bridge open and who was its engineer?"


def bridge_sources() -> dict:
    """Two independent corpora that agree on the opening and the engineer and disagree on the year (1930)."""
    gov = LocalCorpus.from_records(
        [
            {
                "id": "1",
                "title": "Sydney Harbour Bridge",
                "url": "https://www.nsw.gov.au/bridge",
                "text": "The Sydney Harbour Bridge opened in 1932 after eight years of construction work. "
                "John Bradfield (born 1867) was the chief engineer of the Sydney Harbour Bridge. "
                "Dorman Long built the arch.",
            },
            {
                "id": "2",
                "title": "John Bradfield",
                "url": "https://www.nsw.gov.au/bradfield",
                "text": "John Bradfield was an Australian civil engineer who designed the Sydney Harbour Bridge.",
            },
        ],
        "gov",
    )
    press = LocalCorpus.from_records(
        [
            {
                "id": "a",
                "title": "Harbour Bridge at 90",
                "url": "https://www.smh.com.au/bridge90",
                "text": "The Sydney Harbour Bridge opened in 1932 after eight years of building work by Dorman Long. "
                "John Bradfield oversaw the Sydney Harbour Bridge project for the state.",
            },
            {
                "id": "b",
                "title": "Bridge myths",
                "url": "https://www.myths.com/bridge",
                "text": "The Sydney Harbour Bridge opened in 1930 after eight years of construction work, some say.",
            },
        ],
        "press",
    )
    return {"gov": gov, "press": press}


def run_cli(*args, home, env=None, timeout=120):
    """The `saturate` command of this environment, run from the checkout with ``child_env(home)``."""
    exe = shutil.which("saturate", path=os.path.dirname(sys.executable)) or shutil.which("saturate")
    cmd = [exe] if exe else [sys.executable, "-m", "saturate.cli"]
    return subprocess.run(
        [*cmd, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_env(home, **(env or {})),
    )


def saturate_cli(home, *args, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m saturate.cli ARGS`` in ``child_env(home)``, stdin closed, asserting that whatever it says on
    stderr is no traceback (the tests of bad input: one line and an exit code)."""
    done = subprocess.run(
        [sys.executable, "-m", "saturate.cli", *args],
        env=child_env(home, **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def without_waiting_on(fifo: Path, call, other_end: int, what: str) -> list:
    """``call()`` in a thread: [what it returned, or the exception it raised]. Still running after 10 s (an
    ``open()`` waiting on ``fifo``), the FIFO's other end (``os.O_RDONLY`` or ``os.O_WRONLY``) is opened so that the
    thread ends, and the test fails: "``what`` waited on the FIFO"."""
    got: list = []

    def target():
        try:
            got.append(call())
        except BaseException as exc:
            got.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        os.close(os.open(fifo, other_end | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail(f"{what} waited on the FIFO")
    return got


def in_the_foreground() -> None:
    """``preexec_fn`` of a child a test interrupts with SIGINT: started as a terminal starts a foreground job, with
    Ctrl-C at its default, whatever this run inherited (a suite run as a shell's background job ignores SIGINT, and
    its children would: the command then keeps it ignored, as Python does)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.fixture
def unjudged(monkeypatch):
    """The model's answer is not judged by the trained reader (``nodes._answer.judged_by_reader`` keeps it whole)
    nor held to the answer without the model (``nodes._answer.agrees`` says yes): for the tests of what the answer's
    plumbing does with a scripted reply (citations, grounding, cuts, the wire), whose outcome would otherwise hang on
    how the reader scores the scripted sentences. The judgement and the agreement are tested in test_answers.py and
    test_gguf.py."""
    import saturate.nodes._answer as answer_module

    monkeypatch.setattr(answer_module, "judged_by_reader", lambda judge, task, answer, *args, **kwargs: answer)
    monkeypatch.setattr(answer_module, "agrees", lambda *args, **kwargs: True)


LOCAL = ("127.0.0.1",)


@pytest.fixture
def no_foreign_connections(monkeypatch):
    """Every outgoing TCP connection must go to 127.0.0.1 (the attempts, in order). The web tests use it on every
    test: ``pytestmark = pytest.mark.usefixtures("no_foreign_connections")``."""
    real = socket.create_connection
    attempts: list[tuple] = []

    def guarded(address, *args, **kwargs):
        attempts.append(address)
        if address[0] not in LOCAL:
            raise AssertionError(f"a test tried to connect to {address!r}")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", guarded)
    return attempts


# The Bubye question and a model's scripted replies to it (tests/test_ollama.py, tests/test_openai.py): the plan, the
# decomposition into two slots, and the slot values after round 1 and later.
BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"
PLAN = '{"queries": ["Bubye River country", "waterfalls of Zimbabwe"]}'
DECOMPOSE = json.dumps(
    {
        "chains": [
            {
                "question": BUBYE,
                "slots": [
                    {"subject": "Bubye River", "relation": "country where it is found", "kind": "place"},
                    {"subject": "#1", "relation": "waterfall in", "kind": "name"},
                ],
            }
        ]
    }
)
FILL = '{"1.1": "Zimbabwe", "1.2": "Victoria Falls"}'  # Victoria Falls is in no passage of round 1: dropped there
FILL_ROUND_ONE = '{"1.1": "Zimbabwe", "1.2": null}'
