"""The vectors that ship with saturate (sources/shipped_vectors.py): the embedded corpus's first session takes them
instead of embedding 10,033 summaries, and only when they are exactly this corpus's under this model."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from saturate.sources import shipped_vectors
from saturate.sources.local import LocalCorpus
from saturate.sources.vectors import VERSION, VectorIndex, doc_text

DOCS = [
    {"id": f"d{i}", "title": f"Topic {i}", "text": f"Document number {i} about subject {i % 5}."} for i in range(20)
]


class HashEmbeddings:
    """Deterministic vectors from each text's sha256 (``salt`` gives another model under the same name); counts
    the texts it was asked to embed."""

    def __init__(self, salt: str = ""):
        self.salt, self.embedded = salt, 0

    def _vec(self, text: str) -> list[float]:
        seed = int(hashlib.sha256((self.salt + text).encode()).hexdigest()[:8], 16)
        v = np.random.default_rng(seed).standard_normal(32).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts):
        self.embedded += len(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


@pytest.fixture
def shipped_dir(tmp_path, monkeypatch):
    folder = tmp_path / "shipped"
    folder.mkdir()
    monkeypatch.setattr(shipped_vectors, "SHIPPED_DIR", folder)
    return folder


def _ship(folder, docs, identity="hash:1", salt=""):
    texts = [doc_text(d["title"], d["text"]) for d in docs]
    vectors = np.asarray(HashEmbeddings(salt).embed_documents(texts), dtype=np.float32)
    return shipped_vectors.write(folder / "corpus.hash.npz", vectors, identity, texts, VERSION), vectors


def test_quantized_vectors_keep_their_direction():
    v = np.random.default_rng(3).standard_normal((200, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    back = shipped_vectors.dequantize(*shipped_vectors.quantize(v))
    assert back.dtype == np.float32 and np.allclose(np.linalg.norm(back, axis=1), 1, atol=1e-5)
    assert float(np.min(np.sum(v * back, axis=1))) > 0.9999


def test_a_corpus_with_shipped_vectors_is_not_embedded(shipped_dir, tmp_path):
    _, vectors = _ship(shipped_dir, DOCS)
    corpus = LocalCorpus.from_records(DOCS, "shipped", tmp_path / "index")
    model, built = HashEmbeddings(), []
    corpus.attach_vectors(model, "hash:1", 0.4, lambda done, total: built.append(done))
    assert model.embedded == shipped_vectors.SAMPLES and not built, "only the sampled rows were embedded"
    assert corpus._vectors is not None
    assert float(np.min(np.sum(corpus._vectors.vectors * vectors, axis=1))) > 0.9999
    assert not corpus.notes
    assert corpus.search("Topic 3 subject 3", 3)[0].title == "Topic 3"


@pytest.mark.parametrize(
    "change",
    ["another model of the same name", "another corpus", "another model", "a damaged file", "a foreign npz"],
)
def test_shipped_vectors_not_of_this_corpus_and_model_are_never_taken(shipped_dir, tmp_path, change):
    docs, identity, salt = DOCS, "hash:1", ""
    if change == "another model of the same name":
        salt = "retrained"  # the same identity, other vectors: the sampled rows disagree
    elif change == "another corpus":
        docs = [*DOCS[:-1], {**DOCS[-1], "text": "Changed."}]
    elif change == "another model":
        identity = "hash:2"
    _ship(shipped_dir, DOCS, identity="hash:1", salt=salt)
    if change == "a damaged file":
        path = shipped_dir / "corpus.hash.npz"
        path.write_bytes(path.read_bytes()[:300])
    elif change == "a foreign npz":
        np.savez(shipped_dir / "corpus.hash.npz", codes=np.zeros((20, 32), np.float64))
    corpus = LocalCorpus.from_records(docs, "shipped", tmp_path / "index")
    model = HashEmbeddings()
    corpus.attach_vectors(model, identity, 0.4)
    expected = np.asarray(HashEmbeddings().embed_documents([doc_text(d["title"], d["text"]) for d in docs]))
    assert model.embedded >= len(docs), "the corpus was embedded here"
    assert corpus._vectors is not None
    assert np.allclose(corpus._vectors.vectors, expected, atol=1e-6)
    if change == "another model of the same name":
        assert any("do not match this model's output" in n for n in corpus.notes), corpus.notes
    else:
        assert not corpus.notes


def test_the_shipped_file_is_the_embedded_corpus_under_the_default_model(tmp_path):
    """The file in the repository is current: its manifest names the default model and the embedded corpus as
    this install indexes it, and rows embedded now by the model agree with it (write it again with `python
    training/ship_vectors.py` when the model, the corpus package or DOC_CHARS change)."""
    from saturate.graph.embeddings import build_embeddings
    from saturate.sources.wiki import open_wiki
    from saturate.state.settings import load_settings

    model, identity = build_embeddings(load_settings({}, env={}))
    corpus = open_wiki(tmp_path / "index")
    texts = [doc_text(t, x) for t, x in corpus._titles_and_texts()]
    built: list[int] = []
    assert corpus.index_path is not None
    index = VectorIndex.open_or_build(
        corpus.index_path, corpus.count, corpus._titles_and_texts, model, identity, lambda d, t: built.append(d)
    )
    assert not built and index.remark is None, "the first session embedded the corpus: the shipped file is stale"
    rng = np.random.default_rng(11)
    rows = sorted(rng.choice(len(texts), 24, replace=False).tolist())
    live = np.asarray(model.embed_documents([texts[i] for i in rows]), dtype=np.float32)
    assert float(np.min(np.sum(live * index.vectors[rows], axis=1))) > 0.999
