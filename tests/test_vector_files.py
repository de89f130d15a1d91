"""Vectors of several embedding models beside one corpus (issue 42): they live side by side within a bound, the least
recently used going first; a build in progress is never removed by another process (its cross-process lock); a build
whose progress is piped prints a line at intervals — with the real models (all-MiniLM-L6-v2 int8 ONNX, and USE
multilingual v3) on small corpora."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from rich.console import Console

from saturate.cli import main
from saturate.graph.embeddings import build_embeddings
from saturate.sources import LocalCorpus, vector_files, vectors
from saturate.sources.vectors import VectorIndex
from saturate.state.settings import load_settings
from saturate.views.progress import Progress

DOCS = [
    {"id": "nile", "title": "Nile", "text": "The longest river of Africa, flowing north into the Mediterranean Sea."},
    {"id": "vistula", "title": "Vistula", "text": "The longest river in Poland, flowing into the Baltic Sea."},
    {"id": "vaccine", "title": "Vaccine", "text": "A preparation that provides acquired immunity to a disease."},
    {"id": "paris", "title": "Paris", "text": "Capital and largest city of France."},
]


@pytest.fixture(scope="module")
def minilm():
    return build_embeddings(load_settings({}, env={}))


class Counting:
    """A real model, counting the texts it embeds."""

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
    return path, tmp_path / "index"


def attach(path, index, model, identity) -> tuple[LocalCorpus, int]:
    """A new session's open of the corpus under ``model``, read from disk (not this process's copy): (the corpus, how
    many texts the model embedded for it)."""
    vectors._OPEN.clear()
    src = LocalCorpus.open(path, index)
    counting = Counting(model)
    src.attach_vectors(counting, identity, 0.4)
    return src, counting.texts


def test_switching_models_keeps_both_models_vectors(corpus, minilm):
    """A default session after a multilingual one (and back) embeds nothing again: both sets of vectors stay."""
    path, index = corpus
    use = build_embeddings(load_settings({"embed_model": "multilingual"}, env={}))
    first, built = attach(path, index, *minilm)
    assert built == len(DOCS)
    _, built = attach(path, index, *use)
    assert built == len(DOCS)
    for model in (minilm, use, minilm, use):
        _, built = attach(path, index, *model)
        assert built == 0, model[1]  # reused: nothing embedded again
    assert first.index_path is not None
    for model in (minilm, use):
        assert VectorIndex.path_for(first.index_path, model[1]).is_file()


def test_the_bound_evicts_the_least_recently_used_model(corpus, minilm, monkeypatch):
    monkeypatch.setattr(vector_files, "KEEP_MODELS", 2)
    path, index = corpus
    model, identity = minilm
    a, b, c = (f"{identity}-{x}" for x in "abc")
    src, _ = attach(path, index, model, a)
    attach(path, index, model, b)
    _, built = attach(path, index, model, a)  # a used after b: b is now the least recently used
    assert built == 0
    attach(path, index, model, c)
    assert src.index_path is not None
    kept = {x: VectorIndex.path_for(src.index_path, x) for x in (a, b, c)}
    assert kept[a].is_file() and kept[c].is_file()
    assert not kept[b].exists() and not kept[b].with_suffix(".json").exists()
    assert [f.name for f in index.glob(f"{kept[b].stem}.*")] == [kept[b].name + ".lock"]  # its (empty) lock stays
    _, built = attach(path, index, model, b)  # b again: built anew, and now a is the least recently used
    assert built == len(DOCS) and not kept[a].exists() and kept[c].is_file()


HELD_BUILD = """
import sys
from pathlib import Path
from saturate.graph.embeddings import OnnxEmbeddings
from saturate.sources import LocalCorpus

class Held:  # the real model; its second batch waits for the parent's word, the build (and its lock) under way
    def __init__(self):
        self.inner, self.batches = OnnxEmbeddings(), 0
    def embed_documents(self, texts):
        self.batches += 1
        if self.batches == 2:
            print("building", flush=True)
            if sys.stdin.readline().strip() != "go":
                sys.exit(3)
        return self.inner.embed_documents(texts)
    def embed_query(self, text):
        return self.inner.embed_query(text)

