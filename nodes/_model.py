"""Calling the optional chat model from a node: prompts, defensive parsing, counted calls.

**Prompts** follow one rule everywhere: each is a ``Prompt`` constant (system
and user templates with their sampling options) in the module that formats and
sends it — the node, or the private helper a node calls. Every ``Prompt``
registers itself under its role name in ``PROMPTS``, so tools that must know the
prompts (the scripted Ollama server of the tests and benchmarks) read them from
there instead of restating them.

Small local models drift, so every reply is cleaned (``<think>`` blocks
stripped) and parsed defensively by the caller; every call reports its token
usage so rounds and sessions can count them.

**Structured replies**: a prompt that expects JSON names its pydantic model (``Prompt.reply``); the call asks
for it in the protocol's schema-constrained form (Ollama's ``format`` with the JSON schema, an OpenAI-compatible
server's ``response_format`` ``json_schema``), and the reply is validated against the model. A server that
ignores the schema is read by the defensive text parser, and one that refuses it (HTTP 400) is asked again
without it; either way ``Reply.notes`` says so.

**Context that fits**: before a call the prompt's tokens are estimated (``estimate_tokens``) against the model's
context (``context_tokens``: Ollama's ``num_ctx``, an OpenAI-compatible server's reported context) less the
reply's allowance; a prompt over it has its ``Prompt.trim`` fields (knowledge, passages, results) cut from their
end, whole lines first, with a note, instead of letting the server truncate it silently.

**Hostile replies** are bounded before anything reads them: a reply is cut at
``MAX_REPLY_CHARS`` characters (and the cut noted in ``Reply.notes``), JSON is
extracted in linear time (``parse_json_object``), and a call whose model has a
timeout (``call_timeout``: ChatOllama's ``client_kwargs["timeout"]``, set from
``model_timeout_s`` by graph/models.py) runs under a deadline for the whole call,
so a server dripping its reply cannot hold a node longer than that.
"""

from __future__ import annotations

import contextvars
import json
import math
import re
import weakref
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import TypeAdapter, ValidationError

from saturate.nodes._deadline import DeadlineExceeded, call_with_deadline
from saturate.state.secrets import redact
from saturate.state.text import defuse, term_set

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d+)?|\.\d+)")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
MAX_QUERY_CHARS = 300  # a query a model writes is cut here (plans, gap queries, loop decisions)
# A reply is cut here before anything parses it (the cut is noted). The prompts ask for at most 600 tokens
# (num_predict), a few thousand characters; a server ignoring num_predict must not feed the parsers megabytes.
MAX_REPLY_CHARS = 20_000
MAX_JSON_ATTEMPTS = 16  # parse_json_object tries a JSON object at no more than this many '{' of a reply
# Tokens per UTF-8 byte, estimated on the safe side: English runs about 4 bytes a token, so 3 over-counts it by a
# quarter; a CJK character (3 bytes) is about one token. No tokenizer is at hand for an arbitrary served model.
BYTES_PER_TOKEN = 3.0
CONTEXT_MARGIN = 64  # tokens kept free beside the estimate: the chat template's role markers and separators

PROMPTS: dict[str, Prompt] = {}


