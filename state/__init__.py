"""What flows through a saturate session: settings, records, graph state, runtime context.

The names below are loaded on first use (PEP 562 ``__getattr__``), so importing one light
module of this package (``saturate.state.errors`` for the CLI's error handling) does not
build every pydantic model first.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AgentResult": "records",
    "BadInput": "errors",
    "Context": "context",
    "PageStore": "context",
    "ResearchState": "graph_state",
    "RoundRecord": "records",
    "SearchResult": "records",
    "SearchSource": "context",
    "Settings": "settings",
    "SettingsError": "settings",
    "SourceRef": "records",
    "initial_state": "graph_state",
    "load_settings": "settings",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'saturate.state' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"saturate.state.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


# One name per module: this folder is the sub-package `saturate.state` (saturate/state links here). Imported as
# `state` it would be a second copy of every module in it, with its own classes and caches: refused here, and by
# ruff's banned-api rule before anything runs (pyproject.toml).
if __name__ != "saturate.state":
    raise ImportError(f"import saturate.state, not {__name__} (docs/layout.md: one name per module)")
