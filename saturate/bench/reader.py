"""``saturate bench reader``: the trained reader's two thresholds, chosen on half A, and what it reads.

    saturate bench reader                          # musique, hotpotqa (their corpora) and webq (the embedded corpus)
    saturate bench reader --limit 50 --json
    saturate bench reader --everyday               # also the 20 everyday questions (saturate/bench/everyday.jsonl)

Every question runs as a real default session (no checkpointer, no cache) with no threshold (``reader_min_p`` 0):
the answer it gives, who gave it (the reader answers single questions; the extractive rules multi-hop ones and
comparisons: ``reading.answer.reader_answers``) and the reader's confidence ``p`` that its best sentence answers.
Offline, for each threshold ``t`` on a grid, a question the reader answered whose ``p`` is below ``t`` says "not
found". Per question:

- ``hit``: a gold answer in the answer text (multi-hop sets: SQuAD-normalised whole words, as ``saturate bench``;
  natural questions: case-insensitive, as ``saturate bench natural``); ``EM`` / ``F1`` of its ``short_answer``;
- ``in_sources``: a gold answer in the accepted results' text;
- ``right``: answered with a hit, or "not found" while no accepted result holds a gold answer (the honest answer).

``reader_min_p`` is the threshold with the most ``right`` on half A of all sets together (each set weighing the
same) among those whose "not found" hides at most ``HIDDEN_MAX`` of each set's right answers on half A (the answers
that held a gold answer with no threshold: ``not_found_answered``). ``right`` counts an honest "not found" as much as
a right answer, so on a set where most questions have no answer in the sources it keeps rewarding more "not found",
right answers hidden with it; issue 43 asks that a right sentence in hand never be hidden behind "not found". (The
bound was added with the reader's ``Meaning`` calibration: without it, that calibration's ``right`` chose 0.08, where
"not found" hid 28 % of webq's right answers on half A; for the calibration before, both choose 0.06.)
``reader_confident_p`` splits the rest into **answered** and **likely** (shown, marked not confirmed): the
lowest on ``CONFIDENT_GRID`` from which the reader's answered questions of half A hold a gold answer at least
``ANSWERED_PRECISION`` of the time. ``reader_rules_words`` (then, at that ``reader_min_p``): the ``WORDS_GRID``
value with the most ``right`` on half A when a question of that many content words or more that the reader would
say "not found" for gets the extractive rules' answer instead (``other_way``: recorded for every question), as
likely. Every figure is printed for half A and half B. The targets (issue 43): of the
"not found" answers, at least 60 % honest (no accepted source holds a gold answer: ``not_found_honest``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from saturate.bench.natural import hit as natural_hit
from saturate.bench.research import answer_in, exact_match, half_of, load_jsonl, open_corpus, token_f1
from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.paths import eval_data, home_dir
from saturate.nodes._answer import answer_task
from saturate.nodes._model import ModelUsage
from saturate.nodes.reading.answer import doc_meaning
from saturate.nodes.reading.extractive import NOT_ANSWERED
from saturate.nodes.reading.question import stems
from saturate.nodes.reading.reader import shipped_reader
from saturate.nodes.reading.slots import result_texts
from saturate.state.argtypes import non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

SETS = ("musique", "hotpotqa", "webq")
GRID = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3)
CONFIDENT_GRID = (0.1, 0.12, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
WORDS_GRID = (0, 4, 5, 6, 7, 8, 9, 10, 12)  # reader_rules_words (0: never)
HIDDEN_MAX = 0.1  # the share of a set's right answers (half A) that "not found" may hide at ``reader_min_p``
ANSWERED_PRECISION = 0.6
NOT_FOUND_HONEST_MIN = 0.60
EVERYDAY = Path(__file__).with_name("everyday.jsonl")


@dataclass
class Reading:
    task_id: str
    half: str
    by_reader: bool  # the reader answered (single questions); else the extractive rules did (multi-hop, comparisons)
    p: float  # the reader's confidence that its best sentence answers (1.0 for the rules: no threshold applies)
    hit: bool  # a gold answer in the answer given with no threshold
    said_not_found: bool  # the answer given with no threshold says "not found" (the rules' own "not found")
    in_sources: bool
    em: float
    f1: float
    seconds: float
    other_hit: bool | None = None  # the other way's answer (the reader's for the rules' questions, and back)
    other_not_found: bool | None = None  # the other way's answer says "not found"
    words: int = 0  # the question's content words (``reading.answer.long_question``)


def other_way(task: str, results: list[dict], texts: dict[str, str], by_reader: bool, source=None) -> str:
    """The answer the other way would give from the same accepted results: the reader (no threshold, its best
    sentence then the rules', read as a session reads: ``doc_meaning`` of ``source``) for a question the rules
    answered, the rules alone for one the reader answered."""
    usage = ModelUsage("decide")
    reader = None if by_reader else shipped_reader()
    meaning = doc_meaning(reader, source, task, results)
    return answer_task(task, results, texts, None, usage, None, reader, 0.0, meaning=meaning).answer


def read_task(graph, source, task: dict, overrides: dict, seed: int, embeddings, multi_hop: bool) -> Reading:
    # no threshold in the session: "not found" and the long questions' rules answer are applied offline (``at``)
    settings = load_settings({"seed": seed, **overrides, "reader_min_p": 0.0, "reader_rules_words": 0}, env={})
    t0 = time.perf_counter()
    out = graph.invoke(initial_state(task["question"], settings), context=Context(source=source, embeddings=embeddings))
    seconds = time.perf_counter() - t0
    results = list((out.get("results") or {}).values())
    texts = result_texts(source, results)
    result = out.get("result") or {}
    debug = result.get("debug") or {}
    answer = result.get("answer", "")
    golds = [g for g in task.get("answers") or [] if g]
    short = result.get("short_answer", "")
    found = answer_in if multi_hop else natural_hit
    retrieved = " ".join(f"{r.get('title', '')} {texts.get(r['url']) or r.get('snippet', '')}" for r in results)
    by_reader = debug.get("answer") == "reader"
    other = other_way(task["question"], results, texts, by_reader, source) if results else ""
    return Reading(
        task_id=str(task.get("id", seed)),
        half=half_of(str(task.get("id", seed))),
        by_reader=by_reader,
        p=round(float(debug.get("reader_p") or 0.0), 6) if by_reader else 1.0,
        hit=found(answer, golds),
        said_not_found=answer.startswith(NOT_ANSWERED),
        in_sources=found(retrieved, golds),
        em=exact_match(short, golds),
        f1=round(token_f1(short, golds), 4),
        seconds=seconds,
        other_hit=found(other, golds) if results else None,
        other_not_found=other.startswith(NOT_ANSWERED) if results else None,
        words=len(stems(task["question"])),
    )


def at(runs: list[Reading], t: float, confident: float = 0.0, words: int = 0) -> dict:
    """The figures of ``runs`` when the reader's questions whose confidence is below ``t`` say "not found" (those of
    ``words`` content words or more get the rules' answer instead, as likely; 0: none; above ``t`` the rules'
    sentences lead theirs) and those from ``confident`` on are answered (the rest likely)."""
    n = len(runs) or 1

    def routed(r: Reading) -> bool:  # nothing plausible read for a long question: the rules' answer
        return r.by_reader and (r.p < t or r.said_not_found) and words > 0 and r.words >= words

    def nf(r: Reading) -> bool:
        if routed(r):
            return bool(r.other_not_found)
        return r.said_not_found or (r.by_reader and r.p < t)

    def led(r: Reading) -> bool:  # a long question read as plausible: the rules' sentences lead, the reader's follow
        return r.by_reader and not nf(r) and words > 0 and r.words >= words and r.other_not_found is False

    def hit(r: Reading) -> bool:
        if routed(r):
            return bool(r.other_hit) and not r.other_not_found
        if led(r):  # the rules' answer alone: what the reader's sentences after it add is not counted
            return bool(r.other_hit)
        return r.hit and not nf(r)

    said_nf = [r for r in runs if nf(r)]
    sure = [r for r in runs if r.by_reader and not nf(r) and not routed(r) and r.p >= confident]
    likely = [r for r in runs if r.by_reader and not nf(r) and (routed(r) or r.p < confident)]

    no_gold = [r for r in runs if not r.in_sources]
    held = [r for r in runs if r.hit]  # the answer given with no threshold holds a gold answer
    return {
        "answer": round(sum(hit(r) for r in runs) / n, 4),
        "right": round(sum((not r.in_sources) if nf(r) else hit(r) for r in runs) / n, 4),
        "not_found": round(sum(nf(r) for r in runs) / n, 4),
        "not_found_no_gold": round(sum(nf(r) for r in no_gold) / len(no_gold), 4) if no_gold else None,
        "not_found_answered": round(sum(nf(r) for r in held) / len(held), 4) if held else None,
        "not_found_honest": round(sum(not r.in_sources for r in said_nf) / len(said_nf), 4) if said_nf else None,
        "answered": round(len(sure) / n, 4),
        "answered_precision": round(sum(hit(r) for r in sure) / len(sure), 4) if sure else None,
        "likely": round(len(likely) / n, 4),
        "likely_precision": round(sum(hit(r) for r in likely) / len(likely), 4) if likely else None,
        "by_rules_likely": round(sum(routed(r) and not nf(r) for r in runs) / n, 4),
        "em": round(sum(r.em for r in runs if not nf(r) and not routed(r)) / n, 4),
        "f1": round(sum(r.f1 for r in runs if not nf(r) and not routed(r)) / n, 4),
        "in_sources": round(sum(r.in_sources for r in runs) / n, 4),
        "by_reader": round(sum(r.by_reader for r in runs) / n, 4),
        # the rules' questions (multi-hop, comparisons): a gold answer in their answer, and in the reader's
        "rules_q_hit": _share([r.hit for r in runs if not r.by_reader]),
        "rules_q_reader_hit": _share([bool(r.other_hit) for r in runs if not r.by_reader]),
        "tasks": len(runs),
    }


def _share(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def choose(per_set: dict[str, list[Reading]], half: str = "A") -> float:
    """The threshold with the most ``right`` on ``half``, each set weighing the same, among those that hide at most
    ``HIDDEN_MAX`` of each set's right answers there; the lowest among ties."""

    def figures(t: float) -> list[dict]:
        return [at([r for r in runs if r.half == half], t) for runs in per_set.values()]

    allowed = [t for t in GRID if all((f["not_found_answered"] or 0.0) <= HIDDEN_MAX for f in figures(t))] or [0.0]
    return max(allowed, key=lambda t: (round(sum(f["right"] for f in figures(t)), 6), -t))