@dataclass(frozen=True)
class Prompt:
    """A prompt: its role name, system and user templates (``str.format`` fields) and sampling options."""

    name: str
    system: str
    user: str
    options: dict = field(default_factory=dict)
    reply: Any = None  # the type its JSON reply must have (a pydantic model), or None for free text
    trim: tuple[str, ...] = ()  # the fields cut, in this order, when the prompt exceeds the model's context

    def __post_init__(self) -> None:
        if PROMPTS.setdefault(self.name, self) is not self:
            raise ValueError(f"two prompts are named {self.name!r}")

    def schema(self) -> dict | None:
        """The JSON schema of its reply (what a server is asked to constrain its output to), or None."""
        return TypeAdapter(self.reply).json_schema() if self.reply is not None else None

    def fits(self, reply_text: str) -> bool:
        """Whether a reply is exactly the JSON asked for (validated against ``reply``)."""
        try:
            TypeAdapter(self.reply).validate_json(reply_text.strip())
        except (ValidationError, ValueError):
            return False
        return True

    def echoes(self, query: str, task: str) -> bool:
        """Whether a query the model wrote is only the prompt's own words (its example, its instructions: "first
        query", "Next query:", "...") and none of the task's: a small model copies the example it is shown."""
        words = term_set(query)
        own = term_set(re.sub(r"\{[^{}]*\}", " ", f"{self.system} {self.user}") + " query queries search")
        return not words or (words <= own and not words & term_set(task))

    @property
    def marker(self) -> str:
        """The system text before its first template field: what identifies this prompt in a request."""
        return self.system.split("{", 1)[0]

    def render(self, **fields: Any) -> tuple[str, str]:
        """(system, user) with ``fields`` filled in (each template takes the fields it names).

        Every text field is defused first (``state.text.defuse``): results, pages and corpus text are
        untrusted, whatever their source, and cannot open or close the prompt's data delimiters.
        """
        fields = {k: defuse(v) if isinstance(v, str) else v for k, v in fields.items()}
        return self.system.format(**fields), self.user.format(**fields)


class ModelTimeout(TimeoutError):
    """A model call took longer than its timeout in all (not a ``DeadlineExceeded``: that is the caller's own)."""


class ContextExceeded(ValueError):
    """The server refused a prompt longer than its context and said how long that is (``tokens``)."""

    def __init__(self, tokens: int, reason: str):
        super().__init__(reason)
        self.tokens = tokens


# How servers say the prompt is longer than their context, with its size: the OpenAI form (vLLM, llama-cpp-python:
# "This model's maximum context length is 2048 tokens"), llama-cpp-python's own ("exceed context window of 2048"),
# llama.cpp's server (its JSON error carries "n_ctx": 2048)
_CONTEXT_SAID = re.compile(
    r"maximum context length is (\d+)|context window of (\d+)|['\"]n_ctx['\"]\s*:\s*(\d+)", re.IGNORECASE
)


def reported_context(exc: BaseException) -> int | None:
    """The context size (tokens) a server's refusal of a too-long prompt states (HTTP 400), else None."""
    if _status(exc) != 400:
        return None
    m = _CONTEXT_SAID.search(str(exc))
    value = int(next(g for g in m.groups() if g)) if m else 0
    return value if value > 0 else None


@dataclass
class Reply:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    notes: list[str] = field(default_factory=list)  # what was done to the prompt or the reply (a cut, a fallback)


def strip_think(text: str) -> str:
    """Remove <think>...</think> blocks (an unclosed one runs to the end)."""
    return _THINK.sub("", text or "").strip()


# How an OpenAI-compatible server is asked for a JSON schema: the OpenAI form, else llama-cpp-python's own (its server
# refuses "json_schema" with HTTP 500 and takes the schema in a "json_object" response format)
SCHEMA_FORMS = ("json_schema", "json_object")


def with_options(model: Any, schema: dict | None = None, form: str = "json_schema", **options: Any) -> Any:
    """The model with per-prompt options.

    Options are the prompts' Ollama names (temperature, num_predict); ``schema`` a JSON schema the reply must
    follow. ChatOllama takes them as fields (``format`` for the schema). An OpenAI-compatible model takes
    ``temperature`` as a field and the rest in the request body as those servers spell it (``max_tokens``;
    ``response_format`` ``json_schema``): sent as ``extra_body``, which the openai client merges into the JSON
    as is, where langchain-openai would rename ``max_tokens`` and route a ``response_format`` through its own
    parsing. Other pydantic chat models get the options they have fields for. The model is copied, so the shared
    one keeps its own settings (context, host).
    """
    fields = getattr(type(model), "model_fields", {})
    update = {k: v for k, v in options.items() if k in fields}
    if "num_ctx" in fields and schema is not None:  # ChatOllama
        update["format"] = schema
    elif "extra_body" in fields and "num_ctx" not in fields:  # ChatOpenAI and its kin
        body = dict(getattr(model, "extra_body", None) or {})
        if "num_predict" in options:
            body["max_tokens"] = options["num_predict"]
        if schema is not None and form == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        elif schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
        if body:
            update["extra_body"] = body
    return model.model_copy(update=update) if update else model


