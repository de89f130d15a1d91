"""saturate: a research agent on LangGraph that searches while results are new and stops when they repeat.

    from saturate import research, verify, resume, research_multi, session_state, Settings, BadInput

    result = research("Where is the Bubye River?")

This folder is the front of the house: the Python API above (loaded on first use, PEP 562 ``__getattr__``, so
``saturate --help`` does not pay for importing LangGraph), the command line (``cli/``), the reports (``views/``),
the MCP server (``mcp.py``), the benchmarks (``bench/``) and their saturation monitor (``monitor/``). The engine is in
the folders at the repository root, linked here as sub-packages (``saturate/graph -> ../graph``, ``nodes``,
``sources``, ``state``): the graphs and the session layer, the nodes, the search sources, the state
(docs/layout.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the type checker and editors see; at run time each is imported on first use
    from saturate.graph.api import research, research_multi, resume, verify
    from saturate.graph.session import session_state
    from saturate.state.errors import BadInput
    from saturate.state.settings import Settings

_EXPORTS = {
    "BadInput": "saturate.state.errors",
    "Settings": "saturate.state.settings",
    "research": "saturate.graph.api",
    "research_multi": "saturate.graph.api",
    "resume": "saturate.graph.api",
    "session_state": "saturate.graph.session",
    "verify": "saturate.graph.api",
}

__all__ = ["BadInput", "Settings", "research", "research_multi", "resume", "session_state", "verify"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'saturate' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
