"""The research benchmark: retrieval policies on closed-corpus multi-hop question sets, offline.

    saturate bench --data DIR             # musique + hotpotqa of the evaluation data, every policy
    saturate bench --set musique --limit 20
    saturate bench --tasks T.jsonl --corpus C.jsonl --json

A task file holds ``{"id", "question", "answers": [...], "gold_ids": [...]}`` per line;
a corpus file ``{"id", "title", "text"}`` (the format of the evaluation data). For every
policy, every task runs as a real session of the graph (no checkpointer, no search
cache, so timings compare), and per-task means are reported:

- ``gold_recall``: share of the task's gold paragraphs among the accepted results;
- ``answer_recall``: share of tasks where an answer string occurs in the retrieved text
  (the full text of the accepted documents);
- ``answer_in_answer``: share of tasks where a gold answer string occurs in the final answer
  text, both normalised as SQuAD's evaluation does (lower case, no punctuation, no articles,
  single spaces) — what a user sees; ``answer_chars``: the answer's mean length;
- ``searches``: source searches (quality-floor retries included), ``model_calls``, ``seconds``.

Policies: ``fixed-1`` … ``fixed-5`` (exactly N rounds: ``fixed-2`` is the seed's dual search,
``fixed-4`` a popular peer's effective default, ``fixed-5`` the cap), ``seed-heuristic`` (the
gate scoring novelty against the 1,500-char summary, as the seed did), ``saturate`` (the
default gate), and ``oracle``: on the fixed-5 trajectories, stop right after the last round
that added a gold paragraph (its searches are those rounds' searches, retries included).

The gate's worth is its recall against fixed-N **at the same mean searches**: the fixed-N
points are interpolated linearly at the gate's mean searches and the difference is printed
(``gain_vs_fixed``, in recall points). ``--<setting> VALUE`` applies a setting to every
policy (as ``saturate research`` does), e.g. ``--novelty-method embedding --rerank embedding``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import string
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from saturate.graph.api import InputError
from saturate.graph.batch import MAX_TASK_LINE_BYTES
from saturate.graph.build import build_graph
from saturate.graph.embeddings import resolve_embeddings, retrieval_meaning
from saturate.graph.paths import eval_data, home_dir
from saturate.monitor.core import Monitor
from saturate.monitor.harness import task_recalls
from saturate.monitor.score import regression_pass_rate
from saturate.sources.local import LocalCorpus
from saturate.sources.wiki import open_wiki
from saturate.state.argtypes import non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.files import MAX_EVAL_FILE_BYTES, bounded_jsonl, output_path, regular_file, user_path, write_output
from saturate.state.graph_state import initial_state
from saturate.state.records import SearchResult
from saturate.state.settings import load_settings

SETS = ("musique", "hotpotqa")

FIXED = tuple(f"fixed-{n}" for n in range(1, 6))
POLICIES: dict[str, dict] = {
    **{f"fixed-{n}": {"mode": "fixed", "fixed_rounds": n} for n in range(1, 6)},
    "seed-heuristic": {"novelty_method": "seed-heuristic", "exclude_seen": False},
    "saturate": {},
}
# Targets of the issue, on default settings with no model ...
RECALL_AT_5_TARGET = {"musique": 0.86, "hotpotqa": 0.985}
KEEP_RECALL_SHARE = 0.98  # the gate keeps >= 98 % of the 5-search recall ...
SEARCH_SHARE_MAX = 0.60  # ... with <= 60 % of its searches ...
GAIN_VS_FIXED = 0.02  # ... and beats fixed-N at the same mean searches by >= 2 recall points
ANSWER_IN_ANSWER_TARGET = {"musique": 0.45, "hotpotqa": 0.80}
ANSWER_CHARS_MAX = 400
# ... and with sentence embeddings (--rerank embedding --novelty-method embedding)
EMBED_RECALL_AT_5_TARGET = {"musique": 0.88, "hotpotqa": 0.985}
EMBED_SEARCH_SHARE_MAX = 0.65


@dataclass
class TaskRun:
    task_id: str
    gold_recall: float
    answer_hit: bool
    searches: int
    model_calls: int
    seconds: float
    rounds: int
    gold_by_round: list[int] = field(default_factory=list)  # gold paragraphs first added in each round
    searches_by_round: list[int] = field(default_factory=list)  # source searches of each round (retries too)
    judged: int = 0  # rounds on which both novelty judges scored
    agreed: int = 0  # ... and agreed on continue/stop at the threshold
    answer_in_answer: bool | None = None  # a gold answer string is in the final answer text (SQuAD-normalised)
    answer_chars: int | None = None  # None: no answer (the oracle is a stopping point, not a session)
    half: str = ""  # "A" (tuning) or "B" (held out): half_of(task id)
    em: float | None = None  # exact match of the short answer with a gold answer (SQuAD)
    f1: float | None = None  # token F1 of the short answer against the best gold answer (SQuAD)
    yesno: bool | None = None  # a yes/no question: whether the answer says the gold yes/no first


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in (text or "").lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def half_of(task_id: str) -> str:
    """The half of a public set a task belongs to: "A" (tuning) when the SHA-1 of its id is even, else "B" (held
    out). Stable, and independent of the set's order: every threshold is chosen on A and reported on both."""
    return "A" if int(hashlib.sha1(str(task_id).encode()).hexdigest(), 16) % 2 == 0 else "B"


