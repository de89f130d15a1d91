"""The final states of the performance benchmark's sessions, digested: run it before and after a change that must not
change answers or stops (a cut in what a session costs, issue 46) and compare.

    python -m saturate.bench.perf.states BEFORE.json                        # write the digests
    python -m saturate.bench.perf.states AFTER.json --against BEFORE.json   # and name every session that differs

The sessions, all seeded as the benchmark seeds them:

- ``cli``: the questions of ``session_cpu_s`` as ``saturate research QUESTION --seed 7 --thread ...`` in one data
  folder, the final state read back from its checkpoints (``session_state``);
- ``sessions``: the musique questions of ``sessions_per_s`` (the embedded corpus's questions without the evaluation
  data) as default sessions on a SqliteSaver, both the state ``invoke`` returns and the one checkpointed;
- ``fixed``: the same questions as the fixed 5-round sessions of ``graph_overhead_ms_per_round``;
- ``reader``: the questions of ``reader_added_ms`` with the reader, with ``reader rules`` and with the brief.

A digest is ``perf.throughput.state_digest``: the sha256 of the state's JSON without its wall-clock fields
(``durations_ms``, ``ms``) and private keys. Exits 1 when ``--against`` finds a difference.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from langchain_core.runnables import RunnableConfig

from saturate.bench.perf.common import (
    ROOT,
    SEED,
    clean_env,
    saturate_command,
    session_tasks,
    task_corpus,
    task_corpus_file,
)
from saturate.bench.perf.overhead import fixed_settings
from saturate.bench.perf.session_cpu import QUESTIONS
from saturate.bench.perf.throughput import state_digest
from saturate.bench.perf.vectors import session_questions
from saturate.graph.build import build_graph
from saturate.graph.session import open_checkpointer
from saturate.sources import SqlitePageStore, open_wiki
from saturate.state.argtypes import positive_int
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings


def cli_states(work: Path) -> dict[str, str]:
    from saturate import session_state  # the session layer reads the checkpoints back

    base, _ = saturate_command()
    home = work / "cli-home"
    out = {}
    for i, q in enumerate(QUESTIONS):
        thread = f"states-cli-{i}"
        cmd = base + ["research", q, "--seed", str(SEED), "--thread", thread, "--quiet"]
        subprocess.run(cmd, env=clean_env(home), cwd=ROOT, check=True, capture_output=True)
        out[f"cli/{i}/{q}"] = state_digest(session_state(thread, home=home))
    return out


def graph_states(work: Path, n: int) -> dict[str, str]:
    source, _ = task_corpus(work / "index", task_corpus_file())
    out = {}
    for kind, settings in (("sessions", load_settings({"seed": SEED}, env={})), ("fixed", fixed_settings())):
        home = work / kind
        home.mkdir(parents=True, exist_ok=True)
        context = Context(source=source, pages=SqlitePageStore(home / "pages.db"))
        with open_checkpointer(home) as saver:
            graph = build_graph(checkpointer=saver)
            for i, task in enumerate(session_tasks(n)):
                cfg: RunnableConfig = {"configurable": {"thread_id": f"{kind}-{i}"}, "recursion_limit": 1000}
                st = graph.invoke(initial_state(task, settings), cfg, context=context, durability="sync")
                out[f"{kind}/{i}/{task}"] = state_digest(st)
                out[f"{kind}/{i}/checkpointed"] = state_digest(graph.get_state(cfg).values)
    return out


def reader_states(work: Path, quick: bool) -> dict[str, str]:
    corpus = open_wiki(work / "index")
    graph = build_graph()
    arms = {"rules": {"reader": "rules", "brief": False}, "reader": {"brief": False}, "brief": {}}
    out = {}
    for name, extra in arms.items():
        for i, q in enumerate(session_questions(quick)):
            settings = load_settings({"seed": SEED + i, **extra}, env={})
            st = graph.invoke(initial_state(q, settings), context=Context(source=corpus))
            out[f"reader-{name}/{i}/{q}"] = state_digest(st)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m saturate.bench.perf.states", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("out", help="where the digests are written (JSON)")
    parser.add_argument("--against", help="digests written before: every session that differs is named")
    parser.add_argument(
        "--sessions", type=positive_int, default=60, help="questions of the sessions and fixed ways (60)"
    )
    parser.add_argument("--quick", action="store_true", help="fewer reader questions")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="saturate-states-") as tmp:
        work = Path(tmp)
        digests = {**cli_states(work), **graph_states(work, args.sessions), **reader_states(work, args.quick)}
    Path(args.out).write_text(json.dumps(digests, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(digests)} final states digested into {args.out}")
    if not args.against:
        return 0
    before = json.loads(Path(args.against).read_text(encoding="utf-8"))
    differ = [k for k in before if digests.get(k) != before[k]] + [k for k in digests if k not in before]
    for key in differ:
        print(f"differs: {key}")
    print(f"{len(before) - len(differ)} of {len(before)} identical" if differ else f"all {len(before)} identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
