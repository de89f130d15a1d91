"""The trained reader: a cross-encoder that reads the question and each sentence of the accepted results together.

The model (``model/reader.onnx``, int8 ONNX on onnxruntime, its sha256 checked when it loads) is all-MiniLM-L6-v2
fine-tuned on public training questions (``training/train_reader.py``, docs/reader.md). It reads
``[CLS] question [SEP] title. sentence [SEP]`` (``MAX_TOKENS`` word pieces, the sentence cut) and gives

- a **score**: how likely the sentence answers the question, which ``levels.json`` turns into ``p``, a probability
  calibrated on training questions held out of training (``training/fit_levels.py``), with the page's meaning where
  it is given (``Meaning``);
- a **span**: where in the sentence the answer itself starts and ends (the short answer), with its probability.

Reading every sentence of a session would cost seconds on 2 cores, so the sentences are first ranked by ``overlap``
(the idf-weighted share of the question's words they or their title hold: ``candidates``) and the best
``CANDIDATES`` are read, one pair a run (``BATCH``). Reads are cached by (question, title, sentence), so the gate
reading each round's results and ``decide`` reading them all again read each sentence once.

Why one pair a run: the int8 model quantises its activations per run (onnxruntime's dynamic quantisation takes
one scale over the whole batch), so a pair's score moved by up to 0.07 with the pairs read beside it. With the
cache, a sentence's score then depended on what the process had read before — a resumed or replayed session,
or the same seeded session in another batch worker, could end differently. Alone, a pair scores the same
wherever it is read (about 1.5× the time of runs of 16: 170 against 115 ms for 24 pairs).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from saturate.nodes.reading.question import split_sentences, stems
from saturate.state import onnx_cache

MODEL_DIR = Path(__file__).parent / "model"
MODEL_FILE = MODEL_DIR / "reader.onnx"
TOKENIZER_FILE = MODEL_DIR / "tokenizer.json"
LEVELS_FILE = MODEL_DIR / "levels.json"
SHA256_FILE = MODEL_DIR / "reader.sha256"  # sha256sum lines of the three files above
# onnxruntime's graph rewrites left out when the session is built: constant folding spent 34 ms of every process (93 ->
# 59 ms of CPU to build the session, issue 46) on a model quantised dynamically (MatMulInteger), for nothing: the
# scores are bit for bit those of a session with every rewrite (tests/reading/test_reader.py), the run as fast. (The
# embedding model is not built so: its int8 weights are folded to float once, and without that every query paid for
# it, 5.7 -> 20.6 ms, and a session's peak memory rose 375 -> 452 MB.)
DISABLED_OPTIMIZERS = ("ConstantFolding",)
# sentences read per question, the first in the learned order (``candidates``). 24 until the reader's cost fell
# (reader_added_ms 75-114 ms at 24, target 150): chosen on half A of `saturate bench reader` (`right`, the three sets
# weighing the same, at the thresholds it chose) among 24, 32, 40 and 48: 0.497, 0.500, 0.502, 0.497 (B 0.569, 0.571,
# 0.564, 0.559); 40 helped half A by a question and hurt half B, so 32, which helped both (docs/reader.md). The loop's
# extra sources are what more reads reach: webq's answer hit after one search is the same at every count
CANDIDATES = 32
# of them, at most this many from one source before any source's next: the answer shows up to three sentences, and
# a session's first sources could take all the reads while a later one answered (eleven presidents' summaries before
# George Washington's, the twelfth source, for "Who was the first President of the United States?"). Chosen on half
# A of `saturate bench reader` among 1, 2, 3 and no limit (`right`, the three sets weighing the same: 1.473, 1.515,
# 1.525, 1.489; docs/reader.md): webq's answer hit 0.277 -> 0.293 (2 gave 0.320 and read Washington's, but A chose 3)
PER_SOURCE = 3
BATCH = 1  # pairs the model reads in one run: one, so that a score never depends on its neighbours (above)
MIN_SENTENCE_CHARS = 20
PAGE_CHARS = 8000  # text read per source (snippet + enriched page or corpus document)
MAX_TOKENS = 80  # word pieces of a pair the model reads (as trained)
MAX_SPAN_TOKENS = 12  # the longest short answer, in word pieces
SEP_ID = 102
_CACHE_SIZE = 20000


@dataclass(frozen=True)
class Candidate:
    doc: int  # index of the source in the results given
    order: int  # the sentence's place in its source
    title: str
    text: str
    overlap: float = 0.0  # the question's words it shares (idf-weighted share)


@dataclass(frozen=True)
class Read:
    candidate: Candidate
    p: float  # probability the sentence answers the question (calibrated)
    score: float = 0.0  # the model's raw score
    span: tuple[int, int] | None = None  # the answer's characters in candidate.text
    span_p: float = 0.0  # the span's probability (its start's times its end's)
    meaning: float | None = None  # the cosine of its source to the question, where p was read with it (``Meaning``)

    @property
    def span_text(self) -> str:
        return self.candidate.text[self.span[0] : self.span[1]].strip(" ,;:") if self.span else ""


def pair_text(title: str, sentence: str) -> str:
    """What the model reads of a sentence: its source's title and the sentence."""
    return f"{title}. {sentence}" if title else sentence