def exact_match(short: str, golds: list[str]) -> float:
    """SQuAD exact match: 1.0 when the short answer equals a gold answer, both normalised."""
    s = normalize_answer(short)
    return float(bool(s) and any(s == normalize_answer(g) for g in golds))


def token_f1(short: str, golds: list[str]) -> float:
    """SQuAD token F1 of the short answer against the best-matching gold answer."""
    pred = normalize_answer(short).split()
    best = 0.0
    for g in golds:
        gold = normalize_answer(g).split()
        common = Counter(pred) & Counter(gold)
        same = sum(common.values())
        if same:
            p, r = same / len(pred), same / len(gold)
            best = max(best, 2 * p * r / (p + r))
    return best


def yes_no_right(answer: str, golds: list[str]) -> bool | None:
    """For a question whose gold answer is yes or no: whether the answer's first word says it; None otherwise."""
    gold = {normalize_answer(g) for g in golds}
    if not gold or not gold <= {"yes", "no"}:
        return None
    first = normalize_answer(answer).split()[:1]
    return bool(first) and first[0] in gold


def answer_in(answer: str, golds: list[str]) -> bool:
    """Whether a gold answer occurs in the answer text as whole words, both SQuAD-normalised."""
    norm = f" {normalize_answer(answer)} "
    return any(g and f" {g} " in norm for g in (normalize_answer(a) for a in golds))


def load_jsonl(path: Path) -> list[dict]:
    """The records of a benchmark's JSONL task file (the evaluation data's, or one given instead); InputError, one
    line, for anything unusable: not a regular file (a FIFO, a device), over ``MAX_EVAL_FILE_BYTES``, a line over
    ``MAX_TASK_LINE_BYTES``, not UTF-8, a line that is not a JSON object — read a line at a time (state/files.py)."""
    return [rec for _, rec in bounded_jsonl(path, "task file", InputError, max_line=MAX_TASK_LINE_BYTES)]


def eval_corpus(corpus: Path) -> Path:
    """A benchmark's corpus file checked before it is indexed (a line at a time, each bounded, by sources/local.py):
    a regular file of at most ``MAX_EVAL_FILE_BYTES`` (a FIFO, a device or a 2 GB file is one line); a folder of
    notes is left to the corpus reader."""
    path = user_path(corpus, "corpus", InputError)
    if not path.is_dir():
        regular_file(path, "corpus", InputError, max_bytes=MAX_EVAL_FILE_BYTES)
    return corpus


