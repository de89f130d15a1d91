"""``saturate mcp``: saturate as tools of a Model Context Protocol server (the official ``mcp`` SDK's MCPServer).

Tools: ``research``, ``verify``, ``resume``, ``show`` and ``runs``. Inputs are typed (``settings`` is an optional
object whose fields are the Settings', each optional: the JSON schema a client sees lists them); outputs are
structured (``SessionOutput``: thread id, outcome, answer, cited sources, stop reason, and what waits for review
when the session pauses). A session runs on a worker thread; each round is a progress notification
(``round / round cap``, the round's line as the message). A cancelled call stops its session at the next step
(the step under way finishes and is checkpointed), so ``resume`` continues it. Bad input (a ``BadInput``) and any
other failure come back as tool errors; the server keeps serving.

**The trust boundary.** An MCP client is not the server's operator: a tool's ``settings`` may set only what a
researcher tunes about one session (``CLIENT_SETTINGS``: rounds, thresholds, ranking, reading, verification,
multi-source limits, search options that name no address). Endpoints, keys, files and paths — the model and its
server, SearXNG's and Ollama's addresses, a corpus or a tier file, the database, what fetching may reach — come from
the server's own configuration (its environment and flags) and are not in the tool's schema; a client that sends one
gets a tool error naming it. ``source`` is accepted only when the operator allowed that value (``saturate mcp
--allow-source KIND``, repeatable; a value that is no source kind is refused at start); ``sources`` (several sources
in parallel) is not a tool setting. An argument a tool does not take (``source`` beside ``task`` instead of inside
``settings``) is a tool error too: the SDK would drop it silently.

Transports: stdio (default: a client starts ``saturate mcp``), or streamable HTTP (``--http``) at ``/mcp``, bound
to 127.0.0.1 unless ``--host`` says otherwise (a non-loopback address needs ``--allow-remote`` and prints a warning).
Over HTTP every request needs ``Authorization: Bearer <token>`` (the SDK's bearer middleware with
``StaticToken``): the token given with ``--token`` or ``SATURATE_MCP_TOKEN``, else one generated at start and
printed once on stderr; ``--no-token`` drops it, on a loopback address only. The SDK's Host/Origin checks stay.
"""

from __future__ import annotations

import functools
import hmac
import threading
from typing import Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator

from saturate.graph import api
from saturate.state.errors import BadInput
from saturate.state.settings import Settings, not_bool_number
from saturate.state.source_kinds import SOURCE_CHOICES
from saturate.views.progress import round_parts

INSTRUCTIONS = (
    "saturate researches a question by searching until the results stop being new, then answers from what it "
    "found, citing its sources. `research` runs a session (its `settings` object takes the session's own "
    'settings, e.g. {"max_rounds": 5, "novelty_threshold": 2}; the server\'s operator sets models, sources and '
    "endpoints); `verify` checks a claim (True/False/Invalid); `resume` continues an interrupted or cancelled "
    "session, or one waiting for review (give `review`); `show` reads a session's rounds; `runs` lists the sessions."
)


# What a client may set about one session. Everything else (endpoints, keys, files, paths, the model, the server's
# bounds: timeouts, budgets, sizes of what is read) is the operator's, from the server's environment and flags.
CLIENT_SETTINGS = frozenset(
    """mode max_rounds min_rounds fixed_rounds novelty_threshold novelty_epsilon novelty_method stop_round seed
    results_per_query exclude_seen retrieval hybrid_weight reader reader_min_p reader_rules_words reader_stop_p
    rerank rerank_depth rerank_weight search_quality_floor knowledge_max_chars url_enrich_count enrich_overlap_max
    review ddg_region ddg_safesearch ddg_timelimit searxng_categories searxng_language searxng_time_range
    searxng_safesearch verify_profile verify_threshold verify_min_sources verify_margin verify_max_attempts
    verify_partial_weight verify_date_window_days duplicate_stop_share empty_stop_queries breadcrumb_limit
    entity_limit""".split()
)
SOURCE_SETTINGS = ("source",)  # a client's value must be one the operator allowed (--allow-source)


