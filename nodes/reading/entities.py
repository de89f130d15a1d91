"""Entities in result text: identifiers, organisations, people, other names — and quantities.

A documented heuristic, no model and no gazetteer beyond the short lists below.
Per sentence:

- **identifier**: ISBN, ISSN, DOI, arXiv ids, URLs, standard numbers (``ISO 9001``,
  ``RFC 2616``) and letter-digit codes (``SR-71``, ``A380``, ``B-52``; at least one
  letter and one digit, 3+ characters: not ``A4``, not a bare year);
- **organisation**: a capitalised phrase containing an organisation word (Inc, Ltd,
  University, Committee, Party, Council, Agency, Records, FC, ...), or an all-capital
  acronym of 2-6 letters (NASA, TBI);
- **person**: a capitalised phrase of 2-4 words after a title (Dr, Sir, President,
  King, ...; the title is dropped; "President of X" is an office, not a name), or,
  without "of"/"the" inside, one followed by a life-span parenthesis (``(born 1941``,
  ``(1850 – 1921)``; a lone year is no life span) or the subject of ``is/was a/an ...
  <occupation>`` (actor, singer, politician, footballer, ...);
- **other**: any remaining capitalised phrase (runs of capitalised words with inner
  ``of``/``the``/``de``..., not ``and``), leading stopwords such as a sentence-initial
  "The" dropped, at most 60 characters; month and weekday names and common
  nationality/religion adjectives (American, British, Catholic...) alone are skipped;
- **quantity**: numbers with a unit (``8 km``, ``3.5 million``, ``40 %``). Quantities
  are facts, not leads: profiles and triangulation use them, breadcrumbs do not
  follow them.

Abbreviation dots (``St.``, ``Dr.``) and initials (``George G. Stone``) are dropped
first so they neither end a sentence nor cut a name. A name found with several
kinds keeps the best-ranked one (``KIND_RANK``: identifier > organisation > person > other).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from saturate.state.text import STOPWORDS, sentences

KIND_RANK = {"identifier": 0, "organisation": 1, "person": 2, "other": 3, "quantity": 4}

_IDENTIFIER = re.compile(
    r"\bISBN(?:-1[03])?:?\s*(?:97[89][- ]?)?\d[\d -]{7,14}[\dX]\b"
    r"|\bISSN:?\s*\d{4}-\d{3}[\dX]\b"
    r"|\b10\.\d{4,9}/[^\s\"<>,;]+[^\s\"<>,;.)]"
    r"|\barXiv:\s?\d{4}\.\d{4,5}(?:v\d+)?\b"
    r"|\bhttps?://[^\s<>\"]+[^\s<>\".,;)]"
    r"|\b(?:ISO|IEC|RFC|EN|DIN|ASTM|IEEE)\s?\d{2,6}(?:-\d+)?\b"
    r"|\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])(?=[A-Z0-9-]{3})[A-Z]{1,4}-?\d{1,5}[A-Z]?\b"
)
_ORG_WORDS = frozenset(
    """inc inc. ltd ltd. llc plc corp corp. corporation company co. gmbh ag university college institute
    institution school academy committee party council association society foundation agency bureau
    department ministry commission organization organisation federation union league club bank group
    records press airlines airways army navy church museum hospital laboratory board authority service
    network studios studio parliament assembly court government fc orchestra band brigade regiment
    division police administration office trust fund conference senate congress""".split()
)
_TITLES = frozenset(
    """mr mr. mrs mrs. ms ms. dr dr. sir dame lord lady president king queen prince princess saint general
    captain professor prof. senator governor judge pope bishop archbishop emperor empress duke duchess
    count countess baron chancellor minister mayor sheikh sultan""".split()
)
_OCCUPATIONS = (
    r"actor|actress|singer|songwriter|rapper|musician|composer|conductor|writer|author|novelist|poet|playwright|"
    r"journalist|politician|diplomat|lawyer|judge|footballer|cricketer|player|athlete|boxer|wrestler|coach|"
    r"manager|director|producer|screenwriter|filmmaker|painter|sculptor|artist|photographer|architect|"
    r"scientist|physicist|chemist|biologist|mathematician|economist|philosopher|historian|engineer|inventor|"
    r"businessman|businesswoman|entrepreneur|executive|activist|soldier|officer|general|admiral|king|queen|"
    r"monarch|priest|bishop|model|comedian|dancer|presenter|broadcaster|designer|chef|astronaut|pilot"
)
_WORD = r"[A-Z](?:[\w'’-]|\.(?=\w))*"  # a capitalised word; dots only inside (U.S.)
# A capitalised phrase: runs of capitalised words (later words may be numbers: "Apollo 11") with inner
# of/the/de/von... but not "and". The one name pattern of saturate: entities, gap-query names, leads.
NAME_PHRASE = re.compile(
    rf"\b{_WORD}(?:\s+(?:(?:of|the|de|du|la|le|von|van|der|da|di|&)\s+)?(?:{_WORD}|\d+\b(?![.,]\d)))*", re.UNICODE
)
# abbreviations whose dot would end a sentence or a name ("St. Louis", "Dr. Smith"): the dot is dropped first
_ABBREV = re.compile(r"\b(St|Mt|Ft|Dr|Mr|Mrs|Ms|Prof|Jr|Sr|Gen|Capt|Sen|Gov|Rev|Co|Inc|Ltd|Corp|No|vs)\.(?=\s)")
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday
    american british english french german italian spanish portuguese dutch russian chinese japanese korean
    indian canadian australian mexican brazilian argentine irish scottish welsh swedish norwegian danish
    finnish polish greek turkish egyptian african european asian roman latin catholic christian muslim
    jewish islamic soviet swiss austrian belgian hungarian czech israeli iranian pakistani nigerian""".split()
)
# Words that alone never name a thing to search for: languages and demonyms (above), and directions and
# generic qualifiers that head many names ("North American English", "Central", "Major"). A phrase made
# only of these is no name (unless the task itself uses them: see reading.salience).
GENERIC_NAME_WORDS = _NOT_NAMES | frozenset(
    """arabic hebrew persian sanskrit hindi urdu bengali swahili vietnamese thai indonesian malay filipino
    ukrainian romanian bulgarian serbian croatian slovak slovenian lithuanian latvian estonian icelandic
    norse celtic gaelic germanic slavic semitic hellenic ancient old new modern classical medieval middle
    north south east west northern southern eastern western central upper lower greater inner outer
    northeast northwest southeast southwest major minor great little first second third early late""".split()
)
# initials inside a name ("George G. Stone", "G. Stanley Hall"): the dot is dropped so the name stays whole
_MIDDLE_INITIAL = re.compile(r"\b([A-Z][a-z]+) ([A-Z])\. (?=[A-Z][a-z])")
_FIRST_INITIAL = re.compile(r"(?<![\w.])([A-Z])\. (?=[A-Z][a-z]+ [A-Z])")
_ACRONYM = re.compile(r"^[A-Z]{2,6}$")
_LIFESPAN = re.compile(
    r"^\s*\(\s*(?:born|b\.)\s|^\s*\((?:[^()]*?\b)?\d{3,4}\s*(?:–|—|--|-)\s*(?:[^()]*?\b)?\d{2,4}\s*\)"
)
_COPULA_OCCUPATION = re.compile(
    rf"^\s*(?:\([^)]*\)\s*)?,?\s*(?:is|was)\s+(?:an?|the)\s+(?:[\w-]+\s+){{0,4}}?(?:{_OCCUPATIONS})s?\b",
    re.IGNORECASE,
)
_UNITS = (
    r"km|kilometres?|kilometers?|m|metres?|meters?|cm|mm|mi|miles?|ft|feet|inch(?:es)?|kg|kilograms?|g|grams?|t|"
    r"tonnes?|tons?|lb|pounds?|l|litres?|liters?|ha|hectares?|acres?|km2|sq\s?mi|%|percent|per\s?cent|million|"
    r"billion|trillion|thousand|years?|months?|days?|hours?|minutes?|seconds?|mph|km/h|°C|°F|MW|GW|kW|USD|EUR|"
    r"dollars?|euros?|people|inhabitants|residents|members|seats|episodes|copies|votes"
)
_QUANTITY = re.compile(rf"(?<![\w.])[$£€]?\d[\d,]*(?:\.\d+)?\s?(?:{_UNITS})(?![\w])", re.IGNORECASE)