def run_task(graph, source, task: dict, overrides: dict, seed: int, embeddings=None) -> TaskRun:
    settings = load_settings({"seed": seed, **overrides}, env={})
    t0 = time.perf_counter()
    out = graph.invoke(initial_state(task["question"], settings), context=Context(source=source, embeddings=embeddings))
    seconds = time.perf_counter() - t0
    results = out.get("results") or {}
    answer = (out.get("result") or {}).get("answer", "")
    short = (out.get("result") or {}).get("short_answer", "")
    golds = list(task.get("answers", []))
    gold = set(task["gold_ids"])
    got = {r["id"] for r in results.values()}
    texts = []
    for r in results.values():
        try:
            texts.append(source.fetch(SearchResult.model_validate(r)))
        except Exception:  # a document the corpus no longer has: its snippet is what was retrieved
            texts.append(r.get("snippet", ""))
    blob = " ".join(texts).lower()
    by_round, searches_by_round, judged, agreed = [], [], 0, 0
    for rec in out["records"]:
        ids = {results[u]["id"] for u in rec.get("new_urls", []) if u in results}
        by_round.append(len(ids & gold))
        searches_by_round.append(rec.get("searches") or 1 + bool(rec.get("quality_retry")))
        for alt in (rec.get("novelty_detail") or {}).get("alt", {}).values():
            judged += 1
            agreed += (rec["novelty"] >= settings.novelty_threshold) == (alt >= settings.novelty_threshold)
    return TaskRun(
        task_id=task["id"],
        gold_recall=len(got & gold) / len(gold) if gold else 1.0,
        answer_hit=any(a.lower() in blob for a in task.get("answers", []) if a),
        searches=len(out.get("queries") or []),
        model_calls=sum(r.get("model_calls", 0) for r in out["records"]),
        seconds=seconds,
        rounds=len(out["records"]),
        gold_by_round=by_round,
        searches_by_round=searches_by_round,
        judged=judged,
        agreed=agreed,
        answer_in_answer=answer_in(answer, golds),
        answer_chars=len(answer),
        half=half_of(task["id"]),
        em=exact_match(short, golds),
        f1=round(token_f1(short, golds), 4),
        yesno=yes_no_right(answer, golds),
    )


def oracle_from(run: TaskRun, task: dict) -> TaskRun:
    """Stop right after the last round that added a gold paragraph (at least one round); its searches are
    those rounds' own (the round-1 quality-floor retry included)."""
    last = max((i + 1 for i, g in enumerate(run.gold_by_round) if g), default=1)
    n_gold = len(task["gold_ids"]) or 1
    return TaskRun(
        task_id=run.task_id,
        gold_recall=sum(run.gold_by_round[:last]) / n_gold,
        answer_hit=run.answer_hit,
        searches=sum(run.searches_by_round[:last]),
        model_calls=0,
        seconds=run.seconds * last / max(1, run.rounds),
        rounds=last,
        gold_by_round=run.gold_by_round[:last],
        searches_by_round=run.searches_by_round[:last],
        half=run.half,
    )


def _mean(values: list, digits: int) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), digits) if known else None


def summarize(runs: list[TaskRun], halves: bool = True) -> dict:
    n = len(runs) or 1
    yesno = [r.yesno for r in runs if r.yesno is not None]
    out = {
        "gold_recall": round(sum(r.gold_recall for r in runs) / n, 4),
        "answer_recall": round(sum(r.answer_hit for r in runs) / n, 4),
        "answer_in_answer": _mean([r.answer_in_answer for r in runs], 4),
        "answer_chars": _mean([r.answer_chars for r in runs], 1),
        "searches": round(sum(r.searches for r in runs) / n, 3),
        "rounds": round(sum(r.rounds for r in runs) / n, 3),
        "model_calls": round(sum(r.model_calls for r in runs) / n, 3),
        "seconds": round(sum(r.seconds for r in runs) / n, 5),
        "full_recall_share": round(sum(r.gold_recall >= 1.0 for r in runs) / n, 4),
        "em": _mean([r.em for r in runs], 4),
        "f1": _mean([r.f1 for r in runs], 4),
        "yesno": round(sum(yesno) / len(yesno), 4) if yesno else None,
        "yesno_tasks": len(yesno),
        "tasks": len(runs),
    }
    if halves:
        out["halves"] = {h: summarize([r for r in runs if r.half == h], halves=False) for h in ("A", "B")}
    return out