def _optional(annotation: Any) -> Any:
    """A setting's type, or None (a setting the client leaves out)."""
    return annotation | None


_OVERRIDE_FIELDS: dict[str, Any] = {
    name: (_optional(field.annotation), Field(None, description=field.description))
    for name, field in Settings.model_fields.items()
    if name in CLIENT_SETTINGS or name in SOURCE_SETTINGS
}


def _no_bool_number(cls, value: Any, info: ValidationInfo) -> Any:
    """A client's ``true`` for a number is refused here, as by Settings: this model would take it as 1 first."""
    return not_bool_number(value, Settings.model_fields[str(info.field_name)].annotation)


# extra="forbid": a setting outside the list (an endpoint, a key, a path) is refused, never silently dropped
SettingsOverrides = create_model(  # type: ignore[call-overload]
    "SettingsOverrides",
    __config__=ConfigDict(extra="forbid"),
    __validators__={"no_bool_number": field_validator("*", mode="before")(_no_bool_number)},
    **_OVERRIDE_FIELDS,
)


class StaticToken:
    """The SDK's ``TokenVerifier`` for one bearer token (compared in constant time)."""

    def __init__(self, token: str):
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return AccessToken(token=token, client_id="saturate-mcp-client", scopes=[])
        return None


def refuse_unknown_arguments(ctx: Context, tool: str, known: tuple[str, ...]) -> None:
    """ToolError naming an argument of the call that ``tool`` does not take. The SDK drops such an argument
    silently, so a client that sent ``source`` beside ``task`` (not inside ``settings``) believed it had chosen a
    source while the server's own was used; the call's raw arguments are in its request context."""
    try:
        params = ctx.request_context.params or {}
    except ValueError:  # called outside a request (a direct call in Python): nothing to compare
        return
    arguments = params.get("arguments") or {}
    unknown = sorted(str(name) for name in arguments if name not in known)
    if unknown:
        hint = " (settings go inside `settings`)" if any(n in Settings.model_fields for n in unknown) else ""
        takes = ", ".join(known) or "no arguments"
        named = ", ".join(repr(n[:80]) for n in unknown[:5])
        raise ToolError(f"{tool}: unknown argument(s) {named}; it takes {takes}{hint}")


def check_allowed_sources(values: list[str]) -> frozenset[str]:
    """The sources an operator lets clients choose (``--allow-source``, repeatable, each a kind or a
    comma-separated list of kinds), checked: a value no ``source`` can be (``bogus``, ``local:/path``) is bad input,
    where before it was accepted and matched nothing."""
    kinds = [kind.strip() for value in values for kind in value.split(",") if kind.strip()]
    for kind in kinds:
        if kind not in SOURCE_CHOICES:
            raise BadInput(f"--allow-source {kind[:80]!r}: not a source; choose from {', '.join(SOURCE_CHOICES)}")
    return frozenset(kinds)


def client_overrides(settings: BaseModel | None, allowed_sources: frozenset[str]) -> dict[str, Any]:
    """The settings a client gave, checked against the trust boundary (module docstring); ToolError otherwise."""
    overrides = settings.model_dump(exclude_none=True) if settings is not None else {}
    refused = sorted(k for k in overrides if k not in CLIENT_SETTINGS and k not in SOURCE_SETTINGS)
    if refused:  # only reachable when the model lets extras through; kept as the rule itself
        raise ToolError(
            f"settings: {', '.join(refused)} cannot be set by an MCP client (the server's operator sets it)"
        )
    for key in SOURCE_SETTINGS:
        if key in overrides:
            values = [v.strip() for v in str(overrides[key]).split(",") if v.strip()]
            outside = [v for v in values if v not in allowed_sources]
            if outside:
                allowed = ", ".join(sorted(allowed_sources)) or "none"
                raise ToolError(
                    f"settings.{key}: {outside[0][:80]!r} is not a source this server allows its clients "
                    f"(allowed: {allowed}; the operator adds one with saturate mcp --allow-source VALUE)"
                )
    return overrides


class Cited(BaseModel):
    n: int
    title: str
    url: str


