"""A question in Spanish, French or German is read by the multilingual embedding model (``reading.crosslingual``):
the sentence that answers it, retrieved, is the answer (marked not confirmed), never "not found"."""

from __future__ import annotations

import json

import pytest

from saturate.cli import main
from saturate.nodes.reading.crosslingual import crosslingual_answer, is_english

DOCS = [
    {
        "id": "1",
        "title": "Paris",
        "text": "Paris is the capital and largest city of France. It lies on the Seine. "
        "The city is known for its museums.",
    },
    {
        "id": "2",
        "title": "Berlin",
        "text": "Berlin is the capital and largest city of Germany. It lies on the Spree. The city has many parks.",
    },
    {
        "id": "3",
        "title": "Mount Everest",
        "text": "Mount Everest is the highest mountain on Earth above sea level. It is in the Himalayas. "
        "Its summit was first reached in 1953.",
    },
]
QUESTIONS = [
    ("¿Cuál es la capital de Francia?", "Paris is the capital and largest city of France."),
    ("Quelle est la capitale de l'Allemagne ?", "Berlin is the capital and largest city of Germany."),
    ("Welcher ist der höchste Berg der Erde?", "Mount Everest is the highest mountain on Earth above sea level."),
]


@pytest.mark.parametrize(
    "question, english",
    [
        ("¿Cuál es la capital de Francia?", False),
        ("Quelle est la capitale de la France ?", False),
        ("Was ist die Hauptstadt von Frankreich?", False),
        ("What is the capital of France?", True),
        ("Who wrote Les Misérables?", True),  # a foreign title in an English question
        ("who is la toya jackson?", True),
    ],
)
def test_a_question_in_another_language_is_told_from_an_english_one(question, english):
    assert is_english(question) is english


@pytest.fixture(scope="module")
def multilingual():
    from saturate.graph.embeddings import multilingual_reader

    return multilingual_reader()


@pytest.mark.parametrize("question, sentence", QUESTIONS)
def test_the_multilingual_model_reads_the_sentence_that_answers(multilingual, question, sentence):
    results = [{"url": f"local://t/{d['id']}", "title": d["title"], "snippet": d["text"]} for d in DOCS]
    read = crosslingual_answer(multilingual, question, results, {})
    assert read.answered and read.level == "likely"
    assert read.answer.startswith("The sources suggest (not confirmed):")
    assert sentence in read.answer, read.answer
    assert crosslingual_answer(multilingual, question, [], {}).level == "not found"


@pytest.mark.slow
def test_a_spanish_session_answers_with_the_sentence_it_retrieved(hybrid_home, tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    question, sentence = QUESTIONS[0]
    args = ["research", question, "--corpus", str(corpus), "--embed-model", "multilingual", "--max-rounds", "1"]
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sentence in out["answer"] and out["debug"]["reader_level"] == "likely", out["answer"]
    assert "not in English" in " ".join(out["debug"]["notes"])
