"""training/: the reader's training inputs never hold an evaluation or held-out question, each source's format is read
as it is, the labels are what they say, and the groups and the calibration are made as docs/reader.md says.

(The training itself needs PyTorch and hours on 2 cores, so it is not part of the suite; the shipped model is run by
tests/reading/test_reader.py, and a small calibration runs here with it.)"""

from __future__ import annotations

import json
import random
import sys

import pytest

from conftest import ROOT, eval_file

sys.path.insert(0, str(ROOT / "training"))
import fit_candidates  # noqa: E402
import fit_levels  # noqa: E402
import leakage  # noqa: E402
import reader_pairs  # noqa: E402
from labels import find_answer  # noqa: E402
from logistic import fit  # noqa: E402
from questions import read_questions  # noqa: E402


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


def sources(tmp_path):
    """One small file in each training source's own format."""
    webq = tmp_path / "webq-test.json"
    webq.write_text(json.dumps([{"qId": "w1", "qText": "who wrote hamlet?", "answers": ["William Shakespeare"]}]))
    curated = tmp_path / "curated-test.tsv"
    curated.write_text("1\tfactoid\tHow hot is the Sun's surface?\t5,?778\\s*K\n")
    nq = tmp_path / "nq-open-dev.jsonl"
    nq.write_text(json.dumps({"question": "when was the last time anyone was on the moon", "answer": ["1972"]}) + "\n")
    otqa = tmp_path / "otqa"
    otqa.mkdir()
    (otqa / "geography").write_bytes(
        b"#Q What is the capital of Australia?\n^ Canberra\nA Canberra\nB Sydney\nC Melbourne\n\n"
        b"#Q Finish the proverb: ___ is golden.\n^ Silence\nA Silence\nB Speech\n\n"
        b"#Q Is the Earth round?\n^ True\nA True\nB False\n\n"
        b"#Q Caf\xe9 city question?\n^ Paris\nA Paris\nB Rome\n"
    )
    wang = tmp_path / "wang-train.csv"
    wang.write_text(
        'qtext,label,atext\n"Who founded Rome?",1,"Romulus founded Rome ."\n"Who founded Rome?",0,"Rome is big ."\n'
    )
    return webq, curated, nq, otqa, wang


def test_each_training_source_is_read_in_its_own_format(tmp_path):
    webq, curated, nq, otqa, wang = sources(tmp_path)
    assert list(read_questions(webq))[0] | {} == {
        "question": "who wrote hamlet?",
        "answers": ["William Shakespeare"],
        "patterns": [],
        "distractors": [],
        "set": "webquestions",
    }
    assert list(read_questions(curated))[0]["patterns"] == ["5,?778\\s*K"]
    assert list(read_questions(nq))[0]["answers"] == ["1972"]
    trivia = list(read_questions(otqa))
    # a blank to fill and a true/false judgement are no span of a sentence: left out; bytes not UTF-8 are kept
    assert [q["question"] for q in trivia] == ["What is the capital of Australia?", "Caf\ufffd city question?"]
    assert trivia[0]["answers"] == ["Canberra"] and trivia[0]["distractors"] == ["Sydney", "Melbourne"]
    (anssel,) = list(read_questions(wang))
    assert anssel["sentences"] == [("Romulus founded Rome .", 1), ("Rome is big .", 0)]


def test_held_out_test_splits_are_banned_like_the_evaluation_data(tmp_path):
    webq, curated, *_ = sources(tmp_path)
    assert leakage.held_out_questions([webq, curated]) == {"who wrote hamlet", "how hot is the suns surface"}


def test_an_answer_is_found_as_whole_words_or_by_its_pattern():
    assert find_answer("It is set in Denmark.", ["Denmark"], []) == (13, 20)
    assert find_answer("It is set in Denmarks.", ["Denmark"], []) is None
    assert find_answer("Hot: 5,778 K at the surface.", [], [r"5,?778\s*K"]) == (5, 12)
    assert find_answer("anything", [], ["(unclosed"]) is None  # a broken pattern matches nothing


