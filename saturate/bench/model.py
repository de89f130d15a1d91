"""Model-call benchmark: heuristic vs model novelty on the same scripted session.

    saturate bench model [--tasks N] [--latency-ms 50] [--json]

Runs the same musique questions (or the embedded corpus when $SATURATE_EVAL_DATA
names none) twice through the real ChatOllama client against a scripted
Ollama-protocol server on 127.0.0.1 (``graph.ollama_script``), once with
``novelty_method=heuristic`` and once with ``novelty_method=model``; plan
(``model_plans`` on), compress and decide use the model in both. The scripted novelty judge answers
the share of result words absent from the known text (x10), so both runs make
comparable decisions. Each model reply waits ``--latency-ms`` to stand in for
a local model's generation time.

Reported per method: model calls per accepted and per rejected round, split
into the calls that *judge* the round (its query planning and novelty) and the
calls that *process* it after the gate (compress) — the seed invariant is that
a rejected round is never processed (0) — plus wall time per round and the
latency the model judge adds per round against the heuristic run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from saturate.bench.ollama_script import OllamaScript, OllamaServer
from saturate.bench.research import eval_corpus, load_jsonl
from saturate.graph.api import research, session_state
from saturate.graph.paths import eval_data_if_named
from saturate.sources.local import LocalCorpus
from saturate.sources.wiki import open_wiki
from saturate.state.argtypes import non_negative_float, positive_int
from saturate.state.records import ACCEPTED

JUDGE_NODES = ("plan", "novelty", "fill")
PROCESS_NODES = ("compress",)


def scripted_novelty(request: dict) -> str:
    user = request["messages"][-1]["content"]
    known = set(re.findall(r"\w+", user.split("<known>")[1].split("</known>")[0].lower()))
    got = re.findall(r"\w+", user.split("<results>")[1].split("</results>")[0].lower())
    return str(round(10 * sum(w not in known for w in got) / len(got))) if got else "0"


def delayed(reply, seconds: float):
    return lambda request: {"sleep": seconds, "text": reply(request) if callable(reply) else reply}


def run(args) -> int:
    n = args.tasks
    lat = args.latency_ms / 1000
    with tempfile.TemporaryDirectory() as tmp:
        musique = eval_data_if_named("musique")
        if musique is not None and (musique / "tasks.jsonl").exists():
            source = LocalCorpus.open(eval_corpus(musique / "corpus.jsonl"), Path(tmp) / "index")
            questions = [t["question"] for t in load_jsonl(musique / "tasks.jsonl")[:n]]
        else:
            source = open_wiki(Path(tmp) / "index")
            questions = ["How does photosynthesis work?", "Who built the Great Wall of China?"][:n]
        script = OllamaScript(
            plan=[delayed('{"queries": ["first planned query"]}', lat)],
            gap=[delayed("a gap query", lat)],
            novelty=[delayed(scripted_novelty, lat)],
            compress=[delayed("- merged fact one\n- merged fact two", lat)],
            decide=[delayed("Answer [1].", lat)],
        )
        out = {}
        with OllamaServer(script) as server:
            for method in ("heuristic", "model"):
                calls = {
                    "accepted": {"judge": 0, "process": 0, "rounds": 0},
                    "rejected": {"judge": 0, "process": 0, "rounds": 0},
                }
                seconds, rounds = 0.0, 0
                for i, q in enumerate(questions):
                    t0 = time.perf_counter()
                    research(
                        q,
                        thread_id=f"{method}-{i}",
                        home=tmp,
                        source=source,
                        model="ollama:qwen-test",
                        ollama_host=server.url,
                        novelty_method=method,
                        model_plans=True,
                        seed=i,
                        cache_ttl_s=0,
                    )
                    seconds += time.perf_counter() - t0
                    for rec in session_state(f"{method}-{i}", home=tmp)["records"]:
                        kind = "accepted" if rec["decision"] in ACCEPTED else "rejected"
                        by = rec.get("model_calls_by_node") or {}
                        calls[kind]["rounds"] += 1
                        calls[kind]["judge"] += sum(by.get(k, 0) for k in JUDGE_NODES)
                        calls[kind]["process"] += sum(by.get(k, 0) for k in PROCESS_NODES)
                        rounds += 1
                out[method] = {
                    "rounds": rounds,
                    "seconds_per_round": round(seconds / max(1, rounds), 4),
                    **{f"{kind}_rounds": c["rounds"] for kind, c in calls.items()},
                    **{
                        f"calls_per_{kind}_round_{part}": round(c[part] / c["rounds"], 3) if c["rounds"] else 0.0
                        for kind, c in calls.items()
                        for part in ("judge", "process")
                    },
                }
    out["model_novelty_added_ms_per_round"] = round(
        1000 * (out["model"]["seconds_per_round"] - out["heuristic"]["seconds_per_round"]), 1
    )
    out["rejected_rounds_processed"] = sum(out[m]["calls_per_rejected_round_process"] for m in ("heuristic", "model"))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"command: saturate bench model --tasks {n} --latency-ms {args.latency_ms}")
    cols = (
        "rounds",
        "accepted_rounds",
        "rejected_rounds",
        "calls_per_accepted_round_judge",
        "calls_per_accepted_round_process",
        "calls_per_rejected_round_judge",
        "calls_per_rejected_round_process",
        "seconds_per_round",
    )
    heads = ("rounds", "accepted", "rejected", "acc:judge", "acc:process", "rej:judge", "rej:process", "s/round")
    print(
        f"{'method':<10}"
        + "".join(f"{h:>12}" for h in heads)
        + "   (model calls per round; judge = plan+novelty+fill, process = compress)"
    )
    for m in ("heuristic", "model"):
        print(f"{m:<10}" + "".join(f"{out[m][c]:>12}" for c in cols))
    print(
        f"model novelty adds {out['model_novelty_added_ms_per_round']} ms per round "
        f"(scripted model latency {args.latency_ms} ms per call)"
    )
    print(f"model calls processing rejected rounds: {out['rejected_rounds_processed']} (must be 0)")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks", type=positive_int, default=10, help="questions per method (default 10)")
    p.add_argument(
        "--latency-ms", type=non_negative_float, default=50.0, help="scripted model latency per call (default 50)"
    )
    p.add_argument("--json", action="store_true")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m saturate.bench.model", description=(__doc__ or "").splitlines()[0])
    add_arguments(parser)
    sys.exit(run(parser.parse_args()))
