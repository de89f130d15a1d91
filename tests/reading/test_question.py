"""``reading.question``: what a task asks (its kind, form and options), whole-word names and cached stems."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from saturate.nodes.reading.question import name_in, question_of, split_sentences, stem, stems, title_subject


def test_question_types_and_forms():
    assert question_of("The state where Henry Worrall died has how many congressional districts?").kind == "number"
    assert question_of("David Jones played another sport that was started when?").kind == "date"
    q = question_of("What is the name of the waterfall in the country where the Bubye River is found?")
    assert (q.kind, q.focus) == ("name", "waterfall")
    assert question_of("Who was in charge of the country Ceelmakoile is located in?").kind == "person"
    q = question_of("Which band formed earlier, Edward Sharpe and the Magnetic Zeros or Louis XIV?")
    assert q.form == "choice" and q.options == ("Edward Sharpe and the Magnetic Zeros", "Louis XIV")
    q = question_of("Are Ganzhou and Jimo District both located in China?")
    assert q.form == "yesno" and q.options == ("Ganzhou", "Jimo District")


_TEXT = st.text(alphabet="ab é'_-.’ 1", max_size=30)


@given(name=_TEXT, text=_TEXT)
def test_name_in_is_the_whole_word_pattern(name, text):
    assert name_in(name, text) == (re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None)


@given(word=st.text(alphabet="aeiousdngyéè'’1", max_size=14))
def test_cached_stem_is_the_stem(word):
    assert stem(word) == stem.__wrapped__(word) == stem(word)


def test_sentences_are_not_split_after_an_abbreviation_or_initials():
    text = "Dr. Jane Smith joined in 2001. The U.S. Army left. It rained."
    assert split_sentences(text) == ["Dr. Jane Smith joined in 2001.", "The U.S. Army left.", "It rained."]


def test_a_sentence_ending_in_an_abbreviation_is_not_joined_across_a_paragraph():
    """A snippet's last sentence and the page's heading after a blank line are two ("… as 8,848.86 m. Mount
    Everest" was read and shown as one sentence)."""
    text = "Its height was measured in 2020 as 8,848.86 m.\n\nMount Everest\n\n(8,849 m) is its rounded height."
    assert split_sentences(text) == [
        "Its height was measured in 2020 as 8,848.86 m.",
        "Mount Everest",
        "(8,849 m) is its rounded height.",
    ]


def test_stems_drop_stopwords_plurals_and_possessives():
    assert stems("The Rivers of Zimbabwe") == {stem("river"), stem("Zimbabwe")}
    assert stem("Zimbabwe's") == stem("Zimbabwe") and stem("rivers") == stem("river")
    assert title_subject("Henry Worrall (artist)") == "Henry Worrall"