def run_set(name: str, tasks: list[dict], source, seed: int, policies=POLICIES, progress=None, embeddings=None) -> dict:
    graph = build_graph()
    per_policy: dict[str, list[TaskRun]] = {}
    for policy, overrides in policies.items():
        runs = []
        for i, task in enumerate(tasks):
            runs.append(run_task(graph, source, task, overrides, seed + i, embeddings))
        per_policy[policy] = runs
        if progress:
            progress(f"{name}: {policy} done ({len(runs)} tasks)")
    if "fixed-5" in per_policy:
        per_policy["oracle"] = [oracle_from(r, t) for r, t in zip(per_policy["fixed-5"], tasks)]
    summary = {p: summarize(r) for p, r in per_policy.items()}
    out = {"policies": summary, "runs": per_policy}
    if "fixed-5" in per_policy and "saturate" in per_policy:
        out["stopping"] = {
            h: stopping(
                [r for r in per_policy["saturate"] if h in ("all", r.half)],
                [r for r in per_policy["fixed-5"] if h in ("all", r.half)],
            )
            for h in ("all", "A", "B")
        }
    yesno = [r for r in per_policy.get("saturate", []) if r.yesno is not None]
    if yesno:  # the baseline the yes/no rule must beat: always answering "yes"
        gold = {r.task_id: t.get("answers", []) for r, t in zip(per_policy["saturate"], tasks)}
        out["always_yes"] = {
            h: _mean([yes_no_right("yes", gold[r.task_id]) for r in yesno if h in ("all", r.half)], 4)
            for h in ("all", "A", "B")
        }
    return out


def stopping(gate: list[TaskRun], fixed5: list[TaskRun]) -> dict:
    """The gate's stops against each task's fixed-5 trajectory: too early (it stopped before the last round that
    added a gold paragraph, and has less of them than fixed-5), too late (it ran past that round), right; and the
    share of its searches spent after that round."""
    early = late = 0
    wasted = total = 0
    for g, f in zip(gate, fixed5):
        last = max((i + 1 for i, x in enumerate(f.gold_by_round) if x), default=1)
        if g.rounds < last and g.gold_recall < f.gold_recall:
            early += 1
        elif g.rounds > last:
            late += 1
        wasted += sum(g.searches_by_round[last:])
        total += g.searches
    return {
        "tasks": len(gate),
        "too_early": early,
        "too_late": late,
        "right": len(gate) - early - late,
        "wasted_search_share": round(wasted / total, 4) if total else 0.0,
    }


def default_thresholds(name: str, embedding: bool = False) -> dict[str, float]:
    """The issue's targets for a set, as minimums (higher = harder; what the monitor may raise)."""
    share = EMBED_SEARCH_SHARE_MAX if embedding else SEARCH_SHARE_MAX
    out = {
        f"{name}.gate_keeps_recall": KEEP_RECALL_SHARE,
        f"{name}.gate_search_savings": round(1 - share, 4),
        f"{name}.gain_vs_fixed": GAIN_VS_FIXED,
    }
    recall = (EMBED_RECALL_AT_5_TARGET if embedding else RECALL_AT_5_TARGET).get(name)
    if recall is not None:
        out[f"{name}.recall_at_5"] = recall
    if name in ANSWER_IN_ANSWER_TARGET:
        out[f"{name}.answer_in_answer"] = ANSWER_IN_ANSWER_TARGET[name]
    return out


def fixed_curve(summary: dict) -> list[tuple[float, float]]:
    """The fixed-N policies' (mean searches, recall) points, by searches."""
    return sorted((summary[p]["searches"], summary[p]["gold_recall"]) for p in FIXED if p in summary)


