"""Model calls of a multi-source session through its budget (``state.context.ModelBudget``).

The budget lives in the runtime context, shared by the parallel source loops,
and is seeded from what the checkpointed state already records (calls and
tokens of finished loops and nodes, an earlier trip), so a resumed session
keeps counting from where it was.
"""

from __future__ import annotations

from typing import Any

from saturate.nodes._model import ModelUsage, Prompt, Reply
from saturate.state.context import Context, ModelBudget
from saturate.state.settings import Settings


class BudgetExceeded(RuntimeError):
    """No model call: the session's model budget is spent."""


def session_budget(context: Context, settings: Settings, seed: dict | None = None) -> ModelBudget:
    """The session's budget from the runtime context (created on first use, seeded with ``seed``)."""
    return context.budget(settings.model_call_budget, settings.model_token_budget, seed)


class BudgetedUsage(ModelUsage):
    """ModelUsage whose calls go through the session budget; ``trips`` collects a trip this usage caused."""

    def __init__(self, node: str, budget: ModelBudget):
        super().__init__(node)
        self.budget = budget
        self.trips: list[str] = []

    def call(self, model: Any, prompt: Prompt, **fields: Any) -> Reply:
        allowed, tripped = self.budget.acquire()
        if tripped:
            self.trips.append(tripped)
        if not allowed:
            raise BudgetExceeded(self.budget.tripped or "model budget spent")
        reply = super().call(model, prompt, **fields)
        self.budget.charge(reply.tokens_in + reply.tokens_out)
        return reply

    def tokens(self) -> dict:
        return {"in": self.tokens_in, "out": self.tokens_out} if self.calls else {}
