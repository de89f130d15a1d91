"""Figure 3, ``fts_search_p50_ms`` (<= 2 ms): FTS5 search latency on the embedded corpus over >= 500
varied queries (p90/p99 beside it); baselines: ``fetch()`` by id (an SQLite point lookup) and the same
queries on the small task corpus.
"""

from __future__ import annotations

import random
import statistics
from pathlib import Path

from saturate.bench.perf.common import (
    SEED,
    TASK_FILES,
    Figure,
    baseline,
    latencies_ms,
    percentile,
    questions,
    rel,
    wiki_records,
)
from saturate.state.records import SearchResult
from saturate.state.text import sentences

K = 5  # results per search, as a round asks for


def fts_queries(p: dict) -> list[tuple[str, str]]:
    """(kind, query): titles and descriptions of random articles and multi-hop questions, shuffled."""

    rng = random.Random(SEED)
    records = wiki_records()
    out = [("title", r["title"]) for r in rng.sample(records, p["fts_titles"])]
    for r in rng.sample(records, p["fts_descriptions"]):
        first = (sentences(r["text"]) or [r["title"]])[0]
        out.append(("description", first))
    qs = questions()
    out += [("question", q) for q in rng.sample(qs, min(p["fts_questions"], len(qs)))]
    rng.shuffle(out)
    return out


def bench_fts(work: Path, p: dict, shared: dict) -> Figure:

    wiki = shared["wiki"]
    queries = fts_queries(p)
    texts = [q for _, q in queries]
    latencies_ms(lambda q: wiki.search(q, K), texts[:50])  # warm the page cache
    lat = latencies_ms(lambda q: wiki.search(q, K), texts)
    by_kind: dict[str, list[float]] = {}
    for (kind, _), ms in zip(queries, lat, strict=True):
        by_kind.setdefault(kind, []).append(ms)
    hits = [wiki.search(q, 1) for q in texts[:50]]
    fetch_targets = [SearchResult.model_validate(h[0].model_dump()) for h in hits if h]
    fetch_lat = latencies_ms(wiki.fetch, fetch_targets * 4)
    baselines = {"fetch_by_id_p50_ms": baseline(statistics.median(fetch_lat), "ms")}
    musique = shared.get("task_source")
    if musique is not None and musique.name != wiki.name:
        mus_lat = latencies_ms(lambda q: musique.search(q, K), texts)
        baselines[f"task_corpus_{musique.count}_docs_p50_ms"] = baseline(statistics.median(mus_lat), "ms")
    slowest = max(range(len(lat)), key=lat.__getitem__)
    p50, p90, p99 = statistics.median(lat), percentile(lat, 90), percentile(lat, 99)
    fig = Figure(
        key="fts_search_p50_ms",
        value=p50,
        unit="ms",
        op="<=",
        limit=2,
        baselines=baselines,
        command=(
            f"perf.fts.bench_fts: sources.open_wiki(<tmp>/index).search(q, {K}) once per query, {len(texts)} queries "
            f"(titles and first description sentences of random articles, multi-hop questions of "
            f"{', '.join(rel(f) for f in TASK_FILES if f.exists()) or 'the built-in list'}), seed {SEED}, "
            "after 50 warm-up queries; baselines: fetch() by id (SQLite point lookup) and the same queries on the "
            "small task corpus"
        ),
        details={
            "queries": len(texts),
            "corpus_docs": wiki.count,
            "p90_ms": round(p90, 4),
            "p99_ms": round(p99, 4),
            "max_ms": round(max(lat), 4),
            "mean_ms": round(statistics.fmean(lat), 4),
            "p50_ms_by_kind": {kd: round(statistics.median(v), 4) for kd, v in by_kind.items()},
            "p99_ms_by_kind": {kd: round(percentile(v, 99), 4) for kd, v in by_kind.items()},
            "slowest_query": {"ms": round(lat[slowest], 3), "kind": queries[slowest][0], "query": texts[slowest][:200]},
        },
    )
    fig.extra_rows += [("fts_search_p90_ms", p90, "ms"), ("fts_search_p99_ms", p99, "ms")]
    fig.notes.append(
        f"p50 {p50:.3f} ms, p90 {p90:.3f} ms, p99 {p99:.3f} ms, max {max(lat):.3f} ms over "
        f"{len(texts)} queries; p50 by kind: "
        + ", ".join(f"{kd} {statistics.median(v):.3f} ms" for kd, v in by_kind.items())
    )
    return fig
