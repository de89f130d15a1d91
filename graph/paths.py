"""Where saturate's files are: the data directory and the evaluation data of the benchmarks.

No path is derived from where the code happens to live, so an installed wheel works like a checkout:

- the **data directory** (sessions, caches, indexes): the ``home`` argument, else
  ``SATURATE_HOME``, else ``$XDG_DATA_HOME/saturate`` (``~/.local/share/saturate``);
- the **evaluation data** of the benchmarks (a folder holding ``musique/``, ``hotpotqa/``, ``webq/``,
  ``factcheck/``): the benchmark's ``--data`` argument, else ``SATURATE_EVAL_DATA``; nothing is guessed
  (docs/development.md says where the project's copy is).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from saturate.state.errors import BadInput
from saturate.state.files import user_path

EVAL_ENV = "SATURATE_EVAL_DATA"
HOME_ENV = "SATURATE_HOME"


def locate(what: Literal["home", "eval"], given: str | os.PathLike | None = None) -> Path | None:
    """The path of ``what`` (None: no evaluation data named); ``given`` (an explicit argument) wins. Nothing is
    created here."""
    error = DataDirError if what == "home" else EvalDataError
    name = "the data directory" if what == "home" else "the evaluation data"
    if given is not None and str(given) != "":
        return user_path(given, name, error)
    env_name = HOME_ENV if what == "home" else EVAL_ENV
    env = os.environ.get(env_name)
    if env:
        return user_path(env, f"{name} ({env_name})", error)
    if what == "home":
        return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "saturate"
    return None


class DataDirError(BadInput):
    """The data directory cannot be used (it is a file, cannot be created, ...)."""


def home_dir(home: str | os.PathLike | None = None, create: bool = True) -> Path:
    """The data directory, created when missing (``create``; read-only commands only look)."""
    if home is not None and not isinstance(home, (str, os.PathLike)):
        raise DataDirError(f"home=... takes a path: a str or os.PathLike (got {type(home).__name__})")
    path = locate("home", home)
    assert path is not None  # the data directory always has a default
    try:
        exists, folder = path.exists(), path.is_dir()
    except (OSError, ValueError) as err:  # a name too long, a NUL byte, a permission denied on a parent
        raise DataDirError(
            f"cannot use the data directory {str(path)[:200]!r}: {getattr(err, 'strerror', None) or err}"
        ) from None
    if exists and not folder:
        raise DataDirError(
            f"the data directory {path} is a file, not a folder: point SATURATE_HOME (or --home) at a folder"
        )
    if create and not folder:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise DataDirError(f"cannot create the data directory {path}: {err.strerror or err}") from None
    return path


def writable(path: Path) -> bool:
    """Whether files can be created in the folder ``path``."""
    return os.access(path, os.W_OK | os.X_OK)


class EvalDataError(BadInput):
    """A benchmark that needs the evaluation data was not told where it is."""


def eval_data(given: str | os.PathLike | None = None) -> Path:
    """The evaluation data folder (it may not exist: callers say what is missing in it)."""
    path = locate("eval", given)
    if path is None:
        raise EvalDataError(
            f"no evaluation data: give --data DIR (a folder holding musique/, hotpotqa/, webq/, factcheck/) or set "
            f"{EVAL_ENV} (docs/development.md)"
        )
    return path


def eval_data_if_named(*parts: str) -> Path | None:
    """A path inside the evaluation data when it is named (``SATURATE_EVAL_DATA``), else None: for a benchmark that
    falls back to the embedded corpus."""
    path = locate("eval")
    return None if path is None else path.joinpath(*parts)
