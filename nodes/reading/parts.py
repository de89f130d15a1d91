"""The parts of a question, which the brief is organised by and the loop searches for (docs/how-it-works.md).

A question has one part unless its form names several:

- a **comparison** ("Compare A and B", "A vs B", "the difference(s) between A and B", "A or B: which …"): one part
  per side, the head noun shared by a bare first side ("nuclear and solar power" → "nuclear power", "solar
  power"), and the criterion when one is named ("in cost", "in terms of safety");
- **named aspects** ("the causes and effects of X", "advantages and disadvantages of X", "pros and cons of X"):
  one part per aspect, each "ASPECT of X";
- **how / why** ("How does X …?", "Why is X …?", "Explain how X …"): what X is, then the mechanism (the question
  itself);
- anything else: the question.

Each part is ``{"name", "ask", "kind"}``: ``name`` what the brief heads it with, ``ask`` what the reader reads the
sentences against and the loop searches for, ``kind`` one of ``question``, ``side``, ``aspect``, ``what``, ``how``.
With a chat model the model may propose the parts (``_chain_model``); they are kept only when each shares a word
with the question (``checked_parts``), as planned queries are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from saturate.nodes.reading.question import stems

MAX_PARTS = 4
_ASPECTS = (
    "causes",
    "effects",
    "consequences",
    "impacts",
    "advantages",
    "disadvantages",
    "benefits",
    "risks",
    "pros",
    "cons",
    "origins",
    "uses",
    "symptoms",
    "treatments",
    "similarities",
    "differences",
)
_ASPECT = "|".join(_ASPECTS)
_ASPECTS_OF = re.compile(
    rf"\b((?:(?:main|major|key|primary|chief)\s+)?(?:{_ASPECT})(?:\s*(?:,|and|&)\s*(?:the\s+)?(?:main\s+)?(?:{_ASPECT}))+)"
    r"\s+(?:of|for|in)\s+(?P<topic>.+)$",
    re.IGNORECASE,
)
_COMPARE = (
    re.compile(r"^(?:compare|contrast)\s+(?:the\s+)?(?P<a>.+?)\s+(?:and|with|to|versus|vs\.?)\s+(?P<b>.+)$", re.I),
    re.compile(
        r"^(?:what\s+(?:is|are)\s+)?(?:the\s+)?(?:main\s+|key\s+)?differences?\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)$",
        re.I,
    ),
    re.compile(
        r"^(?:how\s+(?:does|do|is|are)\s+)(?P<a>.+?)\s+(?:differ\s+from|compare\s+(?:to|with))\s+(?P<b>.+)$", re.I
    ),
    re.compile(r"^(?P<a>[^,]+?)\s+(?:vs\.?|versus)\s+(?P<b>.+)$", re.I),
    re.compile(r"^(?P<c>(?:which|who|what)\b[^,]*),\s*(?:the\s+)?(?P<a>.+?)\s+or\s+(?:the\s+)?(?P<b>.+)$", re.I),
)
_CRITERION = re.compile(r"\s+(?:in\s+terms\s+of|in|on|by|for)\s+(?P<c>(?:their\s+|its\s+)?[\w\s-]+)$", re.I)
_AUXILIARY = r"(?:does|do|did|is|are|was|were|can|could|would|will)"
_HOW_WHY = re.compile(rf"^(?P<w>how|why)\s+{_AUXILIARY}\s+(?:an?\s+|the\s+)?(?P<rest>.+)$", re.I)
# the same asked as a request ("Explain how a rainbow forms", "Describe why the Roman Empire fell"): no auxiliary needed
_EXPLAIN_HOW_WHY = re.compile(
    rf"^(?:please\s+)?(?:explain|describe)\s+(?:to\s+me\s+)?(?P<w>how|why)\s+(?:{_AUXILIARY}\s+)?"
    r"(?:an?\s+|the\s+)?(?P<rest>.+)$",
    re.I,
)
# words after which a how/why question's subject has ended (its verb or a predicate follows)
_SUBJECT_END = re.compile(
    r"\s+(?:work|works|happen|form|formed|cause|causes|affect|affects|convert|converts|produce|produces|make|makes|"
    r"get|become|use|uses|turn|change|occur|lead|differ|help|grow|move|keep|have|has|called|so|not|still|important|"
    r"\w+(?:ed|ing|ize|ise|ate)s?)\b.*$",
    re.I,
)


def _clean(text: str) -> str:
    text = " ".join(re.sub(r"[?.!]+$", "", text).split()).strip(" ,;:")
    return re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)


def _shared_head(a: str, b: str) -> tuple[str, str]:
    """ "nuclear", "solar power" → "nuclear power", "solar power": a one-word first side takes the second's head."""
    aw, bw = a.split(), b.split()
    if len(aw) == 1 and len(bw) >= 2 and aw[0].lower() not in {w.lower() for w in bw}:
        return f"{a} {' '.join(bw[1:])}", b
    return a, b


