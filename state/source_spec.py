"""The configured sources of a multi-source session: what each is, its ceiling, its characteristics.

A source is named in the ``sources`` setting, either as a spec string or as a
JSON object. Spec strings (comma-separated on the CLI and in the environment)::

    KIND[:CORPUS][@CEILING]
    local:data/musique/corpus.jsonl                full-text BM25 over a JSONL file or folder
    titles:data/musique/corpus.jsonl@2             titles only (a shallow source), ceiling 2
    local                                          the `corpus` setting, else the embedded corpus
    wiki                                           the embedded Wikipedia summaries
    ddg                                            DuckDuckGo web search
    searxng                                        the SearXNG instance at `searxng_url`

JSON (a list; strings and objects may mix)::

    [{"name": "deep", "kind": "local", "corpus": "a.jsonl", "ceiling": 4, "description": "..."}, "ddg"]

The kinds, and whether each takes, needs or refuses a corpus, are the rows of ``state/source_kinds.py``
(``KINDS``): ``local`` (SQLite FTS5 BM25 over title and text), ``titles`` (the same
index matched on titles only: names, not facts — the shallow kind), ``wiki``
(the embedded Wikipedia vital-articles summaries), ``ddg`` and ``searxng`` (the web). A
source without a ceiling gets its kind's (``source_ceilings``), without a
description its kind's characteristics text (``source_descriptions``); both
reach the per-source decision. A source's ``depth`` (``shallow`` or ``rich``; default: its
kind's, ``DEFAULT_DEPTHS``) is the design's "typical depth" of a source: the decision prompt
states it, and the no-model heuristic (``nodes/multi/_loop_decision.py``) explores a shallow source
for at most ``SHALLOW_QUERIES`` queries and does not stop a rich one for duplicates alone before
``RICH_QUERIES`` (the design expects 1–2 queries of a shallow source, 5–8 of a rich one).
Names default to ``KIND`` or ``KIND:<corpus stem>`` (a file named ``corpus.*``
after its folder: ``local:musique``) and must be unique (a repeated default name gets ``#2``, ``#3``...).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from saturate.state.source_kinds import BY_NAME, DEFAULT_CEILINGS, DEFAULT_DEPTHS, DEFAULT_DESCRIPTIONS, SOURCE_KINDS

SourceDepth = Literal["shallow", "rich"]
DEPTH_EXPECTATIONS: dict[str, str] = {
    "shallow": "shallow: one or two queries usually exhaust it",
    "rich": "rich: five to eight queries are usual before it repeats itself",
}
_SPEC = re.compile(r"^(?P<kind>[a-z]+)(?::(?P<corpus>.+?))?(?:@(?P<ceiling>\d+))?$")


def _known_kind(value: Any) -> Any:
    """A kind of the table; pydantic's own message for a choice otherwise (the kinds were a Literal)."""
    if not isinstance(value, str) or value not in BY_NAME:
        *first, last = (repr(k) for k in SOURCE_KINDS)
        expected = f"{', '.join(first)} or {last}" if first else last
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
    return value


# a str checked against the table (a Literal cannot be built from it for the type checker); the JSON schema
# still lists the kinds
KindName = Annotated[str, BeforeValidator(_known_kind), Field(json_schema_extra={"enum": list(SOURCE_KINDS)})]


