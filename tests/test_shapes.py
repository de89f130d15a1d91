"""The state's TypedDicts (state/shapes.py) say what the pydantic models dump: the same keys, so the type checker's
view of a checkpointed dict cannot drift from what the nodes write."""

from __future__ import annotations

import typing

import pytest

from saturate.state import shapes
from saturate.state.records import EvidenceHit, RoundRecord, SearchResult


@pytest.mark.parametrize(
    "shape, model",
    [(shapes.ResultDict, SearchResult), (shapes.RecordDict, RoundRecord), (shapes.EvidenceDict, EvidenceHit)],
)
def test_a_shape_has_its_models_keys(shape, model):
    assert set(typing.get_type_hints(shape)) == set(model.model_fields)


def test_a_round_in_progress_holds_what_its_record_copies():
    """The gate copies every key of ``current`` that is a record field: the shape of ``current`` names each of them
    (the rest of the record comes from the gate itself)."""
    from_gate = {"durations_ms", "slots", "parts", "complete", "reader", "decision", "reason", "epsilon_draw"}
    written_later = {"knowledge_chars", "compress"}  # compress adds them to the round's record
    copied = set(RoundRecord.model_fields) - from_gate - written_later
    assert copied <= set(typing.get_type_hints(shapes.RoundInProgress)), copied - set(
        typing.get_type_hints(shapes.RoundInProgress)
    )
