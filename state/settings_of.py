"""``settings_of(state, context)``: a session's Settings from its state, validated once per settings dict.

The graph state keeps the settings as a plain dict (``Settings.model_dump()``): the checkpoint stays JSON-
and msgpack-serialisable, and a resumed or forked session reads its knobs from its own checkpoint. Every node
needs them as a ``Settings``. LangGraph hands the nodes of a run the same dict object step after step, so the
validated object is kept beside it, in the session's runtime ``Context`` (``Context.cache``: it lives and dies
with the context, and two contexts never share it): a lookup by the dict's identity, confirmed by comparing the
dict with a deep copy taken when it was validated (a dict changed in place is validated again). A dict from a
checkpoint (a resume, a fork, ``update_state`` with new settings) is a new object: it is validated on its first
use. Validation is exactly ``Settings.model_validate(values)``, as the nodes did before; a dict that fails it is
not cached and raises the same error every time. A caller without a context (a routing function, code outside a
run) gets the settings validated, uncached.

Bounded (``CACHE_SIZE`` dicts per context, least recently used out: a context may serve many sessions, e.g. a
benchmark's or the server's) and safe across threads (sessions run on threads). The cache holds each dict it
keys by ``id()``, so no other object can take that id while the entry lives.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from saturate.state.context import Context, SessionCache
from saturate.state.settings import Settings

CACHE = "state.settings_of"  # the cache's name in a Context (Context.cache)
CACHE_SIZE = 256


def cache_of(context: Context | None) -> SessionCache | None:
    """The validated-settings cache of ``context``'s session; None without a context."""
    return context.cache(CACHE, CACHE_SIZE) if isinstance(context, Context) else None


def settings_of(state: Mapping[str, Any], context: Context | None = None) -> Settings:
    """The validated ``Settings`` of ``state["settings"]`` (a dict, or already a ``Settings``), kept in
    ``context``'s cache (validated every time without a context)."""
    values = state["settings"]
    if isinstance(values, Settings):
        return values
    cache = cache_of(context)
    if cache is None:
        return Settings.model_validate(values)
    key = id(values)
    with cache.lock:
        # (the dict itself, a deep copy of it when validated, the validated Settings)
        hit: tuple[Mapping[str, Any], Any, Settings] | None = cache.get(key)
        if hit is not None and hit[0] is values and hit[1] == values:
            return hit[2]
    settings = Settings.model_validate(values)  # raises on bad settings: nothing is cached then
    with cache.lock:
        cache.put(key, (values, copy.deepcopy(values), settings))
    return settings


def cache_clear(context: Context) -> None:
    """Forget every settings dict ``context`` validated (tests)."""
    cache = cache_of(context)
    if cache is not None:
        with cache.lock:
            cache.clear()
