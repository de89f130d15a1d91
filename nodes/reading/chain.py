"""What a question asks, as chains of slots: entity → relation → bridge → … → the answer's type.

A **slot** is one thing the research must find: the value related to its
``subject`` by its ``relation`` words, of a ``kind`` (person, place,
organisation, work, date, number, name, category, yesno). A subject is an entity
the question names, or ``#k``: the value of slot k of the same chain (the
bridge). A **chain** is the slots of one sub-question, innermost first; its last
slot is what the sub-question asks. A compound task ("What is X, and which Y
does it Z?") has one chain per sub-question (a pronoun subject, "it", is the answer of the sub-question
before: ``@k``); a comparison ("Who was born first,
A or B?", "Are A and B both P?") one slot per alternative and a ``compare``
form.

``parse_chains`` is the parser of question syntax used without a chat model
(with one, the model proposes the chains: ``nodes/plan_query.py``). It reads
English grammar only, nothing per question or data set:

- **anchors**: the names the question gives (capitalised phrases, quoted titles;
  a possessive's owner without its 's);
- **heads**: nouns that stand for an unknown entity, each opening a hop — a
  noun before a relative pronoun ("the country *where* …", "the person *who* …",
  "the county *in which* …"), a typed noun before *of* ("the *performer of* …"),
  before a participle ("the country *containing* …"), before a contact clause
  ("the city Kevin Durant *played for*"), or after a possessive ("Corey
  Taylor's *city*"). A noun is typed by a short list of nouns per kind
  (``NOUN_KINDS``); "the name of", "the type of" open no hop;
- **order**: a head's subject is the nearest anchor or head to its right (a
  possessive head's: its owner), so hops are read innermost first; the words of
  a head's clause are its relation; the words outside every clause, with the
  question word's answer type (``reading.question.question_of``), are the last slot's.
  When the outermost head is what the question word asks ("Who is the *sibling*
  of …"), it is the last slot.

A question without a name (typed in lower case: "where did dr seuss go to
school") gets one slot whose subject is left to the results: the title of an
accepted result whose words the question contains (``reading.slots.link_subject``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from saturate.nodes.reading.question import question_names, question_of, stem
from saturate.state.text import STOPWORDS, terms, words

# nouns that stand for an entity of a kind (a head of one of these kinds opens a hop on "of" too)
NOUN_KINDS: dict[str, frozenset[str]] = {
    "place": frozenset(
        """country state city town county region province continent island village place location birthplace
        capital district area nation territory municipality neighborhood neighbourhood suburb borough parish
        prefecture kingdom empire republic hometown venue headquarters""".split()
    ),
    "person": frozenset(
        """performer author director writer singer composer founder spouse wife husband sibling brother sister
        father mother son daughter child parent person man woman actor actress player president leader ruler
        king queen creator producer owner member artist musician poet novelist painter architect designer
        inventor coach manager captain chairman mayor governor senator minister emperor monarch prince princess
        partner successor predecessor explorer scientist character lyricist songwriter rapper star host narrator
        editor candidate people winner""".split()
    ),
    "organisation": frozenset(
        """team company band group party university college school league club organization organisation
        association network label agency army navy airline firm corporation institution church government
        newspaper publisher station channel""".split()
    ),
    "date": frozenset("year date time century decade day month era period".split()),
    # measures: "the speed of light", "the population of Lagos" ask for a quantity
    "number": frozenset(
        """speed velocity height length width depth distance population area size weight mass temperature age
        altitude elevation diameter radius circumference volume density capacity duration number amount count
        price cost salary budget revenue""".split()
    ),
    "work": frozenset(
        "film movie album book song novel show series game opera play work single episode magazine".split()
    ),
}
TRANSPARENT = frozenset("name type kind sort part title".split())  # "the name of X" is X
_DETERMINERS = frozenset("the a an its his her their this that these those".split())
_RELATIVES = frozenset("where which that who whom whose".split())
_PREPOSITIONS = frozenset("in at on from by for with during of to into under through".split())
_QUESTION_WORDS = frozenset("what which who whom whose when where how why".split())
_AUX = frozenset(
    "is are was were do does did has have had can could will would should shall may might be been being".split()
)
_PARTICIPLES = frozenset(
    """born held made found located based formed founded built known called named played fought set shot written
    sung won lost given taken kept begun done seen become situated""".split()
)
# a new sub-question: after "?" or ";", or ", and" / "and" before a question word that opens a question ("and which
# countries does it …"), not a relative clause ("and whose branch campuses are …")
_COMPOUND = re.compile(r"\s*(?:[?;]|,?\s+and\s+(?=(?:what|which|who|when|where|how|why)\b))\s*", re.I)
_PRONOUN_SUBJECT = re.compile(r"\b(?:it|its|they|their|them|he|his|she|her|this|these)\b", re.I)
_TOKEN = re.compile(r"[^\W_]+(?:[-'’.][^\W_]+)*\.?|[,;:?]")
_DEFINITION = re.compile(r"^\s*(?:who|what)\s+(?:is|was|are|were)\s+(?:an?\s+|the\s+)?([^?]+?)\s*\??\s*$", re.I)


@dataclass
class Slot:
    """One thing to find (see the module docstring). ``ask`` is the slot in words, for people."""

    subject: str  # an entity of the question, "#k" (slot k's value), "@k" (chain k's answer), "" (from the results)
    relation: tuple[str, ...]  # content words of the hop
    kind: str
    focus: str | None = None  # the head noun ("country"), when the hop has one
    ask: str = ""

    def to_dict(self, n: int) -> dict:
        return {
            "n": n,
            "ask": self.ask,
            "subject": self.subject,
            "relation": list(self.relation),
            "kind": self.kind,
            "focus": self.focus,
        }


@dataclass
class Chain:
    ask: str  # the sub-question
    slots: list[Slot] = field(default_factory=list)
    compare: str = ""  # "choice" | "yesno" | "common" | "": how the slots combine into the answer

    def to_dict(self) -> dict:
        return {
            "ask": self.ask,
            "compare": self.compare,
            "slots": [s.to_dict(i + 1) for i, s in enumerate(self.slots)],
        }


def noun_kind(word: str) -> str:
    """The kind of entity a noun stands for ("country" → place), "name" when it is none of the listed kinds."""
    w = word.lower()
    for kind, nouns in NOUN_KINDS.items():
        if w in nouns or (w.endswith("s") and w[:-1] in nouns) or (w.endswith("ies") and w[:-3] + "y" in nouns):
            return kind
    return "name"


def _tokens(text: str) -> list[str]:
    """Words and punctuation marks; a possessive 's is a token of its own ("Bonetti's" → Bonetti, 's)."""
    out: list[str] = []
    for m in _TOKEN.finditer(text):
        w = m.group(0)
        poss = re.search(r"['’]s$", w)
        if poss and len(w) > 2:
            out += [w[: poss.start()], "'s"]
        else:
            out.append(w[:-1] if w.endswith(".") and len(w) > 2 and not re.search(r"\.\w", w) else w)
    return out


