"""The settings on the command line, generated from the ``Settings`` model's fields.

A ``--<setting>`` flag per field (its help is the field's description, default and
environment variable), the flags given turned back into ``Settings``, and the
``saturate settings`` command with its Markdown table (the README's).
"""

from __future__ import annotations

import argparse
import json

from pydantic_core import PydanticUndefined

from saturate.graph.cli.output import say
from saturate.state.settings import ENV_PREFIX, Settings, load_settings


def flag(name: str) -> str:
    """``max_rounds`` → ``--max-rounds``."""
    return "--" + name.replace("_", "-")


def default_text(name: str) -> str:
    field = Settings.model_fields[name]
    d = field.default_factory() if field.default_factory is not None else field.default
    if isinstance(d, (dict, list, tuple)):
        return json.dumps(d) if d or isinstance(d, dict) else "empty"
    return "unset" if d is None or d is PydanticUndefined else str(d)


def add_setting_flags(p: argparse.ArgumentParser) -> None:
    """A ``--<setting>`` flag per setting; a setting whose flag the parser already has (``bench``'s own
    ``--seed`` and ``--corpus``) is skipped."""
    group = p.add_argument_group("settings (also SATURATE_<NAME> environment variables)")
    for name, field in Settings.model_fields.items():
        if flag(name) in p._option_string_actions:  # argparse keeps no public index of its flags
            continue
        group.add_argument(
            flag(name),
            dest=f"setting_{name}",
            metavar=name.upper(),
            default=None,
            help=f"{field.description} Default: {default_text(name)}. Env: {ENV_PREFIX}{name.upper()}.",
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
    lines = ["| setting | default | env var | CLI flag | meaning |", "|---|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        env = f"{ENV_PREFIX}{name.upper()}"
        lines.append(f"| `{name}` | `{default_text(name)}` | `{env}` | `{flag(name)}` | {field.description} |")
    return "\n".join(lines)


def cmd_settings(args: argparse.Namespace) -> int:
    """``saturate settings``: the effective settings; ``--markdown``: the table of every setting."""
    if args.markdown:
        say(settings_markdown())
    else:
        for name, value in load_settings().model_dump().items():
            say(f"{name} = {value!r}")
    return 0