def _sides(question: str) -> tuple[str, str, str] | None:
    q = _clean(question)
    for pattern in _COMPARE:
        m = pattern.match(q)
        if m:
            a, b = _clean(m.group("a")), _clean(m.group("b"))
            criterion = _clean(m.groupdict().get("c") or "")
            c = _CRITERION.search(b)
            if c and len(b.split()) > 2:
                criterion, b = _clean(c.group("c")), _clean(b[: c.start()])
            a, b = _shared_head(a, b)
            if a and b and a.lower() != b.lower():
                return a, b, criterion
    return None


def question_parts(question: str) -> list[dict[str, str]]:
    """The parts of ``question`` (module docstring), at most ``MAX_PARTS``; one part for a plain question."""
    q = _clean(question)
    sides = _sides(question)
    if sides:
        a, b, criterion = sides
        return [
            {"name": a, "ask": f"{a}: {criterion}" if criterion else a, "kind": "side"},
            {"name": b, "ask": f"{b}: {criterion}" if criterion else b, "kind": "side"},
        ]
    m = _ASPECTS_OF.search(q)
    if m:
        topic = _clean(m.group("topic"))
        names = [w.lower() for w in re.findall(rf"\b(?:{_ASPECT})\b", m.group(1), re.I)]
        names = list(dict.fromkeys(names))[:MAX_PARTS]
        if len(names) >= 2 and topic:
            return [{"name": n, "ask": f"{n} of {topic}", "kind": "aspect"} for n in names]
    m = _HOW_WHY.match(q) or _EXPLAIN_HOW_WHY.match(q)
    if m:
        rest = m.group("rest")
        cut = _SUBJECT_END.sub("", rest)
        if cut == rest and len(rest.split()) >= 2:  # "How did the Roman Empire fall": the last word is the verb
            cut = rest.rsplit(" ", 1)[0]
        subject = _clean(cut)
        if subject and len(subject.split()) <= 5 and subject.lower() != m.group("rest").lower():
            return [
                {"name": subject, "ask": f"What is {subject}?", "kind": "what"},
                {"name": m.group("w").lower(), "ask": question.strip(), "kind": "how"},
            ]
    return [{"name": q, "ask": question.strip(), "kind": "question"}]


def reader_question(part: Mapping[str, Any]) -> str:
    """What the trained reader reads a part as: a question, as it was trained on ("What is nuclear power?" for the
    side "nuclear power", "What are the causes of climate change?" for an aspect); ``ask`` stays the search words."""
    ask = str(part.get("ask") or "").strip()
    if not ask or ask.endswith("?"):
        return ask
    return f"What are the {ask}?" if part.get("kind") == "aspect" else f"What is {ask}?"


def checked_parts(question: str, proposed: Sequence[Mapping[str, Any]]) -> list[dict[str, str]] | None:
    """A model's proposed parts, kept when there are 2 to ``MAX_PARTS`` and each shares a word with the question;
    None otherwise (the question's own parts then)."""
    words = stems(question)
    out = []
    for p in proposed:
        name = _clean(str(p.get("name") or ""))
        ask = _clean(str(p.get("ask") or name))
        if not name or not (stems(f"{name} {ask}") & words):
            return None
        out.append({"name": name[:80], "ask": ask[:200], "kind": "aspect"})
    return out if 2 <= len(out) <= MAX_PARTS else None


def part_results(part: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The results about a part: those whose title or snippet holds a word of its ``ask`` beyond the question form
    ("what", "is"), the most of them first."""
    words = stems(str(part.get("ask") or "")) - stems("what is how why does do")
    scored = [(len(words & stems(f"{r.get('title', '')} {r.get('snippet', '')}")), i, r) for i, r in enumerate(results)]
    return [r for n, i, r in sorted(scored, key=lambda t: (-t[0], t[1])) if n]
