"""``reading.brief``: the best sentences for each part of the question, without repeats, cited, and marked as the
sources bear them out. The assembly is tested with a reader whose scores are given (what is tested is the choice
and the marks); the shipped reader's brief of a real question is tested in tests/test_parts_loop.py."""

from __future__ import annotations

import re

from saturate.nodes.reading.brief import MAX_SENTENCES, build_brief, named_by_on_topic, overview
from saturate.nodes.reading.reader import Read, Reader
from saturate.views.brief import brief_text, mark


class GivenReader(Reader):
    """A reader whose ``p`` for a sentence is given (by words it holds) when the sentence holds the first word of the
    question it is read against (the part it is about); 0.05 for any other."""

    def __init__(self, scores: dict[str, float]):
        self.scores = scores

    def read(self, question, cands):
        # the reader reads a part as a question ("What is nuclear power?": parts.reader_question)
        about = re.sub(r"^what (is|are) (the )?", "", question.lower()).split()[0].strip(":?")
        return [
            Read(c, next((p for w, p in self.scores.items() if w in c.text and about in c.text.lower()), 0.05))
            for c in cands
        ]


def doc(i: int, title: str, text: str) -> dict:
    return {"id": str(i), "url": f"https://site{i}.example/{title.replace(' ', '_')}", "title": title, "snippet": text}


RESULTS = [
    doc(
        1,
        "Nuclear power",
        "Nuclear power is the use of nuclear reactions to produce electricity. The first nuclear power plant opened "
        "in 1954.",
    ),
    doc(
        2, "Solar power", "Solar power is the conversion of sunlight into electricity. Solar panels use photovoltaics."
    ),
    doc(
        3, "Energy", "Nuclear power is the use of nuclear reactions to produce electricity in reactors. Aurora lights."
    ),
    doc(4, "Nuclear reactor", "The first nuclear power plant opened in 1951 after years of work."),
]
PARTS = [
    {"name": "nuclear power", "ask": "nuclear power", "kind": "side"},
    {"name": "solar power", "ask": "solar power", "kind": "side"},
]


def test_a_part_gets_its_own_sentences_cited_and_nothing_below_the_threshold():
    reader = GivenReader({"Nuclear power is": 0.9, "Solar power is": 0.8, "Solar panels": 0.6, "Aurora": 0.1})
    brief = build_brief(reader, "Compare nuclear and solar power", PARTS, RESULTS, {}, min_p=0.3)
    assert [p["part"] for p in brief] == ["nuclear power", "solar power"]
    nuclear, solar = ([s["text"] for s in p["sentences"]] for p in brief)
    assert nuclear == [
        "Nuclear power is the use of nuclear reactions to produce electricity."
    ]  # the near-copy in [3] once
    assert solar == [
        "Solar power is the conversion of sunlight into electricity.",
        "Solar panels use photovoltaics.",
    ]
    assert not any("Aurora" in s for s in nuclear + solar)  # off topic, below the threshold
    assert brief[0]["sentences"][0]["sources"] == [1]


def test_a_sentence_another_page_holds_is_confirmed_a_lone_one_is_single_source():
    reader = GivenReader({"Nuclear power is": 0.9, "Solar power is": 0.8})
    brief = build_brief(reader, "Compare nuclear and solar power", PARTS, RESULTS, {}, min_p=0.3)
    nuclear = brief[0]["sentences"][0]
    assert nuclear["status"] == "confirmed" and nuclear["confirmed_by"] == [3]
    solar = brief[1]["sentences"][0]
    assert solar["status"] == "single source" and solar["confirmed_by"] == []
    assert mark(nuclear) == "(confirmed by [3])" and mark(solar) == "(single source)"


