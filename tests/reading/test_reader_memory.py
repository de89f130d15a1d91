"""``reading.reader``: the loaded reader holds no copy of its model's bytes (issue 46: 22 MB for the life of a
process), and reads as before."""

from __future__ import annotations

import pytest

from saturate.nodes.reading.reader import MODEL_FILE, Reader, ReaderUnavailable, candidates


def test_the_loaded_reader_keeps_no_copy_of_its_model_bytes():
    try:
        reader = Reader()
    except ReaderUnavailable as exc:  # the model files are not in this checkout
        pytest.skip(str(exc))
    size = MODEL_FILE.stat().st_size
    held = [name for name, value in vars(reader._session).items() if isinstance(value, bytes) and len(value) == size]
    assert held == []
    question = "Who painted the Mona Lisa?"
    docs = [("Mona Lisa", "The Mona Lisa is a portrait painting by the Italian artist Leonardo da Vinci.")]
    reads = reader.read(question, candidates(question, docs))
    assert len(reads) == 1 and 0.0 <= reads[0].p <= 1.0