def interpolate(curve: list[tuple[float, float]], x: float) -> float | None:
    """Recall of the fixed-N curve at ``x`` mean searches (linear between points, flat beyond the ends)."""
    if not curve:
        return None
    if x <= curve[0][0]:
        return curve[0][1]
    for (x0, y0), (x1, y1) in zip(curve, curve[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0) if x1 > x0 else y1
    return curve[-1][1]


def gain_vs_fixed(summary: dict, policy: str = "saturate") -> float | None:
    """The policy's recall minus fixed-N's at the same mean searches (recall points, 0.01 = 1 point)."""
    s = summary.get(policy)
    if not s:
        return None
    at = interpolate(fixed_curve(summary), s["searches"])
    return None if at is None else round(s["gold_recall"] - at, 4)


def check_targets(
    name: str,
    summary: dict,
    thresholds: dict[str, float] | None = None,
    base: str | None = None,
    embedding: bool = False,
    always_yes: float | None = None,
) -> dict:
    """Targets met by one set's summary. Thresholds are looked up as ``<base>.<target>`` (``base``: the set a
    derived benchmark comes from), falling back to the issue's defaults (``embedding``: the targets for
    ``--rerank embedding --novelty-method embedding``)."""
    base = base or name
    th = {**default_thresholds(base, embedding), **(thresholds or {})}
    out = {}

    def target(key: str, value: float | None, at_most: bool = False) -> None:
        t = ANSWER_CHARS_MAX if at_most else th.get(f"{base}.{key}")
        if t is None or value is None:
            return
        out[key] = {"value": round(value, 4), "target": t, "met": value <= t if at_most else value >= t}
        if at_most:
            out[key]["at_most"] = True

    f5, sat = summary.get("fixed-5"), summary.get("saturate")
    if f5:
        target("recall_at_5", f5["gold_recall"])
    if f5 and sat:
        target("gate_keeps_recall", sat["gold_recall"] / f5["gold_recall"] if f5["gold_recall"] else 1.0)
        target("gate_search_savings", 1 - sat["searches"] / f5["searches"] if f5["searches"] else 0.0)
        if len(fixed_curve(summary)) >= 2:
            target("gain_vs_fixed", gain_vs_fixed(summary))
    if sat:
        target("answer_in_answer", sat.get("answer_in_answer"))
        target("answer_chars", sat.get("answer_chars"), at_most=True)
    if sat and sat.get("yesno") is not None and always_yes is not None:
        out["yesno_over_always_yes"] = {
            "value": round(sat["yesno"] - always_yes, 4),
            "target": 0.0,
            "met": sat["yesno"] > always_yes,
        }
    return out


def open_corpus(corpus: Path | None, index_dir: Path, settings=None, progress=None):
    """A benchmark's corpus (None: the embedded one), ranked as ``settings`` say: by words and meaning (the
    default: its vectors built once, or reused) or by words alone; a model that cannot load ranks by words,
    said on stderr."""
    source = LocalCorpus.open(eval_corpus(corpus), index_dir) if corpus is not None else open_wiki(index_dir)
    if settings is not None and settings.retrieval == "hybrid":
        meaning, notes = retrieval_meaning(settings.replace(source="local"), None, progress)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        if meaning is not None:
            source.attach_vectors(meaning.embedder, meaning.identity, settings.hybrid_weight, meaning.progress)
    return source


TABLE = (  # (column, heading)
    ("gold_recall", "recall"),
    ("answer_recall", "ans_retrieved"),
    ("answer_in_answer", "ans_in_answer"),
    ("em", "EM"),
    ("f1", "F1"),
    ("answer_chars", "chars"),
    ("searches", "searches"),
    ("seconds", "seconds"),
)


def _cell(summary: dict, col: str, halves: bool) -> str:
    v = summary.get(col)
    text = "-" if v is None else f"{v:.3g}" if col in ("answer_chars", "seconds") else f"{v:.3f}"
    if halves and summary.get("halves") and v is not None and col not in ("answer_chars", "seconds"):
        a, b = (summary["halves"][h].get(col) for h in ("A", "B"))
        if a is not None and b is not None:
            text += f" ({a:.2f}/{b:.2f})"
    return text


def gain_by_half(summary: dict, half: str, policy: str = "saturate") -> float | None:
    """``gain_vs_fixed`` on one half's own fixed-N curve."""
    sub = {p: s["halves"][half] for p, s in summary.items() if s.get("halves")}
    return gain_vs_fixed(sub, policy) if policy in sub else None


def table(name: str, result: dict) -> str:
    """The set's figures: every cell is "all (A/B)": the whole set, then half A (tuning) / half B (held out)."""
    pols = result["policies"]
    width = 22
    lines = [
        f"== {name} ({next(iter(pols.values()))['tasks']} tasks; cells: all (half A / half B))",
        f"{'policy':<15}" + "".join(f"{h:>{width}}" for _, h in TABLE),
    ]
    for policy, s in pols.items():
        lines.append(f"{policy:<15}" + "".join(f"{_cell(s, c, True):>{width}}" for c, _ in TABLE))
    gain = gain_vs_fixed(pols)
    if gain is not None:
        at = pols["saturate"]["searches"]
        halves = [gain_by_half(pols, h) for h in ("A", "B")]
        by = " / ".join("-" if g is None else f"{100 * g:+.1f}" for g in halves)
        lines.append(f"gate vs fixed-N at {at:.2f} mean searches: {100 * gain:+.1f} recall points (A / B: {by})")
    stop = result.get("stopping")
    if stop:
        parts = [
            f"{h}: too early {x['too_early']}/{x['tasks']}, too late {x['too_late']}/{x['tasks']}, "
            f"{x['wasted_search_share']:.0%} of its searches after the last gold-adding round"
            for h, x in stop.items()
        ]
        lines.append("gate vs each task's fixed-5 trajectory — " + "; ".join(parts))
    sat = pols.get("saturate", {})
    if sat.get("yesno") is not None and result.get("always_yes"):
        ay = result["always_yes"]

        def num(v) -> str:
            return "-" if v is None else f"{v:.2f}"

        halves = " / ".join(num(sat["halves"][h].get("yesno")) for h in ("A", "B"))
        lines.append(
            f"yes/no questions ({sat['yesno_tasks']}): right {sat['yesno']:.3f} (A / B: {halves}); "
            f"always 'yes' {ay['all']:.3f} (A / B: {num(ay['A'])} / {num(ay['B'])})"
        )
    for key, t in result["targets"].items():
        op = "<=" if t.get("at_most") else ">="
        lines.append(f"target {key}: {t['value']:.4g} (target {op} {t['target']:g}) {'met' if t['met'] else 'NOT MET'}")
    return "\n".join(lines)


def plot(results: dict[str, dict], path: Path) -> None:
    # heavy: matplotlib (~0.5 s to import), loaded only when a plot is written; the Agg canvas needs no display
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5 * len(results), 4.2))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(results), squeeze=False)
    for ax, (name, res) in zip(axes[0], results.items()):
        pol = res["policies"]
        fixed = [p for p in FIXED if p in pol]
        ax.plot(
            [pol[p]["searches"] for p in fixed],
            [pol[p]["gold_recall"] for p in fixed],
            "o-",
            color="grey",
            label="fixed N (1–5)",
        )
        for p in fixed:
            ax.annotate(
                p.split("-")[1],
                (pol[p]["searches"], pol[p]["gold_recall"]),
                textcoords="offset points",
                xytext=(0, -12),
                ha="center",
                fontsize=7,
                color="grey",
            )
        markers = {"seed-heuristic": "s", "saturate": "*", "oracle": "D"}
        for p in pol:
            if p not in fixed:
                ax.plot(
                    pol[p]["searches"],
                    pol[p]["gold_recall"],
                    markers.get(p, "^"),
                    markersize=11 if p == "saturate" else 7,
                    label=p,
                )
        ax.set_title(name)
        ax.set_xlabel("searches per task")
        ax.set_ylabel("gold-paragraph recall")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    # as every output path the user names (show --html, ...): its folders made, a FIFO or a device refused
    write_output(path, png.getvalue(), "--plot", InputError)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set",
        choices=SETS,
        action="append",
        help="a set of the evaluation data (default: the harness's enabled benchmarks)",
    )
    p.add_argument("--tasks", type=Path, help="a task file (JSONL); with --corpus")
    p.add_argument("--corpus", type=Path, help="a corpus file (JSONL) for --tasks")
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder holding the sets (default: $SATURATE_EVAL_DATA)",
    )
    p.add_argument(
        "--limit", type=positive_int, help="only the first N tasks of each set (a partial run: no monitor cycle)"
    )
    p.add_argument("--seed", type=non_negative_int, default=1, help="base seed (task i uses seed+i)")
    p.add_argument("--policy", action="append", choices=list(POLICIES), help="only these policies (a partial run)")
    p.add_argument(
        "--plot", type=Path, default=None, help="recall-vs-searches PNG (default: bench-recall.png in the data dir)"
    )
    p.add_argument("--no-monitor", action="store_true", help="do not record this run as a saturation-monitor cycle")
    p.add_argument("--json", action="store_true", help="print JSON: {set: {policies: {...}, targets: {...}}}")
    p.set_defaults(overrides={})  # settings for every policy (--<setting> VALUE, added by the CLI)


