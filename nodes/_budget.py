"""The model budget of a multi-source session: a circuit breaker on calls and tokens.

One ``ModelBudget`` per session lives in the runtime context (``extra["model_budget"]``),
shared by the parallel source loops. A call must ``acquire`` a slot first: while
calls < ``model_call_budget`` and tokens < ``model_token_budget`` it gets one
(calls are reserved under a lock, so parallel loops never exceed the call
budget); otherwise the breaker trips — once, with its reason — and every later
acquire fails. Tokens are known only after a call, so the call in flight may
take the token count past its limit; no call starts after that.

The budget is seeded from what the checkpointed state already records (calls
and tokens of finished loops and nodes, an earlier trip), so a resumed session
keeps counting from where it was.
"""

from __future__ import annotations

import threading
from typing import Any

from saturate.nodes._model import ModelUsage, Reply


class BudgetExceeded(RuntimeError):
    """No model call: the session's model budget is spent."""


class ModelBudget:
    def __init__(self, max_calls: int, max_tokens: int, calls: int = 0, tokens: int = 0, tripped: str | None = None):
        self.max_calls, self.max_tokens = max_calls, max_tokens
        self.calls, self.tokens, self.tripped = calls, tokens, tripped
        self._lock = threading.Lock()

    def acquire(self) -> tuple[bool, str | None]:
        """(allowed, reason if this acquire tripped the breaker)."""
        with self._lock:
            if self.tripped:
                return False, None
            if self.calls >= self.max_calls:
                self.tripped = f"model_call_budget {self.max_calls} spent ({self.calls} calls)"
            elif self.tokens >= self.max_tokens:
                self.tripped = f"model_token_budget {self.max_tokens} spent ({self.tokens} tokens)"
            if self.tripped:
                return False, self.tripped
            self.calls += 1
            return True, None

    def charge(self, tokens: int) -> None:
        with self._lock:
            self.tokens += tokens


def used_in_state(state: dict) -> dict:
    """Calls and tokens the checkpointed state records, and whether the breaker already tripped."""
    rows = [*(state.get("loops") or []), *(state.get("usage") or [])]
    return {
        "calls": sum(r.get("model_calls", 0) for r in rows),
        "tokens": sum(sum((r.get("model_tokens") or {}).values()) for r in rows),
        "tripped": next((s.get("detail") for s in state.get("safety") or [] if s.get("kind") == "budget"), None),
    }


def session_budget(context: Any, settings: Any, seed: dict | None = None) -> ModelBudget:
    """The session's budget from the runtime context, created (seeded with ``seed``) on first use."""
    extra = context.extra
    budget = extra.get("model_budget")
    if budget is None:
        seed = seed or {}
        budget = extra.setdefault(  # setdefault: parallel loops racing here get one shared budget
            "model_budget",
            ModelBudget(settings.model_call_budget, settings.model_token_budget,
                        seed.get("calls", 0), seed.get("tokens", 0), seed.get("tripped")),
        )
    return budget


class BudgetedUsage(ModelUsage):
    """ModelUsage whose calls go through the session budget; ``trips`` collects a trip this usage caused."""

    def __init__(self, node: str, budget: ModelBudget):
        super().__init__(node)
        self.budget = budget
        self.trips: list[str] = []

    def call(self, model: Any, system: str, user: str, **options: Any) -> Reply:
        allowed, tripped = self.budget.acquire()
        if tripped:
            self.trips.append(tripped)
        if not allowed:
            raise BudgetExceeded(self.budget.tripped or "model budget spent")
        reply = super().call(model, system, user, **options)
        self.budget.charge(reply.tokens_in + reply.tokens_out)
        return reply

    def tokens(self) -> dict:
        return {"in": self.tokens_in, "out": self.tokens_out} if self.calls else {}
