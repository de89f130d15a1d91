"""``python -m saturate.bench.not_found``: the "not found" answers of default sessions, laid out for a hand count
(issue 43), on a corpus of three pages."""

from __future__ import annotations

import json

from saturate.bench.not_found import main

CORPUS = [
    {
        "id": "1",
        "title": "Bubye River",
        "text": "The Bubye River is a river in Zimbabwe. It flows into the Limpopo River.",
    },
    {"id": "2", "title": "Ottawa", "text": "Ottawa is the capital city of Canada. It stands on the Ottawa River."},
    {
        "id": "3",
        "title": "Limpopo River",
        "text": "The Limpopo River rises in South Africa and flows into the Indian Ocean.",
    },
]
TASKS = [
    {"id": "a", "question": "What is the capital of Canada?", "answers": ["Ottawa"]},
    # not answered by these pages; a gold string ("Indian Ocean") that a page holds all the same: what a person judges
    {"id": "b", "question": "Who invented the telephone?", "answers": ["Alexander Graham Bell", "Indian Ocean"]},
    {"id": "c", "question": "What is the chemical symbol for gold?", "answers": ["Au"]},
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_each_not_found_answer_comes_with_the_sentences_to_judge_it(home, tmp_path, capsys):
    corpus, tasks = write(tmp_path / "corpus.jsonl", CORPUS), write(tmp_path / "tasks.jsonl", TASKS)
    assert main(["--tasks", str(tasks), "--corpus", str(corpus), "--count", "1"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    first, summary = rows
    assert first["id"] == "b" and first["k"] == 1 and first["half"] in ("A", "B")  # "a" was answered: not listed
    assert first["in_sources"] is True
    assert first["gold_sentences"] == [["Limpopo River", CORPUS[2]["text"]]]
    assert len(first["top"]) == 5 and all(0 <= p <= 1 for p, _, _ in first["top"])
    assert [p for p, _, _ in first["top"]] == sorted((p for p, _, _ in first["top"]), reverse=True)
    assert summary == {"sessions": 2, "not_found": 1}  # stopped at --count: "c" never ran


def test_bad_input_is_one_line_and_exit_2(home, tmp_path, capsys):
    assert main(["--tasks", str(tmp_path / "none.jsonl")]) == 2
    assert main(["--tasks", str(write(tmp_path / "t.jsonl", TASKS)), "--count", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"saturate: error: file not found: {tmp_path / 'none.jsonl'}",
        "saturate: error: --count must be 1 or more",
    ]