def test_two_pages_that_disagree_on_a_value_are_shown_as_a_contradiction():
    reader = GivenReader({"opened in 1954": 0.9})
    parts = [{"name": "nuclear power", "ask": "first: the first nuclear power plant", "kind": "question"}]
    (part,) = build_brief(reader, "When did nuclear power begin?", parts, RESULTS, {}, min_p=0.3)
    (s,) = part["sentences"]
    assert s["status"] == "contradicted" and s["contradicted_by"] == [4], s
    assert mark(s) == "(contradicted by [4])"


def test_the_same_description_of_two_subjects_with_other_years_is_no_contradiction():
    """Two presidents' pages each describe their own president; their years differ because their subjects do (the
    brief marked every president of "Who was the first President of the United States?" contradicted, and Lincoln's
    years "confirmed" by the Civil War's page)."""
    results = [
        doc(1, "Ronald Reagan", "President of the United States from 1981 to 1989. He was an actor."),
        doc(2, "Abraham Lincoln", "President of the United States from 1861 to 1865. He led the Union."),
        doc(3, "Reagan years", "Ronald Reagan was President of the United States from 1980 to 1988."),
        doc(4, "American Civil War", "1861–1865 conflict in the United States. It ended slavery."),
    ]
    reader = GivenReader({"from 1981": 0.9, "from 1861": 0.8})
    parts = [{"name": "president", "ask": "president of the United States", "kind": "question"}]
    (part,) = build_brief(reader, "Who was the first President of the United States?", parts, results, {}, min_p=0.3)
    by_source = {s["sources"][0]: s for s in part["sentences"]}
    # nor is a page about another thing with the same years a confirmation of Lincoln's: it does not name him
    assert by_source[2]["status"] == "single source", by_source[2]
    # a one-word title names its page's subject too: two painters' descriptions are two claims
    painters = [
        doc(1, "Michelangelo", "Italian artist and architect (1475–1564)."),
        doc(2, "Raphael", "Italian painter and architect (1483–1520)."),
    ]
    reader = GivenReader({"artist and architect": 0.9, "painter and architect": 0.8})
    parts = [{"name": "architect", "ask": "architect who painted the ceiling", "kind": "question"}]
    (part,) = build_brief(reader, "Who painted the Sistine Chapel ceiling?", parts, painters, {}, min_p=0.3)
    assert [s["status"] for s in part["sentences"]] == ["single source", "single source"], part
    # the other page on Reagan's years says the same of the same man with another year: that is a contradiction
    assert by_source[1]["status"] == "contradicted" and by_source[1]["contradicted_by"] == [3], by_source[1]


def test_a_sentence_is_confirmed_only_by_a_page_saying_it_of_the_same_thing():
    """The question's own names count: another novel by the same author does not confirm who wrote this one."""
    results = [
        doc(1, "War and Peace", "War and Peace is an epic novel by the Russian author Leo Tolstoy."),
        doc(2, "Anna Karenina", "Anna Karenina is a novel by the Russian author Leo Tolstoy, published in 1878."),
        doc(3, "Russian literature", "War and Peace, an epic novel by the Russian author Leo Tolstoy, appeared."),
    ]
    reader = GivenReader({"War and Peace is": 0.9})
    parts = [{"name": "author", "ask": "author of War and Peace", "kind": "question"}]
    task = "Who is the author of War and Peace?"
    (part,) = build_brief(reader, task, parts, results, {}, min_p=0.3)
    (s,) = part["sentences"]
    assert s["status"] == "confirmed" and s["confirmed_by"] == [3], s
    (part,) = build_brief(reader, task, parts, results[:2], {}, min_p=0.3)
    assert part["sentences"][0]["status"] == "single source", part["sentences"][0]


def test_the_brief_is_bounded_and_a_part_with_nothing_says_so():
    many = [
        doc(i, f"Page {i}", f"Solar power fact number {i} is about sunlight and panels of kind {i}.") for i in range(30)
    ]
    reader = GivenReader({"Solar power fact": 0.9})
    brief = build_brief(reader, "Compare nuclear and solar power", PARTS, many, {}, min_p=0.3)
    assert sum(len(p["sentences"]) for p in brief) <= MAX_SENTENCES
    assert brief[0]["sentences"] == []
    lines = brief_text(brief)
    assert lines[0] == "nuclear power:" and "(nothing in the sources addresses this)" in lines[1]
    assert build_brief(reader, "x", PARTS, [], {}) == []


