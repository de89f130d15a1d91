"""training/: the reader's training inputs never hold an evaluation question, and its labels are what they say.

(The whole fit takes minutes over the training sessions and is not part of the suite; a small one runs here, and the
shipped weights are run by tests/reading/test_reader.py.)"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT, eval_file

sys.path.insert(0, str(ROOT / "training"))
import fit_reader  # noqa: E402
import leakage  # noqa: E402
from labels import find_answer  # noqa: E402

from saturate.nodes.reading.reader import FEATURES, Reader


def test_a_question_key_ignores_case_punctuation_and_spacing():
    assert leakage.key("What country is the Grand Bahama island in?") == leakage.key(
        "what  country is the grand bahama island in"
    )
    assert leakage.key("Who wrote Hamlet?") != leakage.key("Who wrote Macbeth?")


def test_every_evaluation_question_and_claim_is_banned(tmp_path):
    (tmp_path / "webq").mkdir()
    (tmp_path / "webq" / "tasks.jsonl").write_text(json.dumps({"question": "Who wrote Hamlet?"}) + "\n")
    (tmp_path / "factcheck").mkdir()
    (tmp_path / "factcheck" / "claims.jsonl").write_text(json.dumps({"claim": "The sky is green."}) + "\n")
    (tmp_path / "webq" / "corpus.jsonl").write_text(json.dumps({"question": "not a task"}) + "\n")
    assert leakage.evaluation_questions(tmp_path) == {"who wrote hamlet", "the sky is green"}
    with pytest.raises(SystemExit, match="no evaluation questions"):
        leakage.evaluation_questions(tmp_path / "factcheck" / "absent")  # a wrong folder never disables the check


def test_the_shared_evaluation_questions_are_all_banned():
    shared = eval_file("webq", "tasks.jsonl").parent.parent  # the evaluation data the tests read (SATURATE_EVAL_DATA)
    banned = leakage.evaluation_questions(shared)
    tasks = [json.loads(x) for x in (shared / "webq" / "tasks.jsonl").read_text().splitlines() if x.strip()]
    assert tasks and all(leakage.key(t["question"]) in banned for t in tasks)


def test_the_weights_are_fitted_without_evaluation_questions_and_beat_chance(tmp_path):
    """fit_reader drops an evaluation question and learns that the sentence holding the answer is likely."""
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "tasks.jsonl").write_text(json.dumps({"question": "Who wrote Hamlet"}) + "\n")
    hamlet = {"title": "Hamlet", "text": "Hamlet is a tragedy written by William Shakespeare. It is set in Denmark."}
    paris = {"title": "Paris", "text": "Paris is the capital of France. It lies on the Seine."}
    rows = [{"question": "who wrote hamlet?", "answers": ["William Shakespeare"], "patterns": [], "docs": [hamlet]}]
    for i in range(30):
        rows.append({"question": f"where is hamlet set {i}?", "answers": ["Denmark"], "patterns": [], "docs": [hamlet]})
        rows.append(
            {"question": f"what is the capital of france {i}?", "answers": ["Paris"], "patterns": [], "docs": [paris]}
        )
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "model"
    assert fit_reader.main(["--sessions", str(sessions), "--out", str(out), "--exclude", str(tmp_path / "eval")]) == 0
    spec = json.loads((out / "reader.json").read_text())
    assert spec["trained_on"]["dropped_as_evaluation_questions"] == 1
    assert spec["trained_on"]["questions"] + spec["trained_on"]["held_out_questions"] == 60
    assert spec["weights"]["cosine"] > 0  # the sentence closest to the question in meaning is the likelier answer
    sha = (out / "reader.json.sha256").read_text().split()[0]
    assert Reader(out / "reader.json", check_sha=False).weights == [spec["weights"][f] for f in FEATURES] and sha


def test_an_answer_is_found_as_whole_words_or_by_its_pattern():
    assert find_answer("It is set in Denmark.", ["Denmark"], []) == (13, 20)
    assert find_answer("It is set in Denmarks.", ["Denmark"], []) is None
    assert find_answer("Hot: 5,778 K at the surface.", [], [r"5,?778\s*K"]) == (5, 12)
    assert find_answer("anything", [], ["(unclosed"]) is None  # a broken pattern matches nothing