def call_timeout(model: Any) -> float | None:
    """Seconds one call of ``model`` may take in all, or None (unbounded).

    It is what graph/models.py sets from ``model_timeout_s``: ChatOllama's ``client_kwargs["timeout"]``,
    ChatOpenAI's ``request_timeout``, when that is a number. httpx applies it to each read; ``call_model`` to the
    whole call.
    """
    timeout = (getattr(model, "client_kwargs", None) or {}).get("timeout")
    if timeout is None:
        timeout = getattr(model, "request_timeout", None)
    return float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None


def context_tokens(model: Any) -> int | None:
    """The model's context in tokens: ChatOllama's ``num_ctx``, else ``metadata["context_tokens"]`` (set by
    graph/models.py from the server's report for an OpenAI-compatible model); None when unknown."""
    value = getattr(model, "num_ctx", None) or (getattr(model, "metadata", None) or {}).get("context_tokens")
    return int(value) if isinstance(value, int) and value > 0 else None


def learn_context(model: Any, tokens: int) -> bool:
    """Record the context a server stated on the model (``context_tokens`` reads it); False when it cannot be."""
    metadata = getattr(model, "metadata", None)
    if isinstance(metadata, dict):
        metadata["context_tokens"] = tokens
        return True
    if isinstance(getattr(model, "num_ctx", None), int):
        model.num_ctx = tokens
        return True
    return False


def estimate_tokens(text: str) -> int:
    """A safe-side estimate of the tokens ``text`` takes (``BYTES_PER_TOKEN``)."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def _cut(text: str, size: int) -> str:
    """``text`` cut to at most ``size`` characters, at a line break when one is in its last half."""
    if len(text) <= size:
        return text
    head = text[:size]
    at = head.rfind("\n")
    return head[:at] if at >= size // 2 else head


def fit_prompt(prompt: Prompt, fields: dict, context: int | None) -> tuple[dict, str]:
    """(fields, note): ``fields`` with ``prompt.trim`` fields cut so that the rendered prompt and its reply's
    allowance fit ``context`` tokens; the note says what was cut ('' when nothing was)."""
    if not context or not prompt.trim:
        return fields, ""
    reserve = int(prompt.options.get("num_predict") or 0) + CONTEXT_MARGIN  # the reply's tokens and the template
    budget = context - reserve
    before = estimate_tokens("".join(prompt.render(**fields)))
    over = before - budget
    if over <= 0:
        return fields, ""
    fields, cuts = dict(fields), []
    for name in prompt.trim:
        value = fields.get(name)
        if over <= 0 or not isinstance(value, str) or not value:
            continue
        # tokens to bytes to characters: a character is at least one byte, so this cuts enough or more
        keep = max(0, len(value) - math.ceil(over * BYTES_PER_TOKEN))
        fields[name] = _cut(value, keep)
        cuts.append(f"{name} {len(value):,} → {len(fields[name]):,} characters")
        over = estimate_tokens("".join(prompt.render(**fields))) - budget
    after = estimate_tokens("".join(prompt.render(**fields)))
    still = "" if over <= 0 else "; still over it"
    return fields, (
        f"prompt of ~{before:,} tokens over the {context:,}-token context less {reserve:,} for the reply: cut "
        f"{', '.join(cuts) or 'nothing cuttable'} to ~{after:,} tokens{still}"
    )


def _status(exc: BaseException) -> int | None:
    """The HTTP status a client's error carries (ollama.ResponseError, openai.APIStatusError), else None."""
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


