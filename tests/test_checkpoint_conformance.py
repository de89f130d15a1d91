"""LangGraph's checkpointer conformance suite (``langgraph-checkpoint-conformance``) against the saver saturate
really uses (``open_checkpointer``: SqliteSaver on WAL with synchronous=NORMAL; PostgresSaver on the pool with
synchronous_commit=off in tests/test_postgres.py). The suite drives the async API; saturate's savers are the
synchronous ones LangGraph runs them as, so their async methods run the sync ones on a worker thread
(``AsyncOverSync``) — the behaviour checked is that of the sync methods saturate calls."""

from __future__ import annotations

from saver_conformance import conforms


def test_sqlite_saver_conforms(home):
    conforms("saturate-sqlite")
