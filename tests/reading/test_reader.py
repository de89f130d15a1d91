"""``reading.reader``: the shipped reader loads (its weights' sha256 checked), reads, and refuses damaged weights."""

from __future__ import annotations

import hashlib
import json

import pytest

import saturate.nodes.reading.reader as reader_module
from saturate.nodes.reading.reader import (
    CANDIDATES,
    FEATURES,
    HEAD_FILE,
    HEAD_SHA256_FILE,
    Reader,
    ReaderUnavailable,
    candidates,
    shipped_reader,
)

MONA = "Who painted the Mona Lisa?"
DOCS = [
    ("Louvre", "The Louvre is the world's most-visited museum. It is in Paris, on the Right Bank of the Seine."),
    (
        "Mona Lisa",
        "The Mona Lisa is a half-length portrait painting by Italian artist Leonardo da Vinci. It is considered an "
        "archetypal masterpiece of the Italian Renaissance.",
    ),
    ("Paris", "Paris is the capital and most populous city of France."),
]


def test_the_shipped_weights_name_every_feature_and_their_sha256_is_recorded():
    spec = json.loads(HEAD_FILE.read_text())
    assert list(spec["weights"]) == list(FEATURES) and isinstance(spec["bias"], float)
    assert spec["trained_on"]["questions"] > 1000 and spec["trained_on"]["positive"] > 100
    assert hashlib.sha256(HEAD_FILE.read_bytes()).hexdigest() == HEAD_SHA256_FILE.read_text().split()[0]


def test_the_reader_puts_the_sentence_that_answers_first():
    reads = shipped_reader().read(MONA, candidates(MONA, DOCS))
    best = max(reads, key=lambda r: r.p)
    assert best.candidate.title == "Mona Lisa" and "Leonardo" in best.candidate.text
    assert all(0.0 <= r.p <= 1.0 and len(r.features) == len(FEATURES) for r in reads)
    assert best.p > max(r.p for r in reads if r is not best)


def test_reading_is_cached_and_keeps_the_order_given():
    r = shipped_reader()
    cands = candidates(MONA, DOCS)
    first = r.read(MONA, cands)
    again = r.read(MONA, list(reversed(cands)))
    assert [x.candidate for x in again] == list(reversed(cands))
    assert {x.candidate.text: x.p for x in first} == {x.candidate.text: x.p for x in again}


def test_candidates_are_the_sentences_sharing_most_of_the_question_words_at_most_the_limit():
    cands = candidates(MONA, DOCS)
    assert cands[0].title == "Mona Lisa"  # the title counts as the sentence's words
    assert cands[0].overlap > cands[-1].overlap
    many = [(f"Doc {i}", f"The Mona Lisa is mentioned in document number {i} of a long list.") for i in range(60)]
    assert len(candidates(MONA, many)) == CANDIDATES
    assert candidates(MONA, [("x", "Short."), ("y", "")]) == []  # fragments are not read
    dup = candidates(MONA, [DOCS[1], DOCS[1]])
    assert len(dup) == len({c.text for c in dup})  # the same sentence is read once


def test_damaged_or_missing_weights_are_refused_with_a_clear_error(tmp_path, monkeypatch):
    garbage = tmp_path / "reader.json"
    garbage.write_text("{not json")
    with pytest.raises(ReaderUnavailable, match="cannot be read"):
        Reader(head=garbage, check_sha=False)
    with pytest.raises(ReaderUnavailable, match="missing"):
        Reader(head=tmp_path / "absent.json")
    wrong = tmp_path / "sha"
    wrong.write_text("0" * 64 + "  reader.json\n")
    monkeypatch.setattr(reader_module, "HEAD_SHA256_FILE", wrong)
    with pytest.raises(ReaderUnavailable, match="damaged"):
        Reader()