class SourceSpec(BaseModel):
    """One configured source. ``ceiling``/``description`` None: the kind's defaults apply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="", max_length=80)
    kind: KindName
    corpus: str | None = None
    ceiling: int | None = Field(default=None, ge=1, le=50)
    description: str | None = Field(default=None, max_length=2000)
    depth: SourceDepth | None = None


def parse_spec(value: Any) -> dict:
    """A spec string or object as a SourceSpec dict (name not yet made unique)."""
    if isinstance(value, SourceSpec):
        return value.model_dump()
    if isinstance(value, dict):
        return dict(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"a source is a spec string like 'local:corpus.jsonl' or an object (got {value!r})")
    m = _SPEC.match(value.strip())
    if not m or m["kind"] not in SOURCE_KINDS:
        raise ValueError(f"{value!r} is not KIND[:CORPUS][@CEILING] with KIND one of {', '.join(SOURCE_KINDS)}")
    out: dict = {"kind": m["kind"]}
    if m["corpus"]:
        out["corpus"] = m["corpus"]
    if m["ceiling"]:
        out["ceiling"] = int(m["ceiling"])
    return out


MAX_SOURCES = 16  # sources of one multi-source session (400 x wiki used 6.4 GB; 2,000 ran out of memory)


def parse_sources(value: Any) -> tuple[SourceSpec, ...] | None:
    """The ``sources`` setting from a JSON list, a comma-separated string, or a list. None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if text.startswith("["):
            try:
                value = json.loads(text)
            except RecursionError:
                raise ValueError("the JSON list of sources is nested too deeply") from None
            except ValueError:
                raise ValueError('expected a JSON list of sources, e.g. ["local:a.jsonl", {"kind": "ddg"}]') from None
        else:
            value = [part for part in (p.strip() for p in text.split(",")) if part]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValueError("expected a non-empty list of sources")
    if len(value) > MAX_SOURCES:
        raise ValueError(
            f"{len(value)} sources: at most {MAX_SOURCES} run in parallel (each is a loop, an index and, for a corpus "
            "ranked by meaning, its vectors in memory)"
        )
    specs: list[SourceSpec] = []
    used: set[str] = set()
    given: set[tuple] = set()
    for item in value:
        raw = parse_spec(item)
        same = (raw.get("kind"), raw.get("corpus"), raw.get("name"))
        if same in given:
            shown = f"{raw.get('kind')}:{raw.get('corpus')}" if raw.get("corpus") else str(raw.get("kind"))
            raise ValueError(f"the source {shown[:80]!r} is given twice: give each source once")
        given.add(same)
        kind = BY_NAME.get(str(raw.get("kind")))
        if kind is not None and kind.corpus == "none" and raw.get("corpus"):
            raise ValueError(f"a {kind.name} source takes no corpus")
        if kind is not None and kind.corpus == "required" and not raw.get("corpus"):
            raise ValueError(f"a {kind.name} source needs a corpus: {kind.name}:FILE")
        try:
            spec = SourceSpec.model_validate(raw)
        except ValidationError as err:
            raise ValueError(
                f"source {item!r}: "
                + "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in err.errors())
            ) from None
        name = spec.name or default_name(spec)
        if spec.name and name in used:
            raise ValueError(f"two sources are named {name!r}")
        base, n = name, 2
        while name in used:
            name, n = f"{base}#{n}", n + 1
        used.add(name)
        specs.append(spec.model_copy(update={"name": name}))
    return tuple(specs)


def default_name(spec: SourceSpec) -> str:
    if spec.corpus:
        path = Path(spec.corpus)
        stem = path.stem if path.suffix else path.name
        if stem == "corpus" and path.parent.name not in ("", ".", ".."):  # ../musique/corpus.jsonl -> musique
            stem = path.parent.name
        return f"{spec.kind}:{stem or spec.corpus}"
    return spec.kind


def resolve(
    spec: SourceSpec, ceilings: dict[str, int], descriptions: dict[str, str], depths: dict[str, str] | None = None
) -> dict:
    """The spec with its ceiling, description and depth filled in from the kind's defaults (a plain dict)."""
    return {
        "name": spec.name or default_name(spec),
        "kind": spec.kind,
        "corpus": spec.corpus,
        "ceiling": spec.ceiling or ceilings.get(spec.kind) or DEFAULT_CEILINGS[spec.kind],
        "description": spec.description or descriptions.get(spec.kind) or DEFAULT_DESCRIPTIONS[spec.kind],
        "depth": spec.depth or (depths or {}).get(spec.kind) or DEFAULT_DEPTHS[spec.kind],
    }