# What a session learned about its chat model's server, by the model object's identity, confirmed by a weak reference
# (chat models are not hashable), so the entry goes with the model, that is with its session:
# "form": the form of JSON schema that worked after a refusal ("json_object") or None (none did), used from then on
# (a refusal costs a failed request, and the openai client retries a 5xx once); "timeouts": calls in a row that timed
# out (``MAX_TIMEOUTS_IN_A_ROW`` of them and the model is not asked again).
_LEARNED: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}
MAX_TIMEOUTS_IN_A_ROW = 2


def _learned(model: Any) -> dict[str, Any]:
    """What was learned about ``model``'s server so far (a fresh dict, not kept, for a model that cannot be)."""
    key = id(model)
    entry = _LEARNED.get(key)
    if entry is not None and entry[0]() is model:
        return entry[1]
    found: dict[str, Any] = {}
    try:
        _LEARNED[key] = (weakref.ref(model, lambda _ref: _LEARNED.pop(key, None)), found)
    except TypeError:  # not weakly referable: asked the first way each time, as before
        pass
    return found


def _schema_form(model: Any) -> str | None:
    """The form of JSON schema this model's server takes: "json_schema" until it refused one."""
    return _learned(model).get("form", "json_schema")


def _remember_form(model: Any, form: str | None) -> None:
    _learned(model)["form"] = form