def default_harness(data: Path) -> dict:
    """Harness version 1: the shared sets, with the issue's targets as thresholds."""
    thresholds: dict[str, float] = {}
    for name in SETS:
        thresholds.update(default_thresholds(name))
    return {
        "thresholds": thresholds,
        "benchmarks": [
            {
                "name": n,
                "tasks": str(data / n / "tasks.jsonl"),
                "corpus": str(data / n / "corpus.jsonl"),
                "enabled": True,
            }
            for n in SETS
        ],
    }


def _bench_paths(b: dict, data: Path) -> tuple[Path, Path]:
    """A benchmark's files; a shared set whose stored path moved is found under ``--data`` by name."""
    tasks, corpus = Path(b["tasks"]), Path(b.get("corpus") or "")
    base = b.get("derived_from") or b["name"]
    if not corpus.exists() and base in SETS:
        corpus = data / base / "corpus.jsonl"
    if not tasks.exists() and b["name"] in SETS:
        tasks = data / b["name"] / "tasks.jsonl"
    return tasks, corpus


CEILING_RECALL = 0.95  # the monitor's benchmark_ceiling_rate: tasks "scoring > 95 %" (gold recall)


def cycle_metrics(results: dict, previous: dict | None) -> dict:
    """The five monitor metrics of one full run, under the saturation document's names (the mapping:
    ``saturate/monitor/core.py``)."""

    runs = [r for res in results.values() for r in res["runs"].get("saturate", [])]
    now = {
        f"{name}:{r['task_id']}": r["gold_recall"]
        for name, res in results.items()
        for r in res["runs"].get("saturate", [])
    }
    prev = (
        {f"{name}:{tid}": v for name, per in task_recalls(previous).items() for tid, v in per.items()}
        if previous
        else None
    )
    mean = sum(r["gold_recall"] for r in runs) / len(runs) if runs else 0.0
    prev_mean = sum(prev.values()) / len(prev) if prev else None
    targets = [t["met"] for res in results.values() for t in res["targets"].values()]
    judged = sum(r["judged"] for r in runs)
    return {
        "benchmark_ceiling_rate": sum(r["gold_recall"] > CEILING_RECALL for r in runs) / len(runs) if runs else 0.0,
        "regression_pass_rate": regression_pass_rate({k: v for k, v in now.items() if not prev or k in prev}, prev),
        "improvement_delta": None if prev_mean is None else round(mean - prev_mean, 6),
        "proposal_pass_rate": sum(targets) / len(targets) if targets else 0.0,
        "auditor_unanimous_rate": sum(r["agreed"] for r in runs) / judged if judged else 1.0,
    }