def test_an_opening_sentence_comes_first_in_its_part():
    reader = GivenReader({"Solar panels": 0.9, "Solar power is": 0.5})
    brief = build_brief(reader, "Compare nuclear and solar power", PARTS, RESULTS, {}, min_p=0.3)
    assert [s["text"] for s in brief[1]["sentences"]][0].startswith("Solar power is the conversion")  # what it is first


def test_a_snippets_elided_fragment_is_never_a_brief_sentence():
    from saturate.nodes.reading.brief import elided

    assert elided("Photosynthetic organisms store the converted… Biological process to convert light.")
    assert elided("The river ... flows into the sea.")
    assert not elided("Photosynthesis converts light energy into chemical energy.")


def test_a_sides_sentence_names_that_side_never_the_other():
    """The reader scores "Solar power is …" as an answer to "What is nuclear power?" too: the part's own words
    ("nuclear", which "solar power" does not hold) keep it out of the nuclear side, and snippet fragments out of all."""

    class AnyReader(GivenReader):  # scores a definition high whatever side it is read for
        def read(self, question, cands):
            return [Read(c, 0.9 if "is the" in c.text else 0.05) for c in cands]

    reader = AnyReader({})
    results = [*RESULTS, doc(5, "Nuclear power", "Nuclear power stores the… Energy from atoms.")]
    brief = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, min_p=0.0)
    nuclear, solar = ([s["text"] for s in p["sentences"]] for p in brief)
    assert nuclear and all("uclear" in t or "eactor" in t for t in nuclear), nuclear
    assert solar and all("olar" in t for t in solar), solar
    assert not any("…" in t for t in nuclear + solar)


def test_every_source_the_answer_cites_is_cited_in_the_brief():
    """A multi-hop answer's second page reads low against the whole question: without ``cited`` eight likelier
    sentences fill the brief; with it, that page's best sentence is in (within the bound), in the part it reads for."""
    words = ["cells", "mirrors", "towers", "deserts", "roofs", "batteries", "tariffs", "inverters", "farms", "grids"]
    strong = [doc(i, f"Page {i}", f"Solar power strong {w} {w}ness of {w}ville.") for i, w in enumerate(words)]
    results = [*strong, doc(10, "Weak page", "Solar power weak link between two counties.")]
    reader = GivenReader({"strong": 0.9, "weak": 0.4})

    def cites(brief):
        return [n for part in brief for s in part["sentences"] for n in s["sources"]]

    plain = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, min_p=0.3)
    assert 11 not in cites(plain) and sum(len(p["sentences"]) for p in plain) == MAX_SENTENCES
    brief = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, min_p=0.3, cited=[10, 10])
    assert 11 in cites(brief) and sum(len(p["sentences"]) for p in brief) == MAX_SENTENCES
    assert any("weak link" in s["text"] for s in brief[1]["sentences"])  # the solar part: the one it reads for
    # a cited source none of whose sentences may be shown (below the threshold) is not forced in
    low = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, min_p=0.5, cited=[10])
    assert 11 not in cites(low)
    # a cited source marked off topic (and named by nothing on topic) is cited all the same: the answer quotes it
    # (hotpotqa's both gold paragraphs cited: half A 0.835 -> 0.866, half B 0.750 -> 0.838, `saturate bench brief`)
    on_topic = [True] * 10 + [False]
    off = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, on_topic, min_p=0.3)
    assert 11 not in cites(off)
    off = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, on_topic, min_p=0.3, cited=[10])
    assert 11 in cites(off) and sum(len(p["sentences"]) for p in off) == MAX_SENTENCES
    # and only where it is cited: its sentence does not fill the room left by others
    assert all(n == 11 or n <= 10 for n in cites(off))