QUESTION_KINDS = ("how many", "how much", "what year", "when", "who", "where", "which", "what", "why", "how")
CANDIDATE_FEATURES = (
    "overlap",
    "sentence_share",
    "title_share",
    "log_doc",
    "log_order",
    "first",
    "log_chars",
    "digit",
    "year",
    "log_capitals",
) + tuple(f"{k}:{f}" for k in (*QUESTION_KINDS, "other") for f in ("digit", "year", "log_capitals", "sentence_share"))
_YEAR = re.compile(r"\b(?:1\d{3}|20\d\d)\b")
_CAPITAL = re.compile(r"(?<!^)(?<![.!?] )\b[A-Z][a-z]+")


def question_kind(question: str) -> str:
    """The question word it asks with (``QUESTION_KINDS``, the first found in that order), or "other"."""
    low = question.lower()
    return next((k for k in QUESTION_KINDS if re.search(rf"\b{k}\b", low)), "other")


def candidate_features(
    kind: str, q: frozenset[str], doc: int, order: int, overlap: float, text: str, text_stems, title_stems
) -> list[float]:
    """``CANDIDATE_FEATURES`` of a sentence: its share of the question's words (idf-weighted with its title's, then
    its own and its title's alone), its source's place among the results and its own in the source, its length,
    whether it holds a number or a year and how many capitalised words, and these crossed with the question's kind."""
    n = max(1, len(q))
    sentence_share = len(text_stems & q) / n
    digit = float(any(ch.isdigit() for ch in text))
    year = float(bool(_YEAR.search(text)))
    capitals = math.log1p(len(_CAPITAL.findall(text)))
    out = [
        overlap,
        sentence_share,
        len(title_stems & q) / n,
        math.log1p(doc),
        math.log1p(order),
        float(order == 0),
        math.log(max(MIN_SENTENCE_CHARS, len(text))),
        digit,
        year,
        capitals,
    ]
    for k in (*QUESTION_KINDS, "other"):
        on = float(k == kind)
        out += [on * digit, on * year, on * capitals, on * sentence_share]
    return out