def _norm(w: str) -> str:
    return re.sub(r"[\W_]+", "", w.lower())


def _anchors(text: str, toks: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, name) token spans of the question's names, longest names first, not overlapping."""
    low = [_norm(t) for t in toks]
    spans: list[tuple[int, int, str]] = []
    taken: set[int] = set()
    for name in question_names(text):
        name = re.sub(r"['’]s$", "", name)
        want = [_norm(w) for w in _tokens(name) if _norm(w)]
        if not want:
            continue
        for i in range(len(toks)):
            j, k = i, 0
            while k < len(want) and j < len(toks):
                if not low[j]:
                    j += 1
                    continue
                if low[j] != want[k]:
                    break
                j, k = j + 1, k + 1
            if k == len(want) and not taken & set(range(i, j)):
                if i == 0 and (low[0] in _QUESTION_WORDS or low[0] in STOPWORDS or low[0] in _AUX):
                    continue
                spans.append((i, j, " ".join(toks[i:j])))
                taken |= set(range(i, j))
                break
    return sorted(spans)


def _participle(w: str) -> bool:
    return w in _PARTICIPLES or (len(w) >= 4 and w.endswith("ed")) or (len(w) > 5 and w.endswith("en"))


def _heads(toks: list[str], anchor_at: dict[int, tuple[int, int, str]]) -> list[tuple[int, str]]:
    """(token index, how) of the nouns that open a hop (module docstring)."""
    low = [t.lower() for t in toks]
    n = len(toks)
    heads: list[tuple[int, str]] = []

    def at(i: int) -> str:
        return low[i] if 0 <= i < n else ""

    def verb_after(span_end: int) -> bool:  # an anchor followed by a verb: a clause, not an apposition
        a, b = at(span_end), at(span_end + 1)
        return _participle(a) or (a in _AUX and (_participle(b) or b == "part"))

    for k, w in enumerate(low):
        if k in anchor_at or not w.isalpha() or w in STOPWORDS or w in _QUESTION_WORDS or w in _AUX:
            continue
        possessed = at(k - 1) == "'s"
        if not possessed and not any(at(j) in _DETERMINERS for j in range(max(0, k - 3), k) if j not in anchor_at):
            continue
        typed = noun_kind(w) != "name"
        nxt, nxt2 = at(k + 1), at(k + 2)
        if w in TRANSPARENT and nxt == "of":
            continue
        if possessed and (typed or nxt in _QUESTION_WORDS or nxt in _AUX or nxt in _PREPOSITIONS or not nxt):
            heads.append((k, "possessive"))
        elif (nxt in _RELATIVES and nxt != "that") or (nxt == "that" and typed):
            heads.append((k, "relative"))
        elif nxt in _PREPOSITIONS and nxt2 in ("which", "whom"):
            heads.append((k, "relative"))
        elif typed and nxt == "of" and nxt2 not in _QUESTION_WORDS:
            heads.append((k, "of"))
        elif typed and nxt.endswith("ing") and len(nxt) > 5:
            heads.append((k, "participle"))
        elif typed and k + 1 in anchor_at and verb_after(anchor_at[k + 1][1]):
            heads.append((k, "contact"))
        elif typed and nxt == "the" and k + 2 in anchor_at and verb_after(anchor_at[k + 2][1]):
            heads.append((k, "contact"))
    return heads


