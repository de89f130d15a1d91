"""A tiny counter-based generator whose whole state is two ints in the graph state.

``draw(state) -> (u, next_state)`` with u uniform in [0, 1). SplitMix64 of
(seed, counter): the same seed gives the same draws, also after a resume from a
checkpoint, because the counter is checkpointed with everything else.
"""

from __future__ import annotations

import os

_MASK = (1 << 64) - 1


def new_rng(seed: int | None) -> dict:
    if seed is None:
        seed = int.from_bytes(os.urandom(4), "big")
    return {"seed": int(seed), "draws": 0}


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def draw(rng: dict) -> tuple[float, dict]:
    x = _splitmix64((rng["seed"] * 0x100000001B3 + rng["draws"]) & _MASK)
    return (x >> 11) / float(1 << 53), {"seed": rng["seed"], "draws": rng["draws"] + 1}