HAMLET = {"title": "Hamlet", "text": "Hamlet is a tragedy written by William Shakespeare. It is set in Denmark."}
OTHERS = [
    {"title": "Macbeth", "text": "Macbeth is a tragedy about a Scottish general. It is set in Scotland."},
    {"title": "Othello", "text": "Othello is a tragedy about a Moorish general. It is set in Venice and Cyprus."},
    {"title": "Denmark", "text": "Denmark is a Nordic country. Its capital is Copenhagen."},
]


def test_a_group_is_one_positive_and_negatives_the_wrong_choices_first():
    row = {
        "question": "Who wrote the tragedy Hamlet?",
        "answers": ["William Shakespeare"],
        "distractors": ["Scottish general"],
        "docs": [HAMLET, *OTHERS],
    }
    items = reader_pairs.labelled(row, 48)
    assert [i["text"] for i in items if i["label"]] == ["Hamlet is a tragedy written by William Shakespeare."]
    positive = next(i for i in items if i["label"])
    assert positive["text"][slice(*positive["span"])] == "William Shakespeare"  # the answer's span in the sentence
    (group,) = reader_pairs.groups_of(row, items, random.Random(0))
    assert group["items"][0] is positive and len(group["items"]) == 1 + min(reader_pairs.NEGATIVES, len(items) - 1)
    assert not any(i["label"] for i in group["items"][1:])
    assert "Scottish general" in group["items"][1]["text"]  # a sentence about a wrong choice: the hardest negative
    assert (
        reader_pairs.groups_of(
            {**row, "answers": ["Nobody"]}, reader_pairs.labelled(row | {"answers": ["x"]}, 48), random.Random(0)
        )
        == []
    )


def test_a_question_gives_a_group_per_positive_up_to_the_groups_asked():
    """--groups N: up to N groups of a question, one per answering sentence (the GPU run used 4; 2 by default)."""
    more = [{"title": f"Play {n}", "text": f"William Shakespeare wrote play {n}. It was staged."} for n in "ABC"]
    row = {
        "question": "Who wrote the tragedy Hamlet?",
        "answers": ["William Shakespeare"],
        "docs": [HAMLET, *more, *OTHERS],
    }
    items = reader_pairs.labelled(row, 48)
    assert sum(i["label"] for i in items) == 4
    counts = [len(reader_pairs.groups_of(row, items, random.Random(0), groups)) for groups in (1, 2, 4, 8)]
    assert counts == [1, 2, 4, 4]
    assert len(reader_pairs.groups_of(row, items, random.Random(0))) == reader_pairs.GROUPS


def test_questions_split_by_their_text_into_train_validation_and_calibration():
    splits = [reader_pairs.split_of(f"question {i}") for i in range(2000)]
    share = {s: splits.count(s) / len(splits) for s in ("train", "validation", "calibration")}
    assert 0.8 < share["train"] < 0.9 and 0.03 < share["validation"] < 0.07 and 0.07 < share["calibration"] < 0.13
    assert reader_pairs.split_of("question 7") == reader_pairs.split_of("question 7")  # stable across runs


def test_the_pairs_never_hold_an_evaluation_question(tmp_path):
    (tmp_path / "eval" / "webq").mkdir(parents=True)
    (tmp_path / "eval" / "webq" / "tasks.jsonl").write_text(json.dumps({"question": "Who wrote Hamlet?"}) + "\n")
    rows = [{"question": "who wrote hamlet", "answers": ["William Shakespeare"], "docs": [HAMLET, *OTHERS]}]
    rows += [
        {"question": f"where is the tragedy hamlet set {i}?", "answers": ["Denmark"], "docs": [HAMLET, *OTHERS]}
        for i in range(40)
    ]
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "pairs"
    assert reader_pairs.main([str(sessions), "--out", str(out), "--exclude", str(tmp_path / "eval")]) == 0
    written = [json.loads(line) for f in out.glob("*.jsonl") for line in f.read_text().splitlines()]
    assert written and not any(leakage.key(r["question"]) == "who wrote hamlet" for r in written)
    assert {r["question"] for r in written} <= {r["question"] for r in rows[1:]}