def _clause_end(toks: list[str], start: int) -> int:
    """After a subject: the verb words that close its clause ("… is located", "… died", "… was born in")."""
    low = [t.lower() for t in toks]
    i = start
    while i < len(low) and low[i] in _AUX and i + 1 < len(low) and (_participle(low[i + 1]) or low[i + 1] in _AUX):
        i += 1
    if i < len(low) and _participle(low[i]):
        i += 1
        if i < len(low) and low[i] in _PREPOSITIONS and (i + 1 == len(low) or low[i + 1] in "?,;"):
            i += 1
    elif i < len(low) and low[i] in _AUX and (i + 1 == len(low) or low[i + 1] in "?,;"):
        i += 1
    return i


def _asks(before: list[str]) -> bool:
    """Whether the question word asks for the head right after these words: "Who is the (first) …", "What was
    the …" — not "When did the …" (a date of it) or "Which region is …" (another thing)."""
    low = [t.lower() for t in before]
    return (
        len(low) >= 2
        and low[0] in ("who", "whom", "what", "which")
        and low[1] in ("is", "was", "are", "were")
        and len(low) <= 5
        and all(w in _DETERMINERS or w in STOPWORDS or w.isalpha() and noun_kind(w) == "name" for w in low[2:])
    )


def _words(toks: list[str], lo: int, hi: int, skip: set[int]) -> list[str]:
    return [t for i in range(lo, hi) if i not in skip for t in terms(toks[i])]


def _sub_questions(task: str) -> list[str]:
    """The task's sub-questions; a part that asks nothing itself (no question word, no auxiliary first: "…
    locations? Bearno's or Patxi's?") belongs to the part before it."""
    out: list[str] = []
    for part in (p.strip(" ,") for p in _COMPOUND.split(task)):
        if not part or not terms(part):
            continue
        first = part.split(None, 1)[0].lower()
        asks = first in _QUESTION_WORDS or first in _AUX or any(w in _QUESTION_WORDS for w in part.lower().split())
        if out and not asks:
            out[-1] = f"{out[-1]}? {part}"
        else:
            out.append(part)
    return out or [task]


