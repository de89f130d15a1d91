"""Retrieval by meaning, three figures (the embedded corpus, the default offline model):

- ``vector_index_build_s`` (<= 60 s): the 10,033 summaries embedded and stored beside their index, first use
  (``--quick``: 300 of them, extrapolated); baseline: the FTS5 index build of the same corpus; the files'
  sizes beside it.
- ``vector_search_p50_ms`` (<= 10 ms at 10,000 documents): the cosine scan and top-50 of one query vector;
  baselines: FTS5 search on the same queries, a whole hybrid search (the query embedded, both rankings fused);
  its growth measured on synthetic unit vectors at 100,000 and 1,000,000 documents.
- ``hybrid_session_ratio`` (<= 1.5): a default session (words and meaning) against the same session by words
  alone, in process, on the same questions with the indexes in place; the command line's warm ``saturate
  research`` both ways beside it.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

import numpy as np

from saturate.bench.perf.common import (
    SEED,
    Figure,
    Stopwatch,
    baseline,
    clean_env,
    latencies_ms,
    percentile,
    read_jsonl,
    saturate_command,
    time_commands,
    wiki_records,
)
from saturate.graph.build import build_graph
from saturate.graph.embeddings import build_embeddings
from saturate.graph.paths import eval_data_if_named
from saturate.sources.local import LocalCorpus
from saturate.sources.vectors import VectorIndex, unit
from saturate.state.context import Context
from saturate.state.graph_state import initial_state
from saturate.state.settings import load_settings

QUICK_DOCS = 300
GROWTH = (100_000, 1_000_000)
SESSION_QUESTIONS = ("What is the speed of light?", "How do vaccines work?", "Why did the Roman Empire fall?")


def _model(shared: dict):
    if "model" not in shared:
        shared["model"] = build_embeddings(load_settings({}, env={}))
    return shared["model"]


def bench_vector_build(work: Path, p: dict, shared: dict) -> Figure:
    model, identity = _model(shared)
    records = wiki_records()
    docs = records[:QUICK_DOCS] if p["quick"] else records
    with Stopwatch() as fts:
        corpus = LocalCorpus.from_records(docs, "vectors-perf", work / "vector-index")
    with Stopwatch() as sw:
        corpus.attach_vectors(model, identity, 0.4, shipped=False)  # the build a corpus of one's own needs
    scale = len(records) / len(docs)
    value = sw.seconds * scale
    index_path = corpus.index_path
    assert index_path is not None  # the corpus was indexed into work / "vector-index"
    vec = VectorIndex.path_for(index_path, identity)
    shared["wiki_vectors"] = corpus if not p["quick"] else None
    fig = Figure(
        key="vector_index_build_s",
        value=value,
        unit="s",
        op="<=",
        limit=60,
        baselines={"fts_index_build_s": baseline(fts.seconds * scale, "s")},
        command=f"LocalCorpus.attach_vectors over the embedded corpus ({len(docs):,} summaries"
        + (f", x {scale:.1f} extrapolated to {len(records):,}" if scale > 1 else "")
        + f"; {identity})",
        details={"documents": len(docs), "measured_s": round(sw.seconds, 2), "scale": round(scale, 2)},
    )
    fig.extra_rows += [
        ("vector_file_mb", vec.stat().st_size * scale / 1e6, "MB"),
        ("fts_index_file_mb", index_path.stat().st_size * scale / 1e6, "MB"),
    ]
    fig.notes.append(
        "each document's title and opening (128 characters) is embedded, 16 a batch; once per corpus version and "
        "model (sources/vectors.py)"
    )
    return fig


def bench_vector_search(work: Path, p: dict, shared: dict) -> Figure:
    model, identity = _model(shared)
    rng = random.Random(SEED)
    corpus = shared.get("wiki_vectors")
    if corpus is None:  # --quick, or the figure alone: a synthetic 10,000 like the corpus's
        vectors = _synthetic(10_000, 384)
    else:
        vectors = np.asarray(corpus._vectors.vectors)
    index = VectorIndex(Path("synthetic"), vectors, identity)
    records = wiki_records()
    queries = [r["title"] for r in rng.sample(records, 60 if not p["quick"] else 12)]
    qvecs = [unit(model.embed_query(q)) for q in queries]
    index.top(qvecs[0], 50)  # warm
    lat = latencies_ms(lambda q: index.top(q, 50), qvecs * 5)
    wiki = shared["wiki"]
    fts = latencies_ms(lambda q: wiki.search(q, 5), queries)
    fig = Figure(
        key="vector_search_p50_ms",
        value=statistics.median(lat),
        unit="ms",
        op="<=",
        limit=10,
        baselines={"fts_search_p50_ms": baseline(statistics.median(fts), "ms")},
        command=f"VectorIndex.top(query, 50) over {len(vectors):,} unit vectors of 384 floats, {len(lat)} searches",
        details={"p90_ms": round(percentile(lat, 90), 3)},
    )
    if corpus is not None:
        corpus.hybrid_weight = 0.4
        hybrid = latencies_ms(lambda q: corpus.search(q, 5), queries)
        fig.extra_rows.append(("hybrid_search_p50_ms (query embedded, fused)", statistics.median(hybrid), "ms"))
    if not p["quick"]:
        for n in GROWTH:
            big = VectorIndex(Path("synthetic"), _synthetic(n, 384), identity)
            big.top(qvecs[0], 50)
            ms = latencies_ms(lambda q, big=big: big.top(q, 50), qvecs[:20])
            fig.extra_rows.append((f"vector_search_p50_ms at {n:,} (synthetic)", statistics.median(ms), "ms"))
            del big
    fig.notes.append("a brute-force scan (one matrix-vector product): linear in the corpus, no approximation")
    return fig


def _synthetic(n: int, dim: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    out = np.empty((n, dim), dtype=np.float32)
    for i in range(0, n, 100_000):  # in slices: no float64 copy of the whole
        part = rng.standard_normal((min(100_000, n - i), dim), dtype=np.float32)
        out[i : i + len(part)] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def session_questions(quick: bool) -> list[str]:
    """The questions the session figures time: three of ours and the first natural questions (30, quick 3)."""
    questions: list[str] = list(SESSION_QUESTIONS)
    webq = eval_data_if_named("webq", "tasks.jsonl")
    if webq is not None and webq.exists():
        questions += [t["question"] for t in read_jsonl(webq)][: 30 if not quick else 3]
    return questions


def bench_hybrid_sessions(work: Path, p: dict, shared: dict) -> Figure:
    model, identity = _model(shared)
    corpus = shared.get("wiki_vectors")
    if corpus is None:
        records = wiki_records()[: QUICK_DOCS * 2]
        corpus = LocalCorpus.from_records(records, "sessions-perf", work / "session-index")
        corpus.attach_vectors(model, identity, 0.4)
    questions = session_questions(p["quick"])
    graph = build_graph()

    def sessions(hybrid: bool) -> float:
        vectors = corpus._vectors
        corpus._vectors = vectors if hybrid else None
        try:
            t0 = time.perf_counter()
            for i, q in enumerate(questions):
                graph.invoke(
                    initial_state(q, load_settings({"seed": SEED + i}, env={})), context=Context(source=corpus)
                )
            return (time.perf_counter() - t0) / len(questions)
        finally:
            corpus._vectors = vectors

    sessions(True)  # warm: the model's first runs, the page cache
    lexical = [sessions(False) for _ in range(2)]
    hybrid = [sessions(True) for _ in range(2)]
    lex, hyb = min(lexical), min(hybrid)
    fig = Figure(
        key="hybrid_session_ratio",
        value=hyb / lex,
        unit="x",
        op="<=",
        limit=1.5,
        baselines={"lexical_session_s": baseline(lex, "s"), "hybrid_session_s": baseline(hyb, "s")},
        command=f"{len(questions)} questions as in-process sessions (graph.invoke) on the embedded corpus, hybrid "
        "vs retrieval lexical, the index and vectors in place (best of 2)",
    )
    if not p["quick"]:
        base, _ = saturate_command()
        home = work / "cli-home"
        cmd = base + ["research", SESSION_QUESTIONS[0], "--quiet", "--seed", str(SEED)]
        time_commands({"first": (cmd, clean_env(home))}, {"first": 1})  # builds the index and vectors once
        runs = time_commands(
            {"hybrid": (cmd, clean_env(home)), "lexical": (cmd + ["--retrieval", "lexical"], clean_env(home))},
            {"hybrid": 3, "lexical": 3},
        )
        cli_h, cli_l = statistics.median(runs["hybrid"]), statistics.median(runs["lexical"])
        fig.extra_rows += [
            ("cli_research_warm_hybrid_s", cli_h, "s"),
            ("cli_research_warm_lexical_s", cli_l, "s"),
            ("cli_research_warm_ratio", cli_h / cli_l, "x"),
        ]
    fig.notes.append("the hybrid session embeds each query (one onnxruntime run) and fuses two rankings per search")
    return fig