@dataclass(frozen=True)
class Prior:
    """The learned order in which sentences are worth reading (``levels.json``'s ``candidates``, fitted by
    ``training/fit_candidates.py`` on training sessions): a logistic model of ``CANDIDATE_FEATURES``, standardised."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    @classmethod
    def of(cls, spec: dict) -> Prior:
        names = spec["features"]
        if tuple(names) != CANDIDATE_FEATURES:
            raise ValueError(f"its features are not this version's ({len(names)} against {len(CANDIDATE_FEATURES)})")
        w, m, s = (tuple(float(spec[k][f]) for f in names) for k in ("weights", "mean", "scale"))
        return cls(w, float(spec["bias"]), m, s)

    def score(self, x: list[float]) -> float:
        return self.bias + math.fsum(w * (v - m) / s for w, v, m, s in zip(self.weights, x, self.mean, self.scale))


@dataclass(frozen=True)
class Meaning:
    """The calibration that also weighs what a sentence's source *means* (``levels.json``'s ``meaning``, fitted by
    ``training/fit_levels.py --meaning``): ``p`` from the model's score, ``overlap`` and the cosine between the
    question and the source's stored vector under the embedding model ``identity`` names (the embedded corpus's
    default, all-MiniLM-L6-v2 int8), with its own per-question model (``question``) for the levels. The
    cross-encoder reads one sentence; whether its page is about what the question asks, it does not see: with it,
    the best sentence of 4,296 held-out training questions held a gold answer for 349 against 334 (two folds).
    Where the sources have no such vectors (the web, another embedding model, retrieval by words), ``p`` is read
    without it, as before."""

    identity: str
    weights: tuple[float, float, float]  # score, overlap, meaning
    bias: float
    question: dict

    @classmethod
    def of(cls, spec: dict) -> Meaning:
        w = spec["sentence"]["weights"]
        weights = (float(w["score"]), float(w["overlap"]), float(w["meaning"]))
        return cls(str(spec["identity"]), weights, float(spec["sentence"]["bias"]), dict(spec["question"]))

    def probability(self, score: float, overlap: float, meaning: float) -> float:
        a, c, m = self.weights
        return round(1.0 / (1.0 + math.exp(-(a * score + c * overlap + m * meaning + self.bias))), 6)


def sentence_key(sentence: str) -> str:
    """A sentence as compared with another (lower case, spaces folded): one that several sources repeat is read once."""
    return " ".join(sentence.lower().split())


def readable_sentences(text: str, title: str = "") -> Iterator[tuple[int, str, str]]:
    """(place in the text, sentence, ``sentence_key``) of each sentence of ``text`` worth reading: within its first
    ``PAGE_CHARS``, at least ``MIN_SENTENCE_CHARS`` long, and not the source's ``title`` itself — a fetched page's
    heading line ("Substance (chemistry)" above its text: a local corpus's pages are stored so) is no sentence, and
    the brief showed it as one, "confirmed" by three other pages (the extractive rules skip it likewise)."""
    heading = sentence_key(title) if title else None
    for j, s in enumerate(split_sentences((text or "")[:PAGE_CHARS])):
        if len(s) >= MIN_SENTENCE_CHARS:
            key = sentence_key(s)
            if key != heading:
                yield j, s, key


def candidates(
    question: str,
    docs: list[tuple[str, str]],
    limit: int = CANDIDATES,
    prior: Prior | None = None,
    per_source: int | None = PER_SOURCE,
) -> list[Candidate]:
    """The sentences of ``docs`` ((title, text) each) most worth reading for ``question``; the first ``limit``. A
    sentence is read once however many sources repeat it. Ranked by ``prior`` (the shipped reader's learned order)
    when given — then at most ``per_source`` of one source come before any source's next (``spread``; None: no
    limit) —, else by the idf-weighted share of the question's words they (or their source's title) contain; ties
    by source and sentence order."""
    q = stems(question)
    pool: list[tuple[int, int, str, str, frozenset[str], frozenset[str], frozenset[str]]] = []
    seen: set[str] = set()
    for i, (title, text) in enumerate(docs):
        title_stems = stems(title)
        for j, s, key in readable_sentences(text, title):
            if key in seen:
                continue
            seen.add(key)
            own = stems(s)
            pool.append((i, j, title, s, (own | title_stems) & q, own, title_stems))
    if not pool:
        return []
    n = len(pool)
    df = {t: sum(1 for p in pool if t in p[4]) for t in q}
    idf = {t: math.log(1 + n / df[t]) if df[t] else 0.0 for t in q}
    mass = math.fsum(idf.values()) or 1.0
    scored = [
        (Candidate(i, j, title, s, round(math.fsum(idf[t] for t in sorted(shared)) / mass, 6)), own, ts)
        for i, j, title, s, shared, own, ts in pool
    ]
    if prior is None:
        ranked = sorted((c for c, _, _ in scored), key=lambda c: (-c.overlap, c.doc, c.order))
    else:
        kind = question_kind(question)
        keyed = [
            (-round(prior.score(candidate_features(kind, q, c.doc, c.order, c.overlap, c.text, own, ts)), 9), c)
            for c, own, ts in scored
        ]
        ranked = spread([c for _, c in sorted(keyed, key=lambda t: (t[0], t[1].doc, t[1].order))], per_source)
    return ranked[:limit]


def spread(ranked: list[Candidate], per_source: int | None) -> list[Candidate]:
    """``ranked`` with each source's first ``per_source`` sentences (in their rank) before any source's next ones,
    which follow in their rank: the sentences read come from more sources."""
    if per_source is None:
        return ranked
    seen: dict[int, int] = {}
    first, later = [], []
    for c in ranked:
        seen[c.doc] = seen.get(c.doc, 0) + 1
        (first if seen[c.doc] <= per_source else later).append(c)
    return first + later


class ReaderUnavailable(RuntimeError):
    """The reader cannot run (its model, tokenizer or calibration missing or damaged, onnxruntime or tokenizers
    missing)."""


def _checked_bytes(path: Path, want: dict[str, str], check_sha: bool) -> bytes:
    if not path.is_file():
        raise ReaderUnavailable(f"the reader's file is missing: {path}")
    raw = path.read_bytes()
    if check_sha:
        got = hashlib.sha256(raw).hexdigest()
        if got != want.get(path.name, ""):
            raise ReaderUnavailable(
                f"the reader's file {path} is damaged (sha256 {got[:12]}…, want {want.get(path.name, '')[:12]}…)"
            )
    return raw


def _recorded_sha256(folder: Path) -> dict[str, str]:
    file = folder / SHA256_FILE.name
    if not file.is_file():
        return {}
    return {
        parts[1].lstrip("*"): parts[0]
        for parts in (ln.split() for ln in file.read_text().splitlines())
        if len(parts) == 2
    }


def _release_model_bytes(session: Any) -> None:
    """Let go of the copy of the model's bytes that onnxruntime's ``InferenceSession`` keeps when built from bytes
    (``_model_bytes``, kept only to rebuild the session for other providers, which the reader never asks for; its own
    comment says "this is bad as we're holding the memory indefinitely"): 22 MB for the life of the process, about a
    twentieth of a session's peak memory (issue 46). The model is built from the bytes whose sha256 was checked, so it
    is built from bytes, not from the file again. What the session computes does not change."""
    if isinstance(getattr(session, "_model_bytes", None), bytes):
        session._model_bytes = None


class Reader:
    """The model, its tokenizer and calibration; ``read`` gives each candidate its ``p`` and span (thread-safe,
    cached). ``folder``: where the files are (default the shipped ones, their sha256 checked)."""

    prior: Prior | None = None  # the learned order of the candidates (levels.json's ``candidates``)

    def __init__(self, folder: Path = MODEL_DIR, check_sha: bool = True):
        want = _recorded_sha256(folder)
        levels_raw = _checked_bytes(folder / LEVELS_FILE.name, want, check_sha)
        try:
            self.levels: dict[str, Any] = json.loads(levels_raw)
            sentence = self.levels["sentence"]
            self._a, self._c = (float(sentence["weights"][f]) for f in ("score", "overlap"))
            self._b = float(sentence["bias"])
            self.meaning = Meaning.of(self.levels["meaning"]) if "meaning" in self.levels else None
            self.prior = Prior.of(self.levels["candidates"]) if "candidates" in self.levels else None
        except (ValueError, KeyError, TypeError) as exc:
            raise ReaderUnavailable(
                f"the reader's calibration {folder / LEVELS_FILE.name} cannot be read: {exc!r}"
            ) from None
        model_raw = _checked_bytes(folder / MODEL_FILE.name, want, check_sha)
        tok_raw = _checked_bytes(folder / TOKENIZER_FILE.name, want, check_sha)
        try:
            from tokenizers import Tokenizer

            # one thread: a run reads one pair (BATCH) of some fifty tokens, too little to share between threads;
            # two threads (onnxruntime's default on 2 cores) cost 28% more CPU at the same wall time, the scores bit
            # for bit the same (3 questions x 60 sentences); and a batch's sessions, each in its own thread, read at
            # once. The threads do not spin (onnx_cache.session_options).
            options = onnx_cache.session_options(threads=1)
            # the optimised graph of a model whose sha256 was checked is kept on disk (state/onnx_cache.py: 25 ms
            # of CPU a process); the bytes are still read and checked above, so a damaged file is still refused
            self._session = onnx_cache.inference_session(
                model_raw,
                options,
                name="reader",
                sha256=want.get(MODEL_FILE.name) if check_sha else None,
                disabled_optimizers=DISABLED_OPTIMIZERS,
            )
            _release_model_bytes(self._session)
            self._tokenizer = Tokenizer.from_str(tok_raw.decode("utf-8"))
        except ImportError as exc:
            raise ReaderUnavailable(f"the reader needs {exc.name or exc}, which saturate installs") from None
        except Exception as exc:  # onnxruntime and tokenizers raise their own types: say which file and why
            raise ReaderUnavailable(f"the reader's model in {folder} cannot be loaded: {exc}") from None
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS, strategy="longest_first")
        self._tokenizer.no_padding()
        self._cache: OrderedDict[tuple[str, str, str], tuple[float, tuple[int, int] | None, float]] = OrderedDict()
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Empty the cache of reads (as in a new process: what a benchmark of the reader's cost starts from)."""
        with self._lock:
            self._cache.clear()

    def candidates(self, question: str, docs: list[tuple[str, str]], limit: int = CANDIDATES) -> list[Candidate]:
        """The sentences of ``docs`` worth reading for ``question``, in this reader's learned order (``Prior``)."""
        return candidates(question, docs, limit, self.prior)

    def probability(self, score: float, overlap: float = 0.0, meaning: float | None = None) -> float:
        """The calibrated probability that a sentence answers: from the model's score and the candidate's share of
        the question's words (``levels.json``'s sentence model; the cross-encoder alone ranked a river's generic
        "flows into" sentence above the named river's own), and, where ``meaning`` is given (the cosine of the
        sentence's source to the question) and the calibration has one, its ``Meaning`` model."""
        if meaning is not None and self.meaning is not None:
            return self.meaning.probability(score, overlap, meaning)
        return round(1.0 / (1.0 + math.exp(-(self._a * score + self._c * overlap + self._b))), 6)

    def _run(self, question: str, todo: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[float, Any, float]]:
        import numpy as np  # lazy, as onnxruntime

        out: dict[tuple[str, str], tuple[float, Any, float]] = {}
        order = sorted(todo, key=lambda t: len(t[0]) + len(t[1]))  # shortest first: a batch pads to a near length
        for k in range(0, len(order), BATCH):
            batch = order[k : k + BATCH]
            encs = self._tokenizer.encode_batch([(question, pair_text(t, s)) for t, s in batch])
            width = max(len(e.ids) for e in encs)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for i, e in enumerate(encs):
                n = len(e.ids)
                ids[i, :n], mask[i, :n], types[i, :n] = e.ids, e.attention_mask, e.type_ids
            score, start, end = (
                np.asarray(x)
                for x in self._session.run(
                    ["score", "start", "end"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
                )
            )
            for i, ((title, sentence), e) in enumerate(zip(batch, encs)):
                span, span_p = _best_span(e, start[i], end[i], len(title) + 2 if title else 0, len(sentence))
                out[(title, sentence)] = (round(float(score[i]), 4), span, span_p)
        return out

    def read(self, question: str, cands: list[Candidate], meaning: Mapping[int, float] | None = None) -> list[Read]:
        """Each candidate read against ``question``, in the order given; ``meaning``: the cosine of each source
        (by ``Candidate.doc``) to the question under the model of ``Meaning.identity`` (``doc_meaning``), which
        the candidates of those sources are read with."""
        keys = [(c.title, c.text) for c in cands]
        got: dict[tuple[str, str], tuple[float, Any, float]] = {}
        with self._lock:
            for t, s in dict.fromkeys(keys):
                hit = self._cache.get((question, t, s))
                if hit is not None:
                    self._cache.move_to_end((question, t, s))
                    got[(t, s)] = hit
        todo = [k for k in dict.fromkeys(keys) if k not in got]
        if todo:
            fresh = self._run(question, todo)
            got.update(fresh)
            with self._lock:
                for (t, s), v in fresh.items():
                    self._cache[(question, t, s)] = v
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        out = []
        for c, k in zip(cands, keys):
            score, span, span_p = got[k]
            cos = meaning.get(c.doc) if meaning and self.meaning is not None else None
            out.append(Read(c, self.probability(score, c.overlap, cos), score, span, span_p, cos))
        return out


def _best_span(enc, start, end, offset: int, length: int) -> tuple[tuple[int, int] | None, float]:
    """The sentence's best answer span: the start and end word pieces (at most ``MAX_SPAN_TOKENS`` apart) with the
    highest summed logits among the sentence's own pieces (not its title's); its characters in the sentence and its
    probability (softmax of the starts times softmax of the ends, over those pieces)."""
    import numpy as np

    allowed = [
        j
        for j, ((a, b), ty, tid) in enumerate(zip(enc.offsets, enc.type_ids, enc.ids))
        if ty == 1 and tid != SEP_ID and b > a and a >= offset
    ]
    if not allowed:
        return None, 0.0
    s = np.asarray(start, dtype=np.float64)[allowed]
    e = np.asarray(end, dtype=np.float64)[allowed]
    ps = np.exp(s - s.max())
    ps /= ps.sum()
    pe = np.exp(e - e.max())
    pe /= pe.sum()
    best, best_ij = -math.inf, (0, 0)
    for i in range(len(allowed)):
        for j in range(i, min(len(allowed), i + MAX_SPAN_TOKENS)):
            if allowed[j] - allowed[i] >= MAX_SPAN_TOKENS:
                break
            v = s[i] + e[j]
            if v > best:
                best, best_ij = v, (i, j)
    i, j = best_ij
    a = enc.offsets[allowed[i]][0] - offset
    b = enc.offsets[allowed[j]][1] - offset
    a, b = max(0, a), min(length, b)
    if b <= a:
        return None, 0.0
    return (a, b), round(float(ps[i] * pe[j]), 4)


@functools.lru_cache(maxsize=1)
def shipped_reader() -> Reader:
    """The shipped reader, loaded once per process (read-only but for its cache of reads)."""
    return Reader()
