"""``saturate bench [research|perf|model|verify|multi|batch|natural|tune|retrieval|reader|brief|real-model] ...``.

Each kind is a module ``saturate.bench.<kind>`` with ``add_arguments(parser)`` and
``run(args)``; ``research`` is the default, so its flags are also those of ``bench`` itself.
The benchmark modules import LangGraph, so the parser adds their flags only when ``bench`` is
the command being parsed (``add_arguments`` is the bench parser's ``add_later``).
"""

from __future__ import annotations

import argparse
from types import ModuleType

from saturate.cli.settings import add_setting_flags, setting_overrides

KINDS = {
    "research": "retrieval policies on multi-hop sets (the default)",
    "perf": "performance figures with baselines",
    "model": "model calls per accepted/rejected round, heuristic vs model novelty",
    "verify": "the claim decision rule on recorded search hits",
    "multi": "single loop vs multi-source, side by side",
    "batch": "saturate batch throughput: 1/2/4 workers on SQLite and PostgreSQL",
    "natural": "natural questions on the embedded corpus: the loop against one search",
    "tune": "the gate's defaults and the slot weights, chosen on half A, reported on A and B",
    "retrieval": "words against words and meaning: recall, answer-bearing sources, the fusion weight",
    "reader": "the trained reader: its two thresholds chosen on half A, reported on A and B; everyday questions",
    "brief": "the brief: gold paragraphs of multi-hop questions and facts of open ones it holds, chosen on half A",
    "real-model": "the same public questions with no model and with a real model (--model), side by side",
}
SETTING_KINDS = (
    "research",
    "natural",
    "tune",
    "retrieval",
    "reader",
    "brief",
    "real-model",
)  # kinds that take --<setting> VALUE for their sessions


def bench_module(kind: str) -> ModuleType:
    # heavy: the benchmark modules import LangGraph; imported when `saturate bench` is parsed
    from saturate.bench import (
        batch,
        brief,
        model,
        multi,
        natural,
        perf,
        reader,
        real_model,
        research,
        retrieval,
        tune,
        verify,
    )

    modules = {
        "research": research,
        "perf": perf,
        "model": model,
        "verify": verify,
        "multi": multi,
        "batch": batch,
        "natural": natural,
        "tune": tune,
        "retrieval": retrieval,
        "reader": reader,
        "brief": brief,
        "real-model": real_model,
    }
    return modules[kind]


def add_arguments(bench: argparse.ArgumentParser) -> None:
    """The bench kinds as sub-commands, each with its module's flags; research's also on ``bench``."""
    kinds = bench.add_subparsers(dest="bench_kind", parser_class=type(bench))
    for kind, help in KINDS.items():
        sub = kinds.add_parser(kind, help=help)
        bench_module(kind).add_arguments(sub)
        if kind in SETTING_KINDS:
            add_setting_flags(sub)
    bench_module("research").add_arguments(bench)
    add_setting_flags(bench)  # research is the default kind: `saturate bench --rerank embedding`


def cmd_bench(args: argparse.Namespace) -> int:
    kind = getattr(args, "bench_kind", None) or "research"
    if kind in SETTING_KINDS:
        args.overrides = setting_overrides(args)  # applied to every policy
    return bench_module(kind).run(args)
