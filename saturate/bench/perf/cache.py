"""Figure 4, ``cache_hit_ms`` (<= 1 ms): CachedSource hit latency; baselines: the miss latency, and the
inner source alone.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from saturate.bench.perf.common import Figure, baseline, latencies_ms, percentile
from saturate.bench.perf.fts import K, fts_queries
from saturate.sources import CachedSource, SearchCache


def bench_cache(work: Path, p: dict, shared: dict) -> Figure:

    wiki = shared["wiki"]
    # as make_source builds it: the index file name is part of the key
    cache = SearchCache(work / "cache.db")
    cached = CachedSource(wiki, cache, 86400, params={"index": wiki.index_path.name if wiki.index_path else None})
    queries = list(dict.fromkeys(q for _, q in fts_queries(p)))[: p["cache_queries"]]

    def search(q: str):
        return cached.search(q, K)

    search("warm up the cache connection")
    miss = latencies_ms(search, queries)
    hit = latencies_ms(search, queries) + latencies_ms(search, queries)
    inner = latencies_ms(lambda q: wiki.search(q, K), queries)
    expected_misses = len(queries) + 1
    if cached.misses != expected_misses or cached.hits != 2 * len(queries):
        raise RuntimeError(f"cache counters off: {cached!r}, expected {expected_misses} misses")
    cache.close()
    h50 = statistics.median(hit)
    m50 = statistics.median(miss)
    fig = Figure(
        key="cache_hit_ms",
        value=h50,
        unit="ms",
        op="<=",
        limit=1,
        baselines={
            "cache_miss_p50_ms": baseline(m50, "ms"),
            "uncached_search_p50_ms": baseline(statistics.median(inner), "ms"),
        },
        command=(
            f"perf.cache.bench_cache: CachedSource(open_wiki(), SearchCache(<tmp>/cache.db), ttl 86400).search(q, {K}) "
            f"for {len(queries)} distinct queries: pass 1 misses, passes 2-3 hits (p50 of each); "
            "baseline: the misses, and the inner source alone"
        ),
        details={
            "queries": len(queries),
            "hit_p90_ms": round(percentile(hit, 90), 4),
            "hit_p99_ms": round(percentile(hit, 99), 4),
            "miss_p90_ms": round(percentile(miss, 90), 4),
            "hit_speedup_vs_miss": round(m50 / h50, 2) if h50 else None,
        },
    )
    fig.notes.append(
        f"hit p50 {h50:.3f} ms vs miss p50 {m50:.3f} ms ({m50 / h50:.1f}x); hit p99 {percentile(hit, 99):.3f} ms"
    )
    return fig
