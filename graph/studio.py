"""The graph LangGraph's local server serves to Studio (``langgraph dev``; see langgraph.json).

    {"graphs": {"saturate": "./graph/studio.py:graph"}}

The server imports this file by its path and serves the variable ``graph``: the
nodes and edges of ``build_graph()``, compiled **without a checkpointer** (the
server brings its own persistence, and refuses a graph that has one). The
server knows nothing of our runtime objects, so two things differ from the
graph the CLI runs:

- **Input**: ``{"task": "...", "settings": {...}}`` is enough. ``settings`` are
  overrides on top of the ``SATURATE_*`` environment and the defaults, validated
  like the CLI's; the rest of the initial state (ε generator, counters) is filled
  in when the first node runs and checkpointed with it.
- **Output**: task, settings, round records, knowledge state, enrichment log
  and the result (the full state stays visible in the thread's state).
- **Context**: a run's context holds JSON fields only (``StudioContext``: the
  data directory). The search source, page store, chat model and embeddings
  (when ``rerank`` / ``novelty_method`` use them) the nodes read from
  ``runtime.context`` are built from the state's settings when a node first
  needs them (and cached), so a run without any context works. A caller
  that passes a real ``state.Context`` (Python, tests) gets it unchanged.
"""

# no `from __future__ import annotations`: pydantic reads the schemas below when the module is
# loaded by path under another name (as the server does)
import inspect
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from langgraph.graph import StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from saturate.graph.build import build_graph
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.models import resolve_chat_model
from saturate.graph.paths import home_dir
from saturate.graph.session import check_task, make_context
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState, initial_state
from saturate.state.settings import Settings, load_settings


@dataclass
class StudioContext:
    """What a Studio assistant may set per run (all optional)."""

    home: str | None = (
        None  # data directory: index/, cache.db, pages.db (default SATURATE_HOME or ~/.local/share/saturate)
    )


class StudioInput(TypedDict, total=False):
    task: str  # what to research
    settings: dict[
        str, Any
    ]  # overrides, e.g. {"max_rounds": 4, "novelty_threshold": 2.5, "corpus": "/path/corpus.jsonl"}


class StudioOutput(TypedDict, total=False):
    task: str
    settings: dict[str, Any]
    records: list[dict[str, Any]]  # one RoundRecord per round
    knowledge: str
    pages: list[dict[str, Any]]
    result: dict[str, Any] | None  # the AgentResult


_LOCK = threading.Lock()
_CONTEXTS: OrderedDict[str, Context] = OrderedDict()
_CACHE_SIZE = 8


def _chat_model(settings: Settings):
    model, _notes = resolve_chat_model(settings, None)
    return model


def context_for(settings: Settings, ctx: Any) -> Context:
    """The runtime context for a node: the caller's ``Context``, or one built from the settings (cached)."""
    if isinstance(ctx, Context):
        return ctx
    home = ctx.get("home") if isinstance(ctx, dict) else getattr(ctx, "home", None)
    home_path = home_dir(home)
    key = json.dumps([str(home_path), settings.model_dump()], sort_keys=True, default=str)
    with _LOCK:
        if key in _CONTEXTS:
            _CONTEXTS.move_to_end(key)
        else:
            embeddings = resolve_embeddings(settings, home=home_path)
            _CONTEXTS[key] = make_context(settings, home_path, _chat_model(settings), embeddings=embeddings)
            while len(_CONTEXTS) > _CACHE_SIZE:
                _CONTEXTS.popitem(last=False)
        return _CONTEXTS[key]


def complete_input(state: dict) -> dict:
    """The initial-state values a bare ``{"task", "settings"}`` input lacks ({} once they are there)."""
    if "rng" in state:
        return {}
    settings = load_settings(dict(state.get("settings") or {}))
    return dict(initial_state(check_task(state.get("task", ""), settings), settings))


def studio_node(func):
    """Wrap a node: fill a bare input in, give it a runtime context built from the settings."""
    takes_runtime = "runtime" in inspect.signature(func).parameters

    def node(state: ResearchState, runtime: Runtime[StudioContext]) -> dict:
        fill = complete_input(state)
        state = {**state, **fill}
        if not takes_runtime:
            return {**fill, **(func(state) or {})}
        settings = Settings.model_validate(state["settings"])
        update = func(state, runtime.override(context=context_for(settings, runtime.context)))
        return {**fill, **(update or {})}

    node.__name__ = getattr(func, "__name__", "node")
    node.__doc__ = getattr(func, "__doc__", None)
    return node


def make_graph(checkpointer=None):
    """build_graph()'s nodes and edges (read from its StateGraph), each node wrapped by ``studio_node``."""
    base = build_graph().builder
    g = StateGraph(ResearchState, context_schema=StudioContext, input_schema=StudioInput, output_schema=StudioOutput)
    for name, spec in base.nodes.items():
        g.add_node(name, studio_node(spec.runnable.func), metadata=spec.metadata, retry_policy=spec.retry_policy)
    for source, target in sorted(base.edges):
        g.add_edge(source, target)
    for source, branches in base.branches.items():
        for branch in branches.values():
            g.add_conditional_edges(source, getattr(branch.path, "func", branch.path), branch.ends)
    return g.compile(checkpointer=checkpointer, name="saturate")


graph = make_graph()
