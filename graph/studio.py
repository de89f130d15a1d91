"""The graphs LangGraph's local server serves to Studio (``langgraph dev``; see langgraph.json).

    {"graphs": {"saturate": "./graph/studio.py:graph", "saturate-multi": "./graph/studio.py:multi_graph"}}

The server imports this file by its path and serves the variables ``graph`` (the
nodes and edges of ``build_graph()``) and ``multi_graph`` (those of
``build_multi_graph()``, the multi-source session), both compiled **without a
checkpointer** (the server brings its own persistence, and refuses a graph that
has one). tests/test_server.py starts ``langgraph dev`` on a loopback port and
drives both with ``langgraph_sdk``: threads, streamed runs (custom, updates,
values), state, history and a replay from a checkpoint. The server knows
nothing of our runtime objects, so these differ from the graphs the CLI runs:

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
- **Multi-source** (``multi_graph``): the same input; the sources are the
  settings' ``sources`` (e.g. ``{"sources": "local,wiki"}``), else the
  ``source`` / ``corpus`` one alone, as ``saturate research --multi``. The
  sources, page store and models are cached by settings like the single graph's;
  the model budget (``Context.model_budget``, shared by the parallel source
  loops) is the run's own: one context per server run id, seeded from the
  checkpoint as a resumed CLI session is.
"""

# no `from __future__ import annotations`: pydantic reads the schemas below when the module is
# loaded by path under another name (as the server does)
import inspect
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from langgraph.graph import StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from saturate.graph.build import build_graph
from saturate.graph.build_multi import build_multi_graph
from saturate.graph.embeddings import resolve_embeddings
from saturate.graph.models import resolve_chat_model
from saturate.graph.paths import home_dir
from saturate.graph.session import check_task, make_context
from saturate.sources import resolve_specs
from saturate.state.context import Context
from saturate.state.graph_state import ResearchState, initial_state
from saturate.state.multi_state import MultiState, initial_multi_state
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


class StudioMultiOutput(TypedDict, total=False):
    task: str
    settings: dict[str, Any]
    sources: list[dict[str, Any]]  # the resolved source specs
    loops: list[dict[str, Any]]  # one LoopSummary per source loop (and breadcrumb pass)
    merged: list[dict[str, Any]]  # deduplicated results with attribution
    profiles: list[dict[str, Any]]  # Key actors
    result: dict[str, Any] | None  # the MultiResult


_LOCK = threading.Lock()
_CONTEXTS: OrderedDict[str, Context] = OrderedDict()
_CACHE_SIZE = 8
_RUNS: OrderedDict[tuple[str, str], Context] = OrderedDict()  # multi-source: (settings key, run id) -> context
_RUN_CACHE_SIZE = 64


def _chat_model(settings: Settings):
    model, _notes = resolve_chat_model(settings, None)
    return model


def _home(ctx: Any):
    return home_dir(ctx.get("home") if isinstance(ctx, dict) else getattr(ctx, "home", None))


def _cached(key: str, build) -> Context:
    """The context cached under ``key``, built by ``build()`` on a miss (callers hold ``_LOCK``)."""
    if key in _CONTEXTS:
        _CONTEXTS.move_to_end(key)
    else:
        _CONTEXTS[key] = build()
        while len(_CONTEXTS) > _CACHE_SIZE:
            _CONTEXTS.popitem(last=False)
    return _CONTEXTS[key]


def context_for(settings: Settings, ctx: Any, runtime: Any = None) -> Context:
    """The runtime context for a node: the caller's ``Context``, or one built from the settings (cached)."""
    if isinstance(ctx, Context):
        return ctx
    home_path = _home(ctx)
    key = json.dumps([str(home_path), settings.model_dump()], sort_keys=True, default=str)
    with _LOCK:
        return _cached(
            key,
            lambda: make_context(
                settings, home_path, _chat_model(settings), embeddings=resolve_embeddings(settings, home=home_path)
            ),
        )


