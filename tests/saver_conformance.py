"""LangGraph's checkpointer conformance suite (``langgraph-checkpoint-conformance``) run against a saver saturate
really uses (``open_checkpointer``): ``conforms(name, database_url)``. The suite drives the async API; saturate's
savers are the synchronous ones LangGraph runs them as, so their async methods run the sync ones on a worker thread
(``AsyncOverSync``) — the behaviour checked is that of the sync methods saturate calls.

A helper module, not a test module: tests/test_checkpoint_conformance.py (SQLite) and tests/test_postgres.py
(PostgreSQL) import it."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate

from saturate.graph.session import open_checkpointer


class AsyncOverSync(BaseCheckpointSaver):
    """A synchronous saver whose async methods run its sync ones on a worker thread (the five base capabilities)."""

    def __init__(self, inner: BaseCheckpointSaver):
        super().__init__(serde=inner.serde)
        self.inner = inner

    def get_next_version(self, current, channel):
        return self.inner.get_next_version(current, channel)

    def get_tuple(self, config):
        return self.inner.get_tuple(config)

    def list(self, config, **kwargs):
        return self.inner.list(config, **kwargs)

    def put(self, *args):
        return self.inner.put(*args)

    def put_writes(self, *args, **kwargs):
        return self.inner.put_writes(*args, **kwargs)

    def delete_thread(self, thread_id):
        return self.inner.delete_thread(thread_id)

    async def aget_tuple(self, config):
        return await asyncio.to_thread(self.inner.get_tuple, config)

    async def alist(self, config, **kwargs):
        for item in await asyncio.to_thread(lambda: list(self.inner.list(config, **kwargs))):
            yield item

    async def aput(self, *args):
        return await asyncio.to_thread(self.inner.put, *args)

    async def aput_writes(self, *args, **kwargs):
        return await asyncio.to_thread(lambda: self.inner.put_writes(*args, **kwargs))

    async def adelete_thread(self, thread_id):
        return await asyncio.to_thread(self.inner.delete_thread, thread_id)


def conforms(name: str, database_url: str | None = None) -> None:
    """Run the suite against saturate's saver (a fresh data directory, or ``database_url``); every base
    capability must pass."""

    @checkpointer_test(name=name)
    async def saver():
        with tempfile.TemporaryDirectory() as home:
            with open_checkpointer(Path(home), database_url=database_url) as inner:
                yield AsyncOverSync(inner)

    report = asyncio.run(validate(saver))
    failures = {cap: r.failures for cap, r in report.results.items() if r.detected and not r.passed}
    assert report.passed_all_base and not failures, failures
    assert sum(r.tests_passed for r in report.results.values()) >= 50