def timed_out(exc: BaseException) -> bool:
    """Whether a failed call ran out of time: ``ModelTimeout`` (the whole call) or the client's own read timeout
    (httpx's ``ReadTimeout``, openai's ``APITimeoutError``), whichever fired first, or one they wrap."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return False
        if isinstance(seen, TimeoutError) or "Timeout" in type(seen).__name__:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _refused(exc: BaseException) -> bool:
    """Whether a failed call looks like a refusal of its JSON schema (400, 422, or a server error)."""
    status = _status(exc)
    return status is not None and (status in (400, 422) or status >= 500)


def call_model(model: Any, system: str, user: str, schema: dict | None = None, **options: Any) -> Reply:
    """One chat call; the reply text without think blocks, and its token usage. Raises on failure.

    ``schema``: the JSON schema the reply is asked to follow (``with_options``); a server refusing it (HTTP 400 or
    422, or a server error: llama-cpp-python's server answers the OpenAI form with HTTP 500) is asked in
    llama-cpp-python's ``json_object`` form, then without a schema, and ``Reply.notes`` says so with the server's
    reason; the form that worked is used for that model from then on (``_LEARNED``). The whole call is bounded by
    ``call_timeout(model)`` (``ModelTimeout`` past it; the abandoned request is left to end on its own, which
    graph/models.py bounds on the wire); after ``MAX_TIMEOUTS_IN_A_ROW`` calls in a row that timed out the model is not
    asked again (``ModelTimeout`` at once; the caller records it and its heuristic answers): a one-slot server still
    generating an abandoned reply would time the next call out too, and a session would wait out every call. The
    reply is cut at ``MAX_REPLY_CHARS`` before its think blocks are
    stripped, and the cut is noted in ``Reply.notes``.
    """
    learned = _learned(model)
    if learned.get("timeouts", 0) >= MAX_TIMEOUTS_IN_A_ROW:
        raise ModelTimeout(
            f"not asked: the model timed out {learned['timeouts']} times in a row (a busy or too slow server); "
            "the heuristics answer for the rest of this session"
        )
    messages = [SystemMessage(content=system), HumanMessage(content=user)]
    notes: list[str] = []
    form = _schema_form(model) if schema is not None else None
    if schema is not None and form is None:
        schema = None
        notes.append("the server refused a JSON schema earlier in this session: asked without one")
    try:
        reply = _invoke(model, messages, schema, options, form or "json_schema")
    except Exception as exc:
        if timed_out(exc):
            learned["timeouts"] = learned.get("timeouts", 0) + 1
        tokens = reported_context(exc)
        if tokens is not None:  # not a refusal of the schema: the prompt is longer than the server's context
            raise ContextExceeded(tokens, error_text(exc)) from exc
        if schema is None or not _refused(exc):
            raise
        reply = None
        if form == "json_schema" and "extra_body" in getattr(type(model), "model_fields", {}):
            try:  # llama-cpp-python's form of the same schema
                reply = _invoke(model, messages, schema, options, "json_object")
                notes.append(f"the server refused the JSON schema ({error_text(exc)}): asked in the json_object form")
                _remember_form(model, "json_object")
            except Exception as again:
                if not _refused(again):
                    raise
        if reply is None:
            notes.append(f"the server refused the JSON schema ({error_text(exc)}): asked again without it")
            reply = _invoke(model, messages, None, options)
            _remember_form(model, None)
    learned["timeouts"] = 0
    content = reply.content if hasattr(reply, "content") else reply
    if isinstance(content, list):  # content blocks
        content = " ".join(c.get("text", "") if isinstance(c, dict) else str(c) for c in content)
    content = redact(str(content))  # a reply that echoes the API key keeps none of it (answer, knowledge, checkpoints)
    if len(content) > MAX_REPLY_CHARS:
        notes.append(f"model reply of {len(content):,} characters cut to {MAX_REPLY_CHARS:,} before parsing")
        content = content[:MAX_REPLY_CHARS]
    usage = getattr(reply, "usage_metadata", None) or {}
    tokens_in, tokens_out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    return Reply(strip_think(content), tokens_in, tokens_out, notes)


def _invoke(model: Any, messages: list, schema: dict | None, options: dict, form: str = "json_schema") -> Any:
    """The call itself, under ``call_timeout(model)``."""
    invoke = with_options(model, schema, form, **options).invoke
    timeout = call_timeout(model)
    if timeout is None:
        return invoke(messages)
    try:  # the call runs in a worker thread: it keeps this thread's context (callbacks, tracing)
        return call_with_deadline(contextvars.copy_context().run, invoke, messages, timeout=timeout)
    except DeadlineExceeded:
        raise ModelTimeout(f"no complete reply within {timeout:g} s (model_timeout_s)") from None
    except ModelTimeout:
        raise
    except TimeoutError:  # the client's own bound on the same timeout fired first (gguf: the same 1 s): one outcome
        raise ModelTimeout(f"no complete reply within {timeout:g} s (model_timeout_s)") from None


def first_number(text: str) -> float | None:
    """The first number in the text ("7.5" is 7.5, "Score: 4 of 10" is 4, "-3" is -3); None when there is none."""
    m = _NUMBER.search(text or "")
    return float(m.group(0)) if m else None


first_int = first_number  # the former name (nodes/assess_novelty.py), which read "7.5" as 7


def first_line(text: str) -> str:
    """The first non-empty line, without surrounding quotes, bullets or a 'Query:' label."""
    for line in (text or "").splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
        line = re.sub(r"^(?:search\s+)?query\s*:\s*", "", line, flags=re.IGNORECASE)
        line = line.strip().strip("\"'“”‘’`").strip()
        if line:
            return line
    return ""


def _repair(text: str) -> str:
    """The light repair of a model's almost-JSON: single quotes made double, trailing commas dropped."""
    return _TRAILING_COMMA.sub(r"\1", text.replace("'", '"'))


def parse_json_object(text: str) -> dict | None:
    """The first JSON object in a reply (bare, in a ```json fence or inside prose), else None.

    Linear in the reply: an object is decoded (``json.JSONDecoder.raw_decode``, which ignores what follows
    it) at each '{' in turn, as is and then lightly repaired (single quotes, trailing commas), at no more than
    ``MAX_JSON_ATTEMPTS`` of them, so a reply of 300 KB of '{' costs a few failed decodes, not a backtracking
    regex's quadratic time.
    """
    text = strip_think(text)
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(MAX_JSON_ATTEMPTS):
        if start < 0:
            break
        for attempt, at in ((text, start), (_repair(text[start:]), 0)):
            try:
                value, _end = decoder.raw_decode(attempt, at)
            except (ValueError, RecursionError):  # RecursionError: nesting deeper than json decodes
                continue
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    return None


def error_text(exc: BaseException) -> str:
    """One line for a recorded failure: the exception's type and message with its lines joined (a server's reason is
    often past the first line), any API key in it masked, at most 300 characters."""
    msg = " ".join(str(exc).split())
    return redact(f"{type(exc).__name__}: {msg}")[:300]


class ModelUsage:
    """Counts one node's model calls and tokens for its round record."""

    def __init__(self, node: str):
        self.node, self.calls, self.tokens_in, self.tokens_out = node, 0, 0, 0
        self.notes: list[str] = []  # what was done to the replies (cuts), for the node's fallbacks
        self.by_node: dict[str, int] = {}  # calls per purpose (a node may merge another's usage: merge)

    def call(self, model: Any, prompt: Prompt, *, then: str = "", schema: dict | None = None, **fields: Any) -> Reply:
        """One call of ``prompt`` with ``fields``; ``then`` is appended to the user text (a retry's reminder).

        The fields are fitted to the model's context first (``fit_prompt``); a prompt with a ``reply`` type asks
        for that JSON schema (or ``schema``, a narrower one for this call: the slot fill's own keys), and a reply
        that does not follow it is noted (the caller's text parser reads it).
        """
        context = context_tokens(model)
        fitted, cut = fit_prompt(prompt, fields, context)
        system, user = prompt.render(**fitted)
        self.calls += 1
        self.by_node[self.node] = self.by_node.get(self.node, 0) + 1
        try:
            reply = call_model(
                model, system, f"{user}\n{then}" if then else user, schema or prompt.schema(), **prompt.options
            )
        except ContextExceeded as exc:
            # the server did not report its context (llama-cpp-python) and the setting (num_ctx) overstated it:
            # learned from the refusal, for this call and the session's next ones, and asked once more, fitted
            if (context is not None and exc.tokens >= context) or not learn_context(model, exc.tokens):
                raise
            fitted, cut = fit_prompt(prompt, fields, exc.tokens)
            system, user = prompt.render(**fitted)
            self.calls += 1
            self.by_node[self.node] += 1
            reply = call_model(model, system, f"{user}\n{then}" if then else user, prompt.schema(), **prompt.options)
            reply.notes.insert(
                0,
                f"the server's context is {exc.tokens:,} tokens (it refused a longer prompt): "
                "prompts fitted to it from now on",
            )
        if cut:
            reply.notes.insert(0, cut)
        if prompt.reply is not None and reply.text and not prompt.fits(reply.text):
            reply.notes.append(f"reply does not follow the {prompt.name} JSON schema: read by the text parser")
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        for note in reply.notes:  # once each: a server ignoring the schema would say so at every call
            if f"{self.node}: {note}" not in self.notes:
                self.notes.append(f"{self.node}: {note}")
        return reply

    def merge(self, other: ModelUsage) -> None:
        """Count another usage's calls and tokens in this one (its notes are the caller's to keep)."""
        self.calls += other.calls
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        for node, n in other.by_node.items():
            self.by_node[node] = self.by_node.get(node, 0) + n

    def record(self) -> dict:
        """Fields for the round record (summed across nodes by the records reducer)."""
        return {
            "model_calls": self.calls,
            "model_calls_by_node": {k: v for k, v in self.by_node.items() if v} if self.calls else {},
            "model_tokens": {"in": self.tokens_in, "out": self.tokens_out} if self.calls else {},
        }
