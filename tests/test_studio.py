"""langgraph.json and the graph `langgraph dev` serves, loaded the way langgraph-api loads it.

langgraph-api (langgraph_api/graph.py, _graph_from_spec) imports "./graph/studio.py"
with importlib.util.spec_from_file_location under a module name made from the path,
reads the variable, rejects a compiled graph that carries a checkpointer (in local
dev), asks it for its JSON schemas, then runs ``graph.copy(update={"checkpointer": ...,
"store": ...})`` with the request's context (``{}`` when none is given).
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel import Pregel

from saturate.graph.build import build_graph
from saturate.state import Context

from conftest import ROOT

TASK = "How does photosynthesis convert light into chemical energy?"


def load_like_the_server(spec: str):
    path, _, variable = spec.partition(":")
    modname = path.replace("/", "__").replace(".py", "").replace(" ", "_").lstrip(".")
    modspec = importlib.util.spec_from_file_location(modname, ROOT / path)
    assert modspec is not None and modspec.loader is not None
    module = importlib.util.module_from_spec(modspec)
    sys.modules[modname] = module
    modspec.loader.exec_module(module)
    return module.__dict__[variable]


@pytest.fixture(scope="module")
def served():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    assert set(config["graphs"]) == {"saturate", "saturate-multi"}  # both served (tests/test_server.py)
    return load_like_the_server(config["graphs"]["saturate"])


def test_exported_graph_is_compiled_without_a_checkpointer(served):
    assert isinstance(served, Pregel) and served.checkpointer is None and served.store is None
    assert served.name == "saturate"
    # the same nodes and edges as build_graph()
    a, b = served.get_graph(), build_graph().get_graph()
    assert list(a.nodes) == list(b.nodes)
    assert {(e.source, e.target, e.conditional) for e in a.edges} == {
        (e.source, e.target, e.conditional) for e in b.edges
    }
    # the schemas the server shows in Studio
    assert served.get_input_jsonschema()["properties"].keys() == {"task", "settings"}
    assert {"result", "records"} <= served.get_output_jsonschema()["properties"].keys()
    context = served.get_context_jsonschema()
    assert context is not None and context["properties"].keys() == {"home"}


def test_runs_with_task_and_settings_and_no_context(served, home):
    out = served.invoke({"task": TASK, "settings": {"max_rounds": 3, "seed": 5}})
    assert out["result"]["outcome"] == "answer" and out["result"]["sources"]
    assert len(out["records"]) <= 3 and out["settings"]["max_rounds"] == 3 and out["settings"]["seed"] == 5
    assert (home / "index").is_dir() and (home / "pages.db").exists()  # the source was built from the settings


def test_runs_like_the_server_does(served, home, wiki_source):
    graph = served.copy(update={"checkpointer": InMemorySaver(), "store": None})
    cfg = {"configurable": {"thread_id": "studio-1"}}
    events = list(
        graph.stream(
            {"task": TASK, "settings": {"max_rounds": 3, "seed": 5}}, cfg, context={}, stream_mode=["updates", "custom"]
        )
    )
    custom = [c for mode, c in events if mode == "custom"]
    state = graph.get_state(cfg).values
    assert [e["round"] for e in custom if e["event"] == "round"] == [r["round"] for r in state["records"]]
    assert state["result"] and not graph.get_state(cfg).next
    # time travel in Studio: replay from a checkpoint with other settings (update_state + invoke None)
    history = list(graph.get_state_history(cfg))
    point = next(s for s in history if s.next == ("plan_query",) and s.values.get("round") == 1)
    fork_cfg = graph.update_state(
        point.config, {"settings": {**point.values["settings"], "max_rounds": 2, "min_rounds": 2}}, as_node="compress"
    )
    graph.invoke(None, fork_cfg)
    assert len(graph.get_state(cfg).values["records"]) == 2

    # a real Context passed by a Python caller is used as is
    out = served.invoke({"task": TASK, "settings": {"max_rounds": 2, "seed": 5}}, context=Context(source=wiki_source))
    assert out["records"][0]["source"] == wiki_source.name


def test_bad_input_fails_the_run_with_a_clear_message(served, home):
    from saturate.graph.api import InputError
    from saturate.state.settings import SettingsError

    with pytest.raises(InputError, match="the task is empty"):
        served.invoke({"task": "  ", "settings": {}})
    with pytest.raises(SettingsError, match="max_rounds"):
        served.invoke({"task": TASK, "settings": {"max_rounds": 0}})