def test_a_page_an_on_topic_source_names_may_be_quoted_another_off_topic_one_not():
    """The second page of a multi-hop question shares no word with it and is marked off topic; the first page names
    it, so the brief may quote it. An off-topic page nothing on topic names stays out (the aurora in climate change)."""
    results = [
        doc(1, "Solar power", "Solar power is the conversion of sunlight into electricity, pioneered at Bell Labs."),
        doc(2, "Bell Labs", "Solar power research at this laboratory produced the first practical silicon cell."),
        doc(3, "Aurora (astronomy)", "Solar power of the wind makes an aurora glow in polar skies."),
    ]
    reader = GivenReader({"Solar power": 0.9})
    on_topic = [True, False, False]
    (_, solar) = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, on_topic, min_p=0.3)
    quoted = {n for s in solar["sentences"] for n in s["sources"]}
    assert quoted == {1, 2}  # Bell Labs is named by the on-topic page ("(astronomy)" aside, Aurora is not)
    assert (
        named_by_on_topic([("A", "x"), ("Bell Labs", "y"), ("Aurora", "z")], [True, False, False])
        == [True] + [False] * 2
    )
    assert named_by_on_topic([("Solar", "The bell labs cell."), ("Bell Labs", "y")], [True, False]) == [True, True]
    assert named_by_on_topic([("S", "Go on."), ("Go", "y")], [True, False]) == [True, False]  # too short to name
    # a page the question itself names (a comparison's side the topic floor left out)
    assert named_by_on_topic([("A", "x"), ("Duke Energy", "y")], [True, False], "Is Duke Energy in Ohio?") == [True] * 2
    # a title named only as a part of a longer source title is not named ("Prejudice" in "Pride and Prejudice": the
    # novel's page; hotpotqa's brief precision 0.667 -> 0.676, its both gold and the open questions unchanged)
    novel = [("Pride and Prejudice", "x"), ("Prejudice", "y")]
    assert named_by_on_topic(novel, [True, False], "Who wrote Pride and Prejudice?") == [True, False]
    assert named_by_on_topic(novel, [True, False], "Is Pride and Prejudice about prejudice?") == [True, True]
    assert named_by_on_topic(novel, [False, False], "Who wrote Pride and Prejudice?") == [True, False]
    # a place's title carries its qualifier after a comma, a page names the place without it
    surf = [("Butch Van Artsdalen", "He surfed 25-foot waves at Waimea Bay."), ("Waimea Bay, Hawaii", "y")]
    assert named_by_on_topic(surf, [True, False]) == [True, True]
    assert named_by_on_topic([("Surf", "He surfed in Hawaii."), ("Waimea Bay, Hawaii", "y")], [True, False]) == [
        True,
        False,
    ]


def test_the_answers_source_is_cited_beside_a_shorter_sentence_whose_words_it_holds():
    """The album's page says where it was recorded ("… at the Flamingo Hotel in Las Vegas, Nevada"); the answer cites
    the Flamingo's own page, whose sentence holds those few words and says something else (where the hotel is): it is
    cited in the brief too. A sentence the answer's source shares with a shown one, word for word, is not repeated."""
    recorded = "The solar album was recorded at the Flamingo Hotel in Las Vegas, Nevada."
    hotel = (
        "Flamingo Las Vegas, where the solar album was made, is a hotel and casino on the Strip in Paradise, Nevada."
    )
    results = [doc(1, "Solar album", recorded), doc(2, "Flamingo Las Vegas", hotel)]
    reader = GivenReader({"recorded": 0.9, "casino": 0.2})
    parts = [{"name": "solar album", "ask": "solar album", "kind": "question"}]
    question = "Where is the hotel where the solar album was recorded?"

    def cites(brief):
        return [n for part in brief for s in part["sentences"] for n in s["sources"]]

    assert cites(build_brief(reader, question, parts, results, {}, [True, False])) == [1]  # off topic, not named
    assert sorted(cites(build_brief(reader, question, parts, results, {}, [True, False], cited=[1]))) == [1, 2]
    results[1]["snippet"] = recorded  # the same sentence on the answer's source: shown once
    assert cites(build_brief(reader, question, parts, results, {}, [True, False], cited=[1])) == [1]


