"""What a graph needs to run, checked by its first node: a clear error instead of a KeyError deep inside.

``build_graph().invoke(...)`` from Python needs the input ``initial_state(task, settings)`` and
``context=Context(source=...)`` (both from ``saturate.state``); ``saturate.graph.research`` builds both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from saturate.state.errors import BadInput


class GraphInputError(BadInput):
    """The graph was invoked without the input or the runtime context it needs."""


def require_input(state: Mapping[str, Any], runtime, *, source: bool = True) -> None:
    missing = [k for k in ("task", "settings") if k not in (state or {})]
    if missing:
        raise GraphInputError(
            f"the graph's input lacks {', '.join(missing)}: invoke it with initial_state(task, settings) "
            "(from saturate.state), or use saturate.graph.research(task, ...)"
        )
    context = getattr(runtime, "context", None)
    if context is None or (
        source and getattr(context, "source", None) is None and not getattr(context, "sources", None)
    ):
        raise GraphInputError(
            "the graph needs a runtime context with a search source: invoke it with "
            "context=Context(source=...) (from saturate.state), or use saturate.graph.research(task, ...)"
        )
