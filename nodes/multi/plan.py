"""plan_sources: the first queries every source loop starts from.

Every loop starts from the task itself. With a chat model, the single loop's
initial-plan prompt (``nodes._plan.PLAN``: two complementary queries, JSON,
repaired or asked once more) runs once for the session, through the model
budget; every loop asks the task first and keeps the model's queries for its
next ones. The fan-out to one ``source_loop`` branch per source is the
conditional edge after this node (``graph.build_multi``).
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from saturate.nodes._budget import BudgetedUsage, BudgetExceeded, session_budget
from saturate.nodes._guard import require_input
from saturate.nodes._model import error_text
from saturate.nodes._plan import model_plan
from saturate.state.context import Context
from saturate.state.multi_state import MultiState, used_in_state
from saturate.state.settings import Settings


def plan_sources(state: MultiState, runtime: Runtime[Context]) -> dict:
    require_input(state, runtime)
    settings = Settings.model_validate(state["settings"])
    task = state["task"]
    model = runtime.context.chat_model
    planned: list[str] = []
    notes: list[str] = []
    usage = BudgetedUsage("plan", session_budget(runtime.context, settings, used_in_state(state)))
    if model is not None:
        fallbacks: list[str] = []
        try:
            planned = model_plan(model, task, usage, fallbacks)
        except BudgetExceeded as exc:
            notes.append(f"plan: model budget spent ({exc}); planned the task itself")
        except Exception as exc:  # recorded; the task itself is planned
            notes.append(f"plan model: {error_text(exc)}; planned the task itself")
        notes += [f"plan: {f}" for f in fallbacks]
    update: dict = {"planned_queries": planned or [task], "notes": notes}
    if usage.calls:
        update["usage"] = [{"node": "plan", "model_calls": usage.calls, "model_tokens": usage.tokens()}]
    if usage.trips:
        update["safety"] = [{"kind": "budget", "source": None, "phase": "plan", "detail": t} for t in usage.trips]
    return update
