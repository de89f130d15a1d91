"""``saturate mcp``: saturate as tools of a Model Context Protocol server (the official ``mcp`` SDK's MCPServer).

Tools: ``research``, ``verify``, ``resume``, ``show`` and ``runs``. Inputs are typed (``settings`` is an optional
object whose fields are the Settings', each optional: the JSON schema a client sees lists them); outputs are
structured (``SessionOutput``: thread id, outcome, answer, cited sources, stop reason, and what waits for review
when the session pauses). A session runs on a worker thread; each round is a progress notification
(``round / round cap``, the round's line as the message). A cancelled call stops its session at the next step
(the step under way finishes and is checkpointed), so ``resume`` continues it. Bad input (a ``BadInput``) and any
other failure come back as tool errors; the server keeps serving.

Transports: stdio (default: a client starts ``saturate mcp``), or streamable HTTP (``--http``) bound to
127.0.0.1 unless ``--host`` says otherwise, at ``/mcp``.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, create_model

from saturate.graph import api
from saturate.state.errors import BadInput
from saturate.state.settings import Settings
from saturate.views.progress import round_parts

INSTRUCTIONS = (
    "saturate researches a question by searching until the results stop being new, then answers from what it "
    "found, citing its sources. `research` runs a session (its `settings` object takes any saturate setting, e.g. "
    '{"source": "local", "max_rounds": 5}); `verify` checks a claim (True/False/Invalid); `resume` continues an '
    "interrupted or cancelled session, or one waiting for review (give `review`); `show` reads a session's rounds; "
    "`runs` lists the sessions."
)


# every setting, each optional: what a client may override (the defaults and SATURATE_* variables give the rest)
def _optional(annotation: Any) -> Any:
    """A setting's type, or None (a setting the client leaves out)."""
    return annotation | None


_OVERRIDE_FIELDS: dict[str, Any] = {
    name: (_optional(field.annotation), Field(None, description=field.description))
    for name, field in Settings.model_fields.items()
}
SettingsOverrides = create_model("SettingsOverrides", **_OVERRIDE_FIELDS)


class Cited(BaseModel):
    n: int
    title: str
    url: str


class SessionOutput(BaseModel):
    thread_id: str
    outcome: Literal["answer", "no_results", "True", "False", "Invalid", "review"]
    answer: str = Field("", description="The answer citing its sources as [n]; for a claim, the verdict and why.")
    short_answer: str = ""
    sources: list[Cited] = Field(default_factory=list, description="The sources the answer's [n] refer to.")
    stop_reason: str = ""
    rounds: int = 0
    review: dict | None = Field(
        None, description="outcome review: what waits for a person (the plan's queries or the answer); resume it."
    )


class Round(BaseModel):
    round: int
    query: str
    source: str = ""
    new: int = 0
    total: int = 0
    novelty: float | None = None
    decision: str = ""
    reason: str = ""


class SessionView(BaseModel):
    thread_id: str
    task: str
    status: str
    rounds: list[Round] = Field(default_factory=list)
    result: SessionOutput | None = None


class Run(BaseModel):
    thread_id: str
    task: str
    rounds: int
    status: str
    updated: str


class RunList(BaseModel):
    sessions: list[Run]


class _Cancelled(Exception):
    """Raised between two steps of a session whose tool call was cancelled (the step under way is saved)."""


def _output(result) -> SessionOutput:
    return SessionOutput(
        thread_id=result.thread_id,
        outcome=result.outcome,
        answer=result.answer,
        short_answer=result.short_answer,
        sources=[Cited(n=s.n, title=s.title, url=s.url) for s in result.sources],
        stop_reason=result.stop_reason,
        rounds=result.rounds,
        review=result.review,
    )


class _Progress:
    """The session's stream handler: each gate's round event becomes a progress notification; a cancelled call
    stops the session between two steps."""

    stream_mode = ["updates", "custom"]

    def __init__(self, ctx: Context, task: str, cap: int):
        self.ctx, self.task, self.cap = ctx, task, cap
        self.cancelled = threading.Event()

    def __call__(self, chunk: Any) -> None:
        if self.cancelled.is_set():
            raise _Cancelled
        mode, data = chunk if isinstance(chunk, tuple) else ("updates", chunk)
        if mode == "custom" and isinstance(data, dict) and data.get("event") == "round":
            line = "".join(text for text, _style in round_parts(data, self.task))
            n = int(data.get("round") or 0)
            anyio.from_thread.run(self.ctx.report_progress, float(n), float(max(self.cap, n)), line)