_JOINERS = frozenset({"of", "the", "de", "du", "la", "le", "von", "van", "der", "da", "di", "and", "&"})


@dataclass(frozen=True)
class Entity:
    name: str
    kind: str  # identifier | organisation | person | other | quantity


def _clean_phrase(words: list[str]) -> list[str]:
    while words and words[0].lower() in STOPWORDS:
        words = words[1:]
    while words and words[-1].lower() in _JOINERS:
        words = words[:-1]
    return words


def _sentence_entities(sentence: str) -> list[Entity]:
    found: list[Entity] = [Entity(m.group(0).strip(), "identifier") for m in _IDENTIFIER.finditer(sentence)]
    found += [Entity(" ".join(m.group(0).split()), "quantity") for m in _QUANTITY.finditer(sentence)]
    taken = {e.name for e in found}
    for m in NAME_PHRASE.finditer(sentence):
        words = m.group(0).strip(" .-'’").split()
        title = words[0].lower().rstrip(".") + ("." if words[0].endswith(".") else "") if words else ""
        after_title = (
            bool(words)
            and (words[0].lower() in _TITLES or title in _TITLES)
            and len(words) >= 2
            and words[1].lower() not in _JOINERS
        )  # "President of South Korea" is an office, not a name
        if after_title:
            words = words[1:]
        words = _clean_phrase(words)
        name = " ".join(words)
        if (
            not name
            or len(name) > 60
            or name in taken
            or any(name in t for t in taken)
            or (len(words) == 1 and (name.lower() in _TITLES or name.lower() in _NOT_NAMES))
        ):
            continue
        lowered = {w.lower().strip(",.") for w in words}
        rest = sentence[m.end() :]
        if len(words) == 1 and _ACRONYM.match(name) or lowered & _ORG_WORDS:
            kind = "organisation"
        elif after_title and len(words) <= 4:
            kind = "person"
        elif (
            2 <= len(words) <= 4
            and not lowered & {"of", "the"}
            and (_LIFESPAN.match(rest) or _COPULA_OCCUPATION.match(rest))
        ):
            kind = "person"
        elif any(c.isdigit() for c in name) and not any(c.isalpha() for c in name):
            continue  # a bare number (a year, a count) is no name
        else:
            kind = "other"
        found.append(Entity(name, kind))
        taken.add(name)
    return found


@functools.lru_cache(maxsize=8192)
def extract_entities(text: str) -> tuple[Entity, ...]:
    """Entities of a text in order of first appearance, one per name (case-insensitive), best kind kept."""
    best: dict[str, Entity] = {}
    text = _FIRST_INITIAL.sub(r"\1 ", _MIDDLE_INITIAL.sub(r"\1 \2 ", _ABBREV.sub(r"\1", text or "")))
    for sentence in sentences(text) or [text]:
        for e in _sentence_entities(sentence):
            key = e.name.lower()
            if key not in best or KIND_RANK[e.kind] < KIND_RANK[best[key].kind]:
                best[key] = e if key not in best else Entity(best[key].name, e.kind)
    return tuple(best.values())


def mentions(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` as whole words (case-insensitive)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE) is not None
