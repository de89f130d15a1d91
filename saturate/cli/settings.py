"""The settings on the command line, generated from the ``Settings`` model's fields.

A ``--<setting>`` flag per field (its help is the field's description, default and
environment variable), the flags given turned back into ``Settings``, and the
``saturate settings`` command with its Markdown table (the one in docs/configuration.md).
"""

from __future__ import annotations

import argparse
import json
from typing import Literal, get_args, get_origin

from pydantic_core import PydanticUndefined

from saturate.cli.output import say
from saturate.state.settings import DESIGN_NAMES, ENV_PREFIX, Settings, load_settings


def flag(name: str) -> str:
    """``max_rounds`` → ``--max-rounds``."""
    return "--" + name.replace("_", "-")


def default_text(name: str) -> str:
    field = Settings.model_fields[name]
    d = field.get_default(call_default_factory=True)  # the factory's value, else the default (or PydanticUndefined)
    if isinstance(d, (dict, list, tuple)):
        return json.dumps(d) if d or isinstance(d, dict) else "empty"
    return "unset" if d is None or d is PydanticUndefined else str(d)


def range_text(name: str, markdown: bool = False) -> str:
    """The values a setting accepts, from its field: ``1–50``, ``> 0, ≤ 3600``, ``local | ddg``; "" when any.

    ``markdown``: choices as code spans separated by commas (a ``|`` would split a table cell)."""
    field = Settings.model_fields[name]
    annotation = field.annotation
    literal = annotation if get_origin(annotation) is Literal else None
    literal = literal or next((a for a in get_args(annotation) if get_origin(a) is Literal), None)
    if literal is not None:
        values = [str(v) for v in get_args(literal)]
        return ", ".join(f"`{v}`" for v in values) if markdown else " | ".join(values)
    bounds = {
        k: getattr(m, k) for m in field.metadata for k in ("ge", "gt", "le", "lt") if getattr(m, k, None) is not None
    }

    def num(v: float) -> str:
        return "2^63−1" if v == 2**63 - 1 else (f"{v:,}" if isinstance(v, int) else f"{v:g}")

    if "ge" in bounds and "le" in bounds:
        return f"{num(bounds['ge'])}–{num(bounds['le'])}"
    parts = [f"≥ {num(bounds['ge'])}" if "ge" in bounds else "", f"> {num(bounds['gt'])}" if "gt" in bounds else ""]
    parts += [f"≤ {num(bounds['le'])}" if "le" in bounds else "", f"< {num(bounds['lt'])}" if "lt" in bounds else ""]
    return ", ".join(p for p in parts if p)


NO_FLAG = {"database_url"}  # every command's own --database-url (cli.parser), not a per-session setting


def add_setting_flags(p: argparse.ArgumentParser) -> None:
    """A ``--<setting>`` flag per setting; a setting whose flag the parser already has (``bench``'s own
    ``--seed`` and ``--corpus``) is skipped."""
    group = p.add_argument_group("settings (also SATURATE_<NAME> environment variables)")
    for name, field in Settings.model_fields.items():
        if flag(name) in p._option_string_actions or name in NO_FLAG:  # argparse keeps no public index of its flags
            continue
        group.add_argument(
            flag(name),
            dest=f"setting_{name}",
            metavar=name.upper(),
            default=None,
            help=f"{field.description} Default: {default_text(name)}."
            + (f" Range: {range_text(name)}." if range_text(name) else "")
            + (f" Design: {DESIGN_NAMES[name]}." if name in DESIGN_NAMES else "")
            + f" Env: {ENV_PREFIX}{name.upper()}.",
        )


def setting_overrides(args: argparse.Namespace) -> dict:
    """The --<setting> flags given, by setting name."""
    return {
        name: getattr(args, f"setting_{name}")
        for name in Settings.model_fields
        if getattr(args, f"setting_{name}", None) is not None
    }


def settings_from_args(args: argparse.Namespace) -> Settings:
    """The --<setting> flags given, on top of the environment and the defaults (SettingsError if invalid)."""
    return load_settings(setting_overrides(args))


def settings_markdown() -> str:
    lines = [
        "| setting | design name | default | range | env var | CLI flag | meaning |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, field in Settings.model_fields.items():
        env = f"{ENV_PREFIX}{name.upper()}"
        design = f"`{DESIGN_NAMES[name]}`" if name in DESIGN_NAMES else ""
        lines.append(
            f"| `{name}` | {design} | `{default_text(name)}` | {range_text(name, markdown=True)} | `{env}` "
            f"| `{flag(name)}` | {field.description} |"
        )
    return "\n".join(lines)


def cmd_settings(args: argparse.Namespace) -> int:
    """``saturate settings``: the effective settings; ``--markdown``: the table of every setting."""
    if args.markdown:
        say(settings_markdown())
    else:
        for name, value in load_settings().model_dump().items():
            say(f"{name} = {value!r}")
    return 0