def test_the_page_an_on_topic_source_names_is_read_even_when_it_shares_no_word_with_the_question():
    """A multi-hop question's second page shares no word with the question: none of its sentences is among the
    sentences chosen by shared words when the first page has more than enough of them, so its opening sentence (what
    the page is) is read too, and quoted when it reads well."""

    class YearReader(GivenReader):
        def read(self, question, cands):
            return [Read(c, 0.9 if "1931" in c.text else 0.5) for c in cands]

    words = "origins factory catalogue patents rivals exports staff logo motto museum".split()
    filler = " ".join(f"Acme Widgets founder {w} {w}s were {k} times noted." for k, w in enumerate(words * 3))
    results = [
        doc(1, "Acme Widgets", f"Acme Widgets was founded by Jane Roe in Springfield. {filler}"),
        doc(2, "Jane Roe", "Jane Roe (1931–2010) was an American engineer. She liked boats."),
    ]
    part = [{"name": "", "ask": "When was the founder of Acme Widgets born?", "kind": "question"}]
    brief = build_brief(YearReader({}), part[0]["ask"], part, results, {}, [True, False], min_p=0.3)
    texts = {s["text"]: s["sources"] for s in brief[0]["sentences"]}
    assert texts.get("Jane Roe (1931–2010) was an American engineer.") == [2]
    assert not any("boats" in t for t in texts)  # its opening sentence, not the rest of the page


def test_the_overview_gives_each_part_an_equal_share_and_keeps_its_citations():
    long = "Nuclear power is the use of nuclear reactions to produce electricity " + "in reactors " * 30 + "."
    brief = [
        {"part": "nuclear power", "sentences": [{"text": long, "sources": [2]}, {"text": "Reactors.", "sources": [3]}]},
        {"part": "solar power", "sentences": [{"text": long.replace("Nuclear", "Solar"), "sources": [1]}]},
    ]
    text = overview(brief, "The sources suggest (not confirmed):", 400)
    assert text.startswith("The sources suggest (not confirmed): Reactors. [3] Solar power is the use")
    assert len(text) <= 400 and text.endswith("… [1]")  # the side whose only sentence is too long: cut, still cited
    assert overview(brief[:1], "", 400) == ""  # one part: the reader's "not found" stands
    assert overview([brief[0], {"part": "solar power", "sentences": []}], "", 400) == ""  # a part with nothing


def test_a_part_opens_with_its_own_pages_opening_even_where_another_opening_reads_higher():
    """What nuclear power is, is the page Nuclear power, in its own order (its opening, then what it goes on to say):
    another page's opening (Uranium's), read higher than both, comes after it."""
    results = [
        doc(1, "Uranium", "Uranium is a metal that is the fuel of nuclear power plants."),
        doc(
            2,
            "Nuclear power (disambiguation)",
            "Nuclear power is the use of nuclear reactions to make electricity. "
            "Nuclear reactors were first built in the 1950s.",
        ),
        doc(3, "Solar power", "Solar power is the conversion of sunlight into electricity."),
    ]
    reader = GivenReader({"Uranium is": 0.8, "Nuclear power is": 0.7, "first built": 0.75, "Solar power is": 0.9})
    brief = build_brief(reader, "Compare nuclear and solar power", PARTS, results, {}, min_p=0.3)
    nuclear = [(s["text"], s["sources"]) for s in brief[0]["sentences"]]
    assert nuclear == [
        ("Nuclear power is the use of nuclear reactions to make electricity.", [2]),
        ("Nuclear reactors were first built in the 1950s.", [2]),
        ("Uranium is a metal that is the fuel of nuclear power plants.", [1]),
    ]
