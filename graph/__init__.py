"""Wiring and running: the graphs, the session layer and storage, the model plumbing, the Python API.

    from saturate import research, resume, session_state, verify, research_multi   # the same functions

The public names are loaded on first use (PEP 562 ``__getattr__``): importing a
sub-package such as ``saturate.graph.paths`` runs this file first, and
``saturate --help`` must not pay for importing LangGraph and LangChain.
"""

from __future__ import annotations

import importlib
from typing import Any

# what the rest of the house (the CLI, the MCP server, notebooks) may call; the CLI calls nothing else of graph/
# (an import-linter contract, pyproject.toml)
_EXPORTS = {
    "build_graph": "saturate.graph.build",
    "check_thread": "saturate.graph.session",
    "fork": "saturate.graph.timetravel",
    "home_dir": "saturate.graph.paths",
    "list_checkpoints": "saturate.graph.timetravel",
    "new_thread_id": "saturate.graph.session",
    "result_of": "saturate.graph.api",
    "run_batch": "saturate.graph.batch",
    "build_multi_graph": "saturate.graph.build_multi",
    "ArgumentError": "saturate.graph.api",
    "InputError": "saturate.graph.session",
    "list_sessions": "saturate.graph.session",
    "open_checkpointer": "saturate.graph.session",
    "session_state": "saturate.graph.session",
    "research": "saturate.graph.api",
    "research_multi": "saturate.graph.api",
    "resume": "saturate.graph.api",
    "verify": "saturate.graph.api",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'saturate.graph' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


# One name per module: this folder is the sub-package `saturate.graph` (saturate/graph links here). Imported as
# `graph` it would be a second copy of every module in it, with its own classes and caches: refused here, and by
# ruff's banned-api rule before anything runs (pyproject.toml).
if __name__ != "saturate.graph":
    raise ImportError(f"import saturate.graph, not {__name__} (docs/layout.md: one name per module)")
