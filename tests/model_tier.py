"""What every real-model session must hold, whichever way the model runs (tests/test_gguf.py: in-process;
tests/test_real_model.py: llama-cpp-python's server): no placeholder query asked, every call bounded by the
timeout, the answer within its length and citing only the sources it lists."""

from __future__ import annotations

import re

from saturate.nodes.reading.extractive import ANSWER_MAX_CHARS

PLACEHOLDERS = {"first query", "second query", "next query:", "...", "query"}


def check_records(records: list[dict], seconds: float, timeout_s: float) -> None:
    asked = [r["query"].strip().lower() for r in records]
    assert not PLACEHOLDERS & set(asked), asked
    calls = sum(r.get("model_calls", 0) for r in records)
    assert seconds <= (calls + 2) * timeout_s  # every call bounded by model_timeout_s


def check_answer(result) -> None:
    assert result.answer and len(result.answer) <= ANSWER_MAX_CHARS, result.answer
    numbers = {s.n for s in result.sources}
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", result.answer)}
    assert cited <= numbers and {s.n for s in result.sources if s.cited} == cited