def multi_context_for(settings: Settings, ctx: Any, runtime: Any = None) -> Context:
    """A multi-source node's context: the caller's ``Context``, or the run's own.

    The sources (one per spec of ``resolve_specs(settings)``), page store, chat model and embeddings are built
    once per settings and cached; every run gets a copy of that context with no model budget yet, so the
    parallel loops of one run share one budget (created on first use, seeded from the checkpoint) and runs
    never share one. The run is the server's run id, else the thread id; without either (a bare Python
    ``invoke``) each node gets a fresh copy, its budget seeded from the state alone.
    """
    if isinstance(ctx, Context):
        return ctx
    home_path = _home(ctx)
    key = json.dumps([str(home_path), "multi", settings.model_dump()], sort_keys=True, default=str)
    info = getattr(runtime, "execution_info", None)
    run = getattr(info, "run_id", None) or getattr(info, "thread_id", None)
    with _LOCK:
        base = _cached(
            key,
            lambda: make_context(
                settings,
                home_path,
                _chat_model(settings),
                specs=resolve_specs(settings),
                embeddings=resolve_embeddings(settings, home=home_path),
            ),
        )
        if run is None:
            return replace(base, model_budget=None, _lock=threading.Lock())
        run_key = (key, str(run))
        if run_key in _RUNS:
            _RUNS.move_to_end(run_key)
        else:
            _RUNS[run_key] = replace(base, model_budget=None, _lock=threading.Lock())
            while len(_RUNS) > _RUN_CACHE_SIZE:
                _RUNS.popitem(last=False)
        return _RUNS[run_key]


def complete_input(state: dict) -> dict:
    """The initial-state values a bare ``{"task", "settings"}`` input lacks ({} once they are there)."""
    if "rng" in state:
        return {}
    settings = load_settings(dict(state.get("settings") or {}))
    return dict(initial_state(check_task(state.get("task", ""), settings), settings))


def complete_multi_input(state: dict) -> dict:
    """The multi-source initial state a bare ``{"task", "settings"}`` input lacks (the sources resolved from the
    settings); {} once it is there, and for a branch's ``Send`` payload (it has one ``source``)."""
    if "kind" in state or "source" in state:
        return {}
    settings = load_settings(dict(state.get("settings") or {}))
    task = check_task(state.get("task", ""), settings)
    return dict(initial_multi_state(task, settings, resolve_specs(settings)))


def studio_node(func, fill=complete_input, context=context_for):
    """Wrap a node: fill a bare input in, give it a runtime context built from the settings."""
    takes_runtime = "runtime" in inspect.signature(func).parameters

    def node(state: ResearchState, runtime: Runtime[StudioContext]) -> dict:
        added = fill(state)
        full = {**state, **added}
        if not takes_runtime:
            return {**added, **(func(full) or {})}
        settings = Settings.model_validate(full["settings"])
        update = func(full, runtime.override(context=context(settings, runtime.context, runtime)))
        return {**added, **(update or {})}

    node.__name__ = getattr(func, "__name__", "node")
    node.__doc__ = getattr(func, "__doc__", None)
    return node


def _node_function(runnable: Any) -> Callable:
    """The function a built graph's node runs: ``StateGraph.add_node`` turns every action into a
    ``RunnableCallable``, which keeps the function as ``func``."""
    return runnable.func


def _rebuild(base: StateGraph[Any, Any, Any, Any], state_schema, output_schema, name: str, wrap, checkpointer=None):
    """``base``'s nodes (each wrapped by ``wrap``, with its own input schema) and edges, with the server's
    input, output and context schemas."""
    g = StateGraph(state_schema, context_schema=StudioContext, input_schema=StudioInput, output_schema=output_schema)
    for node_name, spec in base.nodes.items():
        g.add_node(
            node_name,
            wrap(_node_function(spec.runnable)),
            metadata=spec.metadata,
            retry_policy=spec.retry_policy,
            input_schema=spec.input_schema,
        )
    for source, target in sorted(base.edges):
        g.add_edge(source, target)
    for source, branches in base.branches.items():
        for branch in branches.values():
            g.add_conditional_edges(source, getattr(branch.path, "func", branch.path), branch.ends)
    return g.compile(checkpointer=checkpointer, name=name)


def make_graph(checkpointer=None):
    """build_graph()'s nodes and edges (read from its StateGraph), each node wrapped by ``studio_node``."""
    return _rebuild(build_graph().builder, ResearchState, StudioOutput, "saturate", studio_node, checkpointer)


def make_multi_graph(checkpointer=None):
    """build_multi_graph()'s nodes and edges, each node wrapped by ``studio_node`` with the multi-source input
    and the run's context (``multi_context_for``)."""

    def wrap(func):
        return studio_node(func, fill=complete_multi_input, context=multi_context_for)

    return _rebuild(build_multi_graph().builder, MultiState, StudioMultiOutput, "saturate-multi", wrap, checkpointer)


graph = make_graph()
multi_graph = make_multi_graph()
