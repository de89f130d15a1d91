"""Every knob of a session: one name, one default, one place.

Values come from (highest first) Python keyword arguments / CLI flags, then
``SATURATE_<NAME>`` environment variables, then the defaults below. The field
descriptions are the documentation: the CLI help and the README table are
generated from them (``saturate settings --markdown``).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ENV_PREFIX = "SATURATE_"


class SettingsError(ValueError):
    """Invalid settings; the message names every bad field and why."""


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    # --- the loop -----------------------------------------------------------
    mode: Literal["saturate", "fixed"] = Field(
        "saturate",
        description="`saturate`: the novelty gate decides when to stop; `fixed`: exactly "
        "`fixed_rounds` rounds, no gate (the old dual-search baseline).",
    )
    max_rounds: int = Field(5, ge=1, le=50, description="Hard cap on search rounds.")
    min_rounds: int = Field(
        2, ge=1, le=50, description="Rounds that always run before the gate may stop (old SEARCHES_PER_TASK)."
    )
    fixed_rounds: int = Field(2, ge=1, le=50, description="Rounds run in `fixed` mode.")
    novelty_threshold: float = Field(
        3.0, ge=0, le=10, description="A round scoring under this (0-10) stops the loop after `min_rounds`."
    )
    novelty_epsilon: float = Field(
        0.15, ge=0, le=1, description="Probability that a sub-threshold round passes through anyway (epsilon-greedy)."
    )
    novelty_method: Literal["heuristic", "seed-heuristic"] = Field(
        "heuristic",
        description="`heuristic`: new results scored against everything the session accepted "
        "(seen ids and their vocabulary); `seed-heuristic`: the seed's word overlap against the "
        "rolling knowledge state only.",
    )
    seed: int | None = Field(
        None,
        ge=0,
        description="Seed of the epsilon draw. Unset: one is drawn at session start and recorded, "
        "so resume and replay still make the same decisions.",
    )
    # --- search -------------------------------------------------------------
    source: Literal["local", "ddg"] = Field(
        "local", description="`local`: SQLite FTS5 corpus (offline); `ddg`: DuckDuckGo web search."
    )
    corpus: str | None = Field(
        None,
        description="Local corpus: a JSONL file of {id,title,text[,url]} or a folder of .md/.txt files. "
        "Unset: the embedded Wikipedia vital-articles summaries.",
    )
    results_per_query: int = Field(5, ge=1, le=50, description="Results asked of the source per query.")
    exclude_seen: bool = Field(
        True,
        description="Ask the source for results the session has not accepted yet (over-fetch and skip them), "
        "so every round can add something; how many of the source's top results were repeats is recorded.",
    )
    search_quality_floor: int = Field(
        1800, ge=0, description="Round 1 results under this many characters trigger one retry with a simplified query."
    )
    cache_ttl_s: int = Field(86400, ge=0, description="Seconds a cached search result is reused (0 disables the cache).")
    ddg_region: str = Field("wt-wt", min_length=1, description="DuckDuckGo region, e.g. `us-en`, `wt-wt` (no region).")
    ddg_safesearch: Literal["on", "moderate", "off"] = Field("moderate", description="DuckDuckGo safe search.")
    ddg_timelimit: Literal["d", "w", "m", "y"] | None = Field(None, description="DuckDuckGo time limit (day/week/month/year).")
    ddg_backend: str = Field("auto", min_length=1, description="ddgs backend(s), e.g. `auto`, `duckduckgo`, `bing`.")
    # --- knowledge, enrichment ----------------------------------------------
    knowledge_max_chars: int = Field(1500, ge=200, le=100_000, description="Cap on the rolling knowledge state.")
    url_enrich_count: int = Field(3, ge=0, le=20, description="At most this many accepted results get their full page.")
    enrich_overlap_max: float = Field(
        0.6, ge=0, le=1, description="Only results whose snippet overlaps the knowledge state by at most this are enriched."
    )
    page_max_chars: int = Field(20_000, ge=500, description="Per-page budget of full text kept by enrichment.")
    # --- input bounds ---------------------------------------------------------
    task_max_chars: int = Field(2000, ge=10, description="Longest task accepted; longer tasks are rejected, not cut.")

    @model_validator(mode="after")
    def _rounds_consistent(self) -> "Settings":
        if self.min_rounds > self.max_rounds:
            raise ValueError(f"min_rounds ({self.min_rounds}) must not exceed max_rounds ({self.max_rounds})")
        if self.fixed_rounds > self.max_rounds and self.mode == "fixed":
            raise ValueError(f"fixed_rounds ({self.fixed_rounds}) must not exceed max_rounds ({self.max_rounds})")
        return self

    def replace(self, **changes: Any) -> "Settings":
        return load_settings({**self.model_dump(), **changes}, env={})


def _format_error(err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "settings"
        value = e.get("input")
        shown = "" if isinstance(value, dict) else f" (got {value!r})"
        msg = e["msg"].removeprefix("Value error, ")
        lines.append(f"{loc}: {msg}{shown}")
    return "invalid settings: " + "; ".join(lines)


def env_overrides(env: dict[str, str] | os._Environ | None = None) -> dict[str, str]:
    """``SATURATE_<FIELD>`` variables that name a setting (other SATURATE_* are ignored)."""
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    for name in Settings.model_fields:
        raw = env.get(ENV_PREFIX + name.upper())
        if raw is not None:
            out[name] = raw
    return out


def load_settings(overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Settings:
    """Defaults < environment < overrides. Raises SettingsError with a readable message."""
    values: dict[str, Any] = {}
    for name, raw in env_overrides(env).items():
        values[name] = None if raw.strip().lower() in ("", "none", "null") and _nullable(name) else raw
    for name, value in (overrides or {}).items():
        if name not in Settings.model_fields:
            raise SettingsError(f"invalid settings: unknown setting {name!r}")
        values[name] = value
    try:
        return Settings.model_validate(values, strict=False)
    except ValidationError as err:
        raise SettingsError(_format_error(err)) from None


def _nullable(name: str) -> bool:
    return Settings.model_fields[name].default is None