def run(args) -> int:
    if (args.tasks is None) != (args.corpus is None):
        raise InputError("--tasks and --corpus go together")
    if args.limit is not None and args.limit < 1:
        raise InputError("--limit must be at least 1")
    if args.plot is not None:  # written at the end: a folder, a FIFO or a device is one line before any session
        output_path(args.plot, "--plot", InputError)
    if args.tasks is None:  # the sets of the evaluation data (with --tasks/--corpus none is needed)
        args.data = eval_data(args.data)
    monitor = None
    partial = bool(args.tasks or args.limit or args.policy or args.set)
    if args.tasks is not None:
        for p in (args.tasks, args.corpus):
            if not p.exists():
                raise InputError(f"file not found: {p}")
        named = {
            args.tasks.stem if args.tasks.stem != "tasks" else args.tasks.parent.name: (args.tasks, args.corpus, None)
        }
        thresholds: dict[str, float] = {}
    else:
        if not args.no_monitor and not partial:
            monitor = Monitor(home=home_dir())
            monitor.init_harness(default_harness(args.data))
            enabled = monitor.enable_next_benchmark()
            if enabled and not args.json:
                print(f"monitor: enabled new benchmark {enabled} for this cycle", file=sys.stderr)
            harness = monitor.harness()
            assert harness is not None  # registered by init_harness above
            config = harness["config"]
        else:
            config = default_harness(args.data)
        thresholds = config["thresholds"]
        wanted = set(args.set or [])
        named = {}
        for b in config["benchmarks"]:
            if not b["enabled"] or (wanted and b["name"] not in wanted):
                continue
            tpath, cpath = _bench_paths(b, args.data)
            if not (tpath.exists() and cpath.exists()):
                raise InputError(f"benchmark {b['name']!r}: {tpath} or {cpath} not found (sets live in {args.data})")
            named[b["name"]] = (tpath, cpath, b)
    policies = {p: POLICIES[p] for p in args.policy} if args.policy else POLICIES
    overrides = dict(getattr(args, "overrides", None) or {})
    settings = load_settings(overrides)  # bad settings are bad input (exit 2) before any work
    embeddings = resolve_embeddings(settings, home=home_dir())
    embedding = settings.rerank == "embedding" and settings.novelty_method == "embedding"
    index_dir = home_dir() / "index"
    results = {}
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.json else None
    t_all = time.perf_counter()
    for name, (tpath, cpath, bench) in named.items():
        tasks = load_jsonl(tpath)
        bad = [i + 1 for i, t in enumerate(tasks) if not {"question", "gold_ids"} <= t.keys()]
        if bad:
            raise InputError(f"{tpath}: line {bad[0]} lacks question/gold_ids")
        if args.limit:
            tasks = tasks[: args.limit]
        source = open_corpus(cpath, index_dir, settings)
        per_policy = {p: {**overrides, **o, **((bench or {}).get("settings") or {})} for p, o in policies.items()}
        res = run_set(name, tasks, source, args.seed, per_policy, progress=say, embeddings=embeddings)
        # the harness's (monitor-raised) thresholds are for the default configuration; with --<setting>
        # overrides the issue's own targets for that configuration apply
        res["targets"] = check_targets(
            name,
            res["policies"],
            {} if overrides else thresholds,
            (bench or {}).get("derived_from"),
            embedding=embedding,
            always_yes=(res.get("always_yes") or {}).get("all"),
        )
        res["runs"] = {p: [asdict(r) for r in runs] for p, runs in res["runs"].items()}
        results[name] = res
    wall = time.perf_counter() - t_all
    public = {
        name: {k: r[k] for k in ("policies", "targets", "stopping", "always_yes") if k in r}
        for name, r in results.items()
    }
    args.plot = args.plot or home_dir() / "bench-recall.png"
    if any(p in policies for p in FIXED):
        plot(public, args.plot)
    cycle = None
    if monitor is not None:
        with monitor:
            previous = monitor.last_snapshot()
            checks = {}
            for name, r in results.items():
                checks.update({f"{name}.{key}": t["met"] for key, t in r["targets"].items()})
                checks[name] = all(t["met"] for t in r["targets"].values())
            judged = monitor.check_new(checks)  # only a freshly applied harness version has new checks
            if judged["action"] == "rolled_back" and not args.json:
                print(f"monitor: {judged['note']}", file=sys.stderr)
            cycle = monitor.record_cycle(cycle_metrics(results, previous), results)
    if args.json:
        out = public if len(public) > 1 else next(iter(public.values()))
        print(json.dumps(out, indent=2))
    else:
        for name, r in results.items():
            print(table(name, r))
            print()
        given = sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:]
        print(f"command: saturate bench {' '.join(given)}".rstrip())
        print(f"wall time {wall:.1f} s; plot: {args.plot}")
        if cycle is not None:
            c = cycle.consistency
            print(
                f"monitor: cycle {cycle.id} recorded — saturation {cycle.score:.3f} ({cycle.level}); "
                f"{c['action']}"
                + (f" ({c['reason']})" if c["reason"] else "")
                + (f": expansion {cycle.expansion_id} awaits approval" if cycle.expansion_id else "")
                + (" — review the harness (saturate monitor)" if c["action"] == "FLAG_FOR_REVIEW" else "")
            )
        elif partial:
            print("monitor: partial run, no cycle recorded")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m saturate.bench.research", description=(__doc__ or "").splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
