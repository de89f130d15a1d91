"""Wiring and running: build_graph, the Python API, the CLI."""

from saturate.graph.build import build_graph
from saturate.graph.api import InputError, list_sessions, open_checkpointer, research, resume, session_state, verify

__all__ = ["InputError", "build_graph", "list_sessions", "open_checkpointer", "research", "resume", "session_state", "verify"]
