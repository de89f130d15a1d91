"""``settings_of(state)``: a session's Settings from its state, validated once per settings dict.

The graph state keeps the settings as a plain dict (``Settings.model_dump()``): the checkpoint stays JSON-
and msgpack-serialisable, and a resumed or forked session reads its knobs from its own checkpoint. Every node
needs them as a ``Settings``. LangGraph hands the nodes of a run the same dict object step after step, so the
validated object is kept beside it: a lookup by the dict's identity, confirmed by comparing the dict with a
deep copy taken when it was validated (a dict changed in place is validated again). A dict from a checkpoint
(a resume, a fork, ``update_state`` with new settings) is a new object: it is validated on its first use.
Validation is exactly ``Settings.model_validate(values)``, as the nodes did before; a dict that fails it is
not cached and raises the same error every time.

Bounded (``CACHE_SIZE`` dicts, least recently used out) and safe across threads (sessions run on threads).
The cache holds each dict it keys by ``id()``, so no other object can take that id while the entry lives.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from saturate.state.settings import Settings

CACHE_SIZE = 256

_lock = threading.Lock()
# id(settings dict) -> (the dict itself, a deep copy of it when validated, the validated Settings)
_cache: OrderedDict[int, tuple[Mapping[str, Any], Any, Settings]] = OrderedDict()


def settings_of(state: Mapping[str, Any]) -> Settings:
    """The validated ``Settings`` of ``state["settings"]`` (a dict, or already a ``Settings``)."""
    values = state["settings"]
    if isinstance(values, Settings):
        return values
    key = id(values)
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] is values and hit[1] == values:
            _cache.move_to_end(key)
            return hit[2]
    settings = Settings.model_validate(values)  # raises on bad settings: nothing is cached then
    with _lock:
        _cache[key] = (values, copy.deepcopy(values), settings)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return settings


def cache_clear() -> None:
    """Forget every validated settings dict (tests)."""
    with _lock:
        _cache.clear()