def test_the_logistic_fit_learns_a_separable_rule():
    rng = random.Random(1)
    x = [[rng.uniform(-3, 3)] for _ in range(400)]
    import numpy as np

    y = np.array([1.0 if v[0] + rng.gauss(0, 0.5) > 0.5 else 0.0 for v in x])
    w, b = fit(np.array(x), y)
    assert w[0] > 1 and -w[0] * 1.0 < b < 0  # the boundary near 0.5


def test_the_calibration_is_fitted_on_held_out_questions_and_recorded_with_the_files_sha256(tmp_path):
    import shutil

    from saturate.nodes.reading.reader import MODEL_DIR, Reader

    model = tmp_path / "model"
    shutil.copytree(MODEL_DIR, model)
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    items = reader_pairs.labelled(
        {"question": "Who wrote Hamlet?", "answers": ["William Shakespeare"], "docs": [HAMLET, *OTHERS]}, 24
    )
    rows = [{"question": "Who wrote Hamlet?", "items": items}, {"question": "Where is Macbeth set?", "items": []}]
    rows += [{"question": f"Who wrote the play Hamlet {i}?", "items": items} for i in range(30)]
    (pairs / "calibration.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fit_levels.main(["--pairs", str(pairs), "--model", str(model)]) == 0
    levels = json.loads((model / "levels.json").read_text())
    assert levels["fitted_on"]["questions"] == 31 and levels["fitted_on"]["positive_sentences"] == 31
    assert levels["sentence"]["weights"]["score"] > 0  # a higher score is a likelier answer
    assert Reader(model).levels == levels  # the sha256 file was written anew: the copy loads, checked
    assert levels["candidates"] == json.loads((MODEL_DIR / "levels.json").read_text())["candidates"]  # kept as it was


def _bridge(i: int) -> list[dict]:
    return [
        {
            "title": f"Bridge {i}",
            "text": f"The bridge {i} over the river is a long bridge of stone. Work on it ended in {1800 + i}.",
        },
        {"title": "River", "text": "The river flows to the sea. It is 300 km long and the bridge crosses it."},
    ]


def test_the_candidates_order_is_learned_on_training_sessions_never_an_evaluation_question(tmp_path):
    """The order in which the reader reads sentences (levels.json's ``candidates``) is learned from the training
    sessions: here, where the answer is always a year in a sentence sharing fewer of the question's words than the
    one before it, the learned order reads the year's sentence first and the order by shared words does not."""
    import shutil

    from saturate.nodes.reading.reader import MODEL_DIR, Reader, candidates

    model = tmp_path / "model"
    shutil.copytree(MODEL_DIR, model)
    (tmp_path / "eval" / "webq").mkdir(parents=True)
    banned = "When was the bridge 7 over the river built?"
    (tmp_path / "eval" / "webq" / "tasks.jsonl").write_text(json.dumps({"question": banned}) + "\n")
    rows = [
        {"question": f"When was the bridge {i} over the river built?", "answers": [str(1800 + i)], "docs": _bridge(i)}
        for i in range(120)
    ]
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fit_candidates.main([str(sessions), "--model", str(model), "--exclude", str(tmp_path / "eval")]) == 0
    levels = json.loads((model / "levels.json").read_text())
    fitted = levels["candidates"]["fitted_on"]
    assert fitted["dropped_as_evaluation_questions"] == 1
    assert fitted["questions"] + fitted["held_out_questions"] == 119
    assert levels["sentence"] == json.loads((MODEL_DIR / "levels.json").read_text())["sentence"]  # the rest kept
    reader = Reader(model)  # the sha256 file written anew: the copy loads, checked
    question, docs = "When was the bridge 500 over the river built?", [(d["title"], d["text"]) for d in _bridge(500)]
    assert candidates(question, docs, 1)[0].text.startswith("The bridge 500")  # by shared words
    assert reader.candidates(question, docs, 1)[0].text == "Work on it ended in 2300."  # learned