def _chain_of(question: str) -> Chain:
    q = question_of(question)
    if q.form in ("choice", "yesno", "common") and len(q.options) == 2:
        option_terms = {t for o in q.options for t in terms(o)}
        rel = tuple(t for t in dict.fromkeys(terms(question)) if t not in option_terms)
        kind = "yesno" if q.form == "yesno" else q.kind
        return Chain(
            question,
            [Slot(o, rel, kind, None, f"{o}: {' '.join(rel)}".strip(": ")) for o in q.options],
            compare=q.form,
        )
    focus = next((w for w in words(question) if q.focus and stem(w) == q.focus), q.focus)  # as written
    named = re.match(r"\s*(?:what|which)\s+([a-z]+)\b", question, re.I)  # "What river flows …": the noun named
    if named and named.group(1).lower() not in _AUX and named.group(1).lower() not in STOPWORDS:
        focus = named.group(1).lower()
    toks = _tokens(question)
    spans = _anchors(question, toks)
    anchor_at = {i: s for s in spans for i in range(s[0], s[1])}
    heads = _heads(toks, anchor_at)
    last_kind = q.kind
    if last_kind == "name" and focus and noun_kind(focus) != "name":
        last_kind = noun_kind(focus)  # "which countries …": places
    definition = _DEFINITION.match(question)
    if definition and not heads and spans and len(terms(definition.group(1))) == len(terms(spans[0][2])):
        last_kind = "category"  # "Who was Louis Riel?": what X is, its defining sentence
    if not heads:
        subject = " | ".join(s[2] for s in spans) if spans else ""
        used = {i for s in spans for i in range(s[0], s[1])}
        rel = tuple(dict.fromkeys(_words(toks, 0, len(toks), used)))
        ask = f"{subject}: {' '.join(rel)}".strip(": ") if subject else " ".join(rel)
        return Chain(question, [Slot(subject, rel, last_kind, focus, ask)])
    # innermost first: each head's subject is the nearest anchor or head to its right (a possessive's: its owner)
    slots: list[Slot] = []
    used: set[int] = set()
    owner_of: dict[int, int] = {}  # possessive head -> its owner's anchor start
    for k, how in heads:
        if how == "possessive":
            owner = anchor_at.get(k - 2)
            if owner:
                owner_of[k] = owner[0]
    head_at = {k: how for k, how in heads}
    slot_of_head: dict[int, int] = {}
    owned = set(owner_of.values())
    for k, how in sorted(heads, key=lambda h: -h[0]):
        if how == "possessive":
            start = owner_of.get(k)
            if start is None:
                continue
            span = anchor_at[start]
            subject, lo, hi = span[2], span[0], k + 1
            used |= set(range(span[0], span[1]))
        else:
            nearest = None
            for j in range(k + 1, len(toks)):
                if j in head_at and j in slot_of_head:
                    nearest = ("head", j)
                    break
                if j in anchor_at and anchor_at[j][0] not in owned:
                    nearest = ("anchor", j)
                    break
                if j in anchor_at and anchor_at[j][0] in owned:
                    possessor = next((h for h, s in owner_of.items() if s == anchor_at[j][0]), None)
                    if possessor is not None and possessor in slot_of_head:
                        nearest = ("head", possessor)
                        break
            if nearest is None:
                continue
            if nearest[0] == "head":
                subject = f"#{slot_of_head[nearest[1]] + 1}"
                lo, hi = k, nearest[1]
            else:
                span = anchor_at[nearest[1]]
                subject = span[2]
                used |= set(range(span[0], span[1]))
                lo, hi = k, _clause_end(toks, span[1]) if how != "of" else span[1]
        rel = [w for w in _words(toks, lo, hi, {i for i in range(lo, hi) if i in anchor_at}) if w not in ("'s",)]
        used |= set(range(lo, hi))
        slot_of_head[k] = len(slots)
        head = toks[k].lower()
        slots.append(Slot(subject, tuple(dict.fromkeys(rel)), noun_kind(head), head, ""))
    if not slots:
        subject = " | ".join(s[2] for s in spans) if spans else ""
        rel = tuple(dict.fromkeys(_words(toks, 0, len(toks), {i for s in spans for i in range(s[0], s[1])})))
        return Chain(question, [Slot(subject, rel, last_kind, focus, " ".join(rel))])
    outer = [w for w in _words(toks, 0, len(toks), used)]
    leftmost = min(slot_of_head, key=lambda k: k)
    asks_head = _asks(toks[:leftmost]) and head_at[leftmost] != "possessive"
    if asks_head or not outer:
        last = slots[slot_of_head[leftmost]]
        last.kind = last_kind if last_kind not in ("any", "name") else last.kind
        last.relation = tuple(dict.fromkeys([*last.relation, *outer]))
    else:
        previous = f"#{slot_of_head[leftmost] + 1}"
        slots.append(Slot(previous, tuple(dict.fromkeys(outer)), last_kind, focus, ""))
    for i, s in enumerate(slots):
        about = s.subject if not s.subject.startswith("#") else f"the {slots[int(s.subject[1:]) - 1].focus or 'answer'}"
        s.ask = f"{' '.join(s.relation)} ({about})" if i else f"{' '.join(s.relation)} ({about})"
    return Chain(question, slots)


@functools.lru_cache(maxsize=256)
def _parse(task: str) -> tuple[Chain, ...]:
    chains = [_chain_of(q) for q in _sub_questions(task)]
    for k, c in enumerate(chains[1:], start=1):  # "… and which countries does it flow through?": "it" is the answer
        first = c.slots[0]  # of the sub-question before ("@k": the value of chain k's last slot)
        if not first.subject and _PRONOUN_SUBJECT.search(c.ask):
            first.subject = f"@{k}"
            first.ask = f"{' '.join(first.relation)} (the answer to: {chains[k - 1].ask})"
    return tuple(chains)


def parse_chains(task: str) -> list[dict]:
    """The chains of a task (module docstring), as plain dicts for the graph state."""
    return [c.to_dict() for c in _parse(task)]