def choose_confident(per_set: dict[str, list[Reading]], min_p: float, half: str = "A") -> float:
    """The lowest ``CONFIDENT_GRID`` value from which the reader's answered questions of ``half`` (all sets together)
    hold a gold answer at least ``ANSWERED_PRECISION`` of the time; the highest when none does."""
    runs = [r for rs in per_set.values() for r in rs if r.half == half and r.by_reader and not r.said_not_found]
    for c in CONFIDENT_GRID:
        sure = [r for r in runs if r.p >= max(c, min_p)]
        if sure and sum(r.hit for r in sure) / len(sure) >= ANSWERED_PRECISION:
            return c
    return CONFIDENT_GRID[-1]


def choose_words(per_set: dict[str, list[Reading]], min_p: float, half: str = "A") -> int:
    """``reader_rules_words``: the ``WORDS_GRID`` value with the most ``right`` on ``half`` at ``min_p``, each set
    weighing the same; among ties never (0), else the longest questions only."""

    def score(k: int) -> float:
        return sum(at([r for r in runs if r.half == half], min_p, words=k)["right"] for runs in per_set.values())

    return max(WORDS_GRID, key=lambda k: (round(score(k), 6), k == 0, k))


def tasks_of(name: str, data: Path, limit: int | None) -> list[dict]:
    path = data / name / "tasks.jsonl"
    if not path.exists():
        raise InputError(f"file not found: {path}")
    tasks = load_jsonl(path)
    return tasks[:limit] if limit else tasks


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=None, help="folder holding the sets (default: $SATURATE_EVAL_DATA)")
    p.add_argument("--set", choices=SETS, action="append", help="only these sets (repeatable)")
    p.add_argument("--limit", type=positive_int, help="only the first N questions of each set")
    p.add_argument(
        "--everyday", action="store_true", help="also the 20 everyday questions (saturate/bench/everyday.jsonl)"
    )
    p.add_argument("--seed", type=non_negative_int, default=1, help="base seed (question i uses seed+i)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(overrides={})


def everyday(graph, source, overrides: dict, embeddings) -> list[dict]:
    """The everyday questions, each right when answered with a gold answer or, with none listed, "not found"."""
    out = []
    for i, task in enumerate(load_jsonl(EVERYDAY)):
        settings = load_settings({"seed": i, **overrides}, env={})
        state = graph.invoke(
            initial_state(task["question"], settings), context=Context(source=source, embeddings=embeddings)
        )
        result = state.get("result") or {}
        answer = result.get("answer", "")
        golds = task.get("answers") or []
        answered = bool((result.get("debug") or {}).get("answered", True))
        right = natural_hit(answer, golds) if golds else not answered
        out.append({"question": task["question"], "right": right, "answered": answered, "answer": answer})
    return out


def run(args) -> int:
    data = eval_data(args.data)
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    names = args.set or list(SETS)
    overrides = dict(getattr(args, "overrides", None) or {})
    settings = load_settings(overrides)
    embeddings = resolve_embeddings(settings, home=home_dir())
    index = home_dir() / "index"
    graph = build_graph()
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.json else (lambda m: None)
    t0 = time.perf_counter()
    per_set: dict[str, list[Reading]] = {}
    for name in names:
        tasks = tasks_of(name, data, args.limit)
        corpus = None if name == "webq" else data / name / "corpus.jsonl"
        source = open_corpus(corpus, index, settings)
        per_set[name] = [
            read_task(graph, source, t, overrides, args.seed + i, embeddings, name != "webq")
            for i, t in enumerate(tasks)
        ]
        say(f"{name}: {len(tasks)} questions read")
    chosen = choose(per_set)
    confident = choose_confident(per_set, chosen)
    words = choose_words(per_set, chosen)
    out: dict = {
        "chosen_min_p": chosen,
        "default_min_p": settings.reader_min_p,
        "chosen_confident_p": confident,
        "default_confident_p": settings.reader_confident_p,
        "chosen_rules_words": words,
        "default_rules_words": settings.reader_rules_words,
        "sets": {},
    }
    for name, runs in per_set.items():
        halves = {h: [r for r in runs if r.half == h] for h in ("A", "B")}
        out["sets"][name] = {
            "chosen": {
                "all": at(runs, chosen, confident, words),
                **{h: at(rs, chosen, confident, words) for h, rs in halves.items()},
            },
            "default": {
                "all": at(runs, settings.reader_min_p, settings.reader_confident_p, settings.reader_rules_words)
            },
            "grid": {str(t): {h: at(rs, t)["right"] for h, rs in halves.items()} for t in GRID},
            "words_grid": {
                str(k): {h: at(rs, chosen, words=k)["right"] for h, rs in halves.items()} for k in WORDS_GRID
            },
            "seconds": round(sum(r.seconds for r in runs) / (len(runs) or 1), 4),
        }
    if args.everyday:
        source = open_corpus(None, index, settings)
        # at the threshold chosen here (the default is that choice, unless --reader-min-p says otherwise)
        rows = everyday(
            graph,
            source,
            {"reader_min_p": chosen, "reader_confident_p": confident, "reader_rules_words": words, **overrides},
            embeddings,
        )
        out["everyday"] = {"right": sum(r["right"] for r in rows), "questions": len(rows), "rows": rows}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        out["runs"] = {n: [asdict(r) for r in rs] for n, rs in per_set.items()}
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"== reader: min_p chosen on half A = {chosen} (the default is {settings.reader_min_p}); confident_p chosen "
        f"on half A = {confident} (the default is {settings.reader_confident_p}); rules_words chosen on half A = "
        f"{words} (the default is {settings.reader_rules_words}); cells: all (A / B)"
    )
    cols = (
        "answer",
        "right",
        "not_found",
        "not_found_honest",
        "not_found_answered",
        "answered",
        "answered_precision",
        "likely_precision",
        "by_rules_likely",
        "em",
        "f1",
        "by_reader",
        "rules_q_hit",
        "rules_q_reader_hit",
    )
    print(f"{'set':<10}" + "".join(f"{c:>22}" for c in cols))
    for name, s in out["sets"].items():
        cells = []
        for c in cols:
            vals = [s["chosen"][k][c] for k in ("all", "A", "B")]
            cells.append("–" if vals[0] is None else f"{vals[0]:.3f} ({vals[1] or 0:.2f}/{vals[2] or 0:.2f})")
        print(f"{name:<10}" + "".join(f"{c:>22}" for c in cells))
    print(
        "right (A / B) by threshold: "
        + "  ".join(
            f"{t}: "
            + "/".join(
                f"{sum(out['sets'][n]['grid'][str(t)][h] for n in per_set) / len(per_set):.3f}" for h in ("A", "B")
            )
            for t in GRID
        )
    )
    print(
        f"right (A / B) by rules_words at min_p {chosen} (0: never): "
        + "  ".join(
            f"{k}: "
            + "/".join(
                f"{sum(out['sets'][n]['words_grid'][str(k)][h] for n in per_set) / len(per_set):.3f}"
                for h in ("A", "B")
            )
            for k in WORDS_GRID
        )
    )
    for name, s in out["sets"].items():
        honest = [s["chosen"][h]["not_found_honest"] for h in ("A", "B")]
        met = all(h is None or h >= NOT_FOUND_HONEST_MIN for h in honest)
        print(
            f"target ({name}): of the 'not found' answers, honest (no source holds a gold answer) A / B "
            f"{' / '.join('–' if h is None else f'{h:.2f}' for h in honest)} (>= {NOT_FOUND_HONEST_MIN}) "
            f"{'met' if met else 'NOT MET'}"
        )
    if args.everyday:
        e = out["everyday"]
        print(f"everyday questions: {e['right']}/{e['questions']} answered right or honestly not found")
        for r in e["rows"]:
            print(f"  {'ok ' if r['right'] else 'NO '} {r['question']}  ->  {r['answer'][:110]}")
    given = sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:]
    print(f"command: saturate bench {' '.join(given)}".rstrip())
    print(f"wall time {out['seconds']} s")
    return 0