async def _run(ctx: Context, task: str, cap: int, call) -> SessionOutput:
    """``call(stream_handler)`` on a worker thread; tool errors for bad input and failures; on cancellation the
    session stops at its next step and the cancellation goes on."""
    progress = _Progress(ctx, task, cap)
    try:
        result = await anyio.to_thread.run_sync(lambda: call(progress), abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        progress.cancelled.set()  # the worker stops at the next step; its last step is checkpointed
        raise
    except BadInput as exc:
        raise ToolError(str(exc)) from None
    except _Cancelled:
        raise ToolError("the session was cancelled; continue it with resume") from None
    return _output(result)


def build_server(home: str | None = None) -> MCPServer:
    """The MCP server; sessions live in ``home`` (the data directory; default as for the CLI)."""
    server = MCPServer("saturate", instructions=INSTRUCTIONS)

    async def start(ctx: Context, text: str, settings: BaseModel | None, call) -> SessionOutput:
        """A new session of ``call`` (api.research or api.verify) for ``text`` with the settings given."""
        overrides = settings.model_dump(exclude_none=True) if settings is not None else {}
        cap = int(overrides.get("max_rounds") or Settings.model_fields["max_rounds"].default)
        return await _run(ctx, text, cap, lambda handler: call(text, home=home, stream_handler=handler, **overrides))

    @server.tool()
    async def research(
        task: str,
        ctx: Context,
        settings: SettingsOverrides | None = None,  # type: ignore[valid-type]
        thread_id: str | None = None,
    ) -> SessionOutput:
        """Research a question: search until the results stop being new, then answer citing the sources."""
        return await start(ctx, task, settings, functools.partial(api.research, thread_id=thread_id))

    @server.tool()
    async def verify(
        claim: str,
        ctx: Context,
        settings: SettingsOverrides | None = None,  # type: ignore[valid-type]
        thread_id: str | None = None,
    ) -> SessionOutput:
        """Verify a claim: research it and decide True, False or Invalid from the evidence, citing it."""
        return await start(ctx, claim, settings, functools.partial(api.verify, thread_id=thread_id))

    @server.tool()
    async def resume(thread_id: str, ctx: Context, review: dict | str | None = None) -> SessionOutput:
        """Continue a session from its last saved step (interrupted, cancelled, or waiting for review: then give
        `review`: "approve", {"action": "edit", "queries": [...]} or {"action": "more", "note": "..."})."""
        try:
            state = await anyio.to_thread.run_sync(lambda: api.session_state(thread_id, home=home))
        except BadInput as exc:
            raise ToolError(str(exc)) from None
        settings = Settings.model_validate(state["settings"])
        return await _run(
            ctx,
            state.get("task", ""),
            settings.max_rounds,
            lambda handler: api.resume(thread_id, home=home, stream_handler=handler, review=review),
        )

    @server.tool()
    async def show(thread_id: str) -> SessionView:
        """A session's rounds (query, novelty, decision and why), status and result."""
        try:
            state = await anyio.to_thread.run_sync(lambda: api.session_state(thread_id, home=home))
        except BadInput as exc:
            raise ToolError(str(exc)) from None
        rounds = [
            Round(**{k: rec.get(k) for k in Round.model_fields if rec.get(k) is not None})
            for rec in state.get("records") or []
        ]
        paused_or_done = state.get("result") or state.get("_review")
        result = _output(api.result_of(state, thread_id)) if paused_or_done else None
        return SessionView(
            thread_id=thread_id, task=state.get("task", ""), status=state["_status"], rounds=rounds, result=result
        )

    @server.tool()
    async def runs() -> RunList:
        """The sessions, newest first: thread id, task, rounds, status."""
        sessions = await anyio.to_thread.run_sync(lambda: api.list_sessions(home=home))
        return RunList(
            sessions=[
                Run(
                    thread_id=s["thread"],
                    task=s["task"],
                    rounds=s["rounds"],
                    status=s["status"],
                    updated=str(s["updated"]),
                )
                for s in sessions
            ]
        )

    return server