src = LocalCorpus.open(Path(sys.argv[1]), Path(sys.argv[2]))
src.attach_vectors(Held(), sys.argv[3], 0.4)
print("built", src.search("longest river in Poland", 1)[0].title, flush=True)
"""


def test_a_build_in_progress_is_never_removed_by_another_process(tmp_path, minilm, monkeypatch):
    """A process builds one model's vectors (held mid-way, its lock taken); another opens the corpus under another
    model with a bound of one model, so that the first's files are the ones to go: they stay, the build finishes and
    its vectors are read. Once that build is done (the lock free), the bound removes them."""
    monkeypatch.setattr(vector_files, "KEEP_MODELS", 1)
    model, identity = minilm
    docs = [{"id": f"d{i}", "title": f"River {i}", "text": f"River number {i} flows into the sea."} for i in range(40)]
    path, index = tmp_path / "c.jsonl", tmp_path / "index"
    path.write_text("\n".join(json.dumps(d) for d in DOCS + docs) + "\n")
    held = f"{identity}-held"
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_BUILD, str(path), str(index), held],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("SATURATE_")},
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "building"
        src, built = attach(path, index, model, identity)  # another model, another process: its bound is one model
        assert built == len(DOCS) + len(docs)
        assert src.index_path is not None
        theirs = VectorIndex.path_for(src.index_path, held)
        partial = theirs.with_name(theirs.stem + ".partial.npy")
        assert partial.is_file() and partial.with_suffix(".json").is_file()  # the build under way: untouched
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "built Vistula"
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert theirs.is_file() and not partial.exists()
    _, built = attach(path, index, model, identity)  # the build done and its lock free: now the bound takes it
    assert built == 0 and not theirs.exists()
    assert VectorIndex.path_for(src.index_path, identity).is_file()


def test_a_vector_file_being_written_is_not_an_index_builds_leftover(corpus):
    """Opening a corpus clears the temp files of index builds that died, never a file of the vectors being written
    (those are cleared by the vectors' own build, under their lock)."""
    path, index = corpus
    src = LocalCorpus.open(path, index)
    assert src.index_path is not None
    writing = index / f"{src.index_path.stem}.vec-0123456789ab.x7.building"
    writing.write_bytes(b"being written")
    dead = index / f"{src.index_path.stem}.x7.building"
    dead.write_bytes(b"a dead index build")
    LocalCorpus.open(path, index)
    assert writing.exists() and not dead.exists()


def progress_lines(calls, index_every: float = 0.05, index_every_s: float = float("inf")) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False)
    view = Progress(task="t", console=console, index_every=index_every, index_every_s=index_every_s)
    for done, total in calls:
        view.index_progress(done, total)
    return [line for line in out.getvalue().splitlines() if line.startswith("indexing the corpus by meaning")]


def test_piped_progress_prints_at_each_share_of_the_corpus_and_after_a_while_without_a_line():
    calls = [(n, 10_000) for n in range(16, 10_000, 16)] + [(10_000, 10_000)]
    lines = progress_lines(calls)
    assert lines[0].endswith(": 16 / 10,000 documents") and lines[-1].endswith(": 10,000 / 10,000 documents")
    assert len(lines) == 21  # the start, each 5 % (500 documents) and the end
    assert len(progress_lines(calls, index_every=1.0)) == 2  # by share alone: the start and the end
    assert len(progress_lines(calls, index_every=1.0, index_every_s=0.0)) == len(calls)  # by time: every call


def test_a_piped_session_shows_the_first_build_more_than_once(hybrid_home, tmp_path, capsys):
    """The CLI's progress off a terminal (here captured, as in a pipe) on a corpus of a few hundred documents: a line
    at the start, at intervals, at the end."""
    rivers = [{"id": f"r{i}", "title": f"River {i}", "text": f"River {i} flows into lake {i % 7}."} for i in range(300)]
    path = tmp_path / "rivers.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in rivers) + "\n")
    assert main(["research", "Which river flows into lake 3?", "--corpus", str(path), "--max-rounds", "1"]) == 0
    err = capsys.readouterr().err
    counts = [line.split(": ")[1] for line in err.splitlines() if line.startswith("indexing the corpus by meaning")]
    assert len(counts) > 2 and counts[-1] == "300 / 300 documents", err
    assert len(set(counts)) == len(counts)  # each line a new count


def test_vectors_lost_while_being_built_leave_the_session_ranking_by_words_noted(hybrid_home, corpus, minilm):
    """Whatever removes a build's file under it (issue 42: another process did), the session is not lost: it ranks by
    words alone, its notes say why, and the next session builds the vectors."""
    from saturate.graph import research, session_state

    path, _ = corpus
    docs = [{"id": f"d{i}", "title": f"River {i}", "text": f"River number {i} flows into the sea."} for i in range(40)]
    path.write_text("\n".join(json.dumps(d) for d in DOCS + docs) + "\n")

    class Vanishing(Counting):
        """The real model; at its second batch the build's file is removed."""

        calls = 0

        def embed_documents(self, texts):
            self.calls += 1
            if self.calls == 2:
                for f in (hybrid_home / "index").glob("*.partial.npy"):
                    f.unlink()
            return super().embed_documents(texts)

    vanishing = Vanishing(minilm[0])
    result = research("Which is the longest river in Poland?", thread_id="v", corpus=str(path), embeddings=vanishing)
    assert result.outcome == "answer" and vanishing.calls >= 2
    said = [n for r in session_state("v")["records"] for n in r["fallbacks"]]  # the source's notes: the round's
    assert any("retrieval by words only: the corpus's vectors could not be built or read" in n for n in said), said
    again = research("Which is the longest river in Poland?", thread_id="w", corpus=str(path), embeddings=minilm[0])
    assert result.outcome == again.outcome == "answer"
    assert not any("retrieval by words only" in n for r in session_state("w")["records"] for n in r["fallbacks"])
    assert list((hybrid_home / "index").glob("*.vec-*.npy"))  # built, this time