class BriefSentence(BaseModel):
    text: str
    sources: list[int] = Field(default_factory=list, description="The [n] of the source it is taken from.")
    confirmed_by: list[int] = Field(default_factory=list, description="Other sources that say it too.")
    contradicted_by: list[int] = Field(default_factory=list, description="Other sources that give another value.")
    status: str = Field("single source", description="confirmed, single source or contradicted")


class BriefPart(BaseModel):
    part: str = Field(description="The part of the question: a side of a comparison, causes, effects, how, ...")
    kind: str = ""
    sentences: list[BriefSentence] = Field(default_factory=list)


class SessionOutput(BaseModel):
    thread_id: str
    outcome: Literal["answer", "no_results", "True", "False", "Invalid", "review"]
    answer: str = Field("", description="The answer citing its sources as [n]; for a claim, the verdict and why.")
    short_answer: str = ""
    brief: list[BriefPart] = Field(
        default_factory=list, description="For a question: the best sentences of the sources for each of its parts."
    )
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
        brief=[BriefPart.model_validate(part) for part in getattr(result, "brief", None) or []],
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


def build_server(
    home: str | None = None,
    allowed_sources: frozenset[str] = frozenset(),
    token: str | None = None,
    url: str = "http://127.0.0.1:8765/mcp",
) -> MCPServer:
    """The MCP server; sessions live in ``home`` (the data directory; default as for the CLI). A client may choose
    only the ``allowed_sources``; with ``token`` every HTTP request needs it as a bearer token (``url``: where the
    server is reached, named in the SDK's protected-resource metadata)."""
    auth: dict[str, Any] = {}
    if token is not None:
        base = url.rsplit("/mcp", 1)[0]
        auth = {
            "token_verifier": StaticToken(token),
            "auth": AuthSettings(issuer_url=base, resource_server_url=url, validate_token_resource=False),  # type: ignore[arg-type]
        }
    server = MCPServer("saturate", instructions=INSTRUCTIONS, **auth)

    async def start(ctx: Context, text: str, settings: BaseModel | None, call) -> SessionOutput:
        """A new session of ``call`` (api.research or api.verify) for ``text`` with the settings given."""
        overrides = client_overrides(settings, allowed_sources)
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
        refuse_unknown_arguments(ctx, "research", ("task", "settings", "thread_id"))
        return await start(ctx, task, settings, functools.partial(api.research, thread_id=thread_id))

    @server.tool()
    async def verify(
        claim: str,
        ctx: Context,
        settings: SettingsOverrides | None = None,  # type: ignore[valid-type]
        thread_id: str | None = None,
    ) -> SessionOutput:
        """Verify a claim: research it and decide True, False or Invalid from the evidence, citing it."""
        refuse_unknown_arguments(ctx, "verify", ("claim", "settings", "thread_id"))
        return await start(ctx, claim, settings, functools.partial(api.verify, thread_id=thread_id))

    @server.tool()
    async def resume(thread_id: str, ctx: Context, review: dict | str | None = None) -> SessionOutput:
        """Continue a session from its last saved step (interrupted, cancelled, or waiting for review: then give
        `review`: "approve", {"action": "edit", "queries": [...]} or {"action": "more", "note": "..."})."""
        refuse_unknown_arguments(ctx, "resume", ("thread_id", "review"))
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
    async def show(thread_id: str, ctx: Context) -> SessionView:
        """A session's rounds (query, novelty, decision and why), status and result."""
        refuse_unknown_arguments(ctx, "show", ("thread_id",))
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
    async def runs(ctx: Context) -> RunList:
        """The sessions, newest first: thread id, task, rounds, status (a damaged session: status ``damaged: ...``)."""
        refuse_unknown_arguments(ctx, "runs", ())
        try:  # a damaged or unwritable sessions.db: its one line as the tool error, as show and research give it
            sessions = await anyio.to_thread.run_sync(lambda: api.list_sessions(home=home))
        except BadInput as exc:
            raise ToolError(str(exc)) from None
        return RunList(
            sessions=[
                Run(
                    thread_id=s["thread"],
                    task=s["task"],
                    rounds=s["rounds"],
                    status=s["status"],
                    updated=str(s["updated"] or ""),  # none for a damaged session
                )
                for s in sessions
            ]
        )

    return server
