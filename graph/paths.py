"""Where saturate's files are: the data directory and the shared evaluation data.

One resolver for both, so an installed wheel works like a checkout (no path is
derived from where the code happens to live, except as the last guess for a
checkout):

- the **data directory** (sessions, caches, indexes): the ``home`` argument, else
  ``SATURATE_HOME``, else ``$XDG_DATA_HOME/saturate`` (``~/.local/share/saturate``);
- the **shared evaluation data** (``musique/``, ``hotpotqa/``, ``factcheck/``):
  ``SATURATE_SHARED_DATA``, else ``../shared/data`` beside the current directory
  (the project's convention: run from the checkout), else beside the checkout the
  code was installed from (an editable install).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from saturate.state.errors import BadInput

SHARED_ENV = "SATURATE_SHARED_DATA"
HOME_ENV = "SATURATE_HOME"
_CHECKOUT = Path(__file__).resolve().parents[1]  # the repository root for an editable install


def locate(what: Literal["home", "shared"], given: str | os.PathLike | None = None) -> Path:
    """The path of ``what``; ``given`` (an explicit argument) wins. Nothing is created here."""
    if given is not None and str(given) != "":
        return Path(given).expanduser()
    if what == "home":
        env = os.environ.get(HOME_ENV)
        if env:
            return Path(env).expanduser()
        return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "saturate"
    env = os.environ.get(SHARED_ENV)
    if env:
        return Path(env).expanduser()
    candidates = (Path.cwd().parent / "shared" / "data", _CHECKOUT.parent / "shared" / "data")
    return next((c for c in candidates if c.is_dir()), candidates[0])


class DataDirError(BadInput):
    """The data directory cannot be used (it is a file, cannot be created, ...)."""


def home_dir(home: str | os.PathLike | None = None, create: bool = True) -> Path:
    """The data directory, created when missing (``create``; read-only commands only look)."""
    path = locate("home", home)
    if path.exists() and not path.is_dir():
        raise DataDirError(
            f"the data directory {path} is a file, not a folder: point SATURATE_HOME (or --home) at a folder"
        )
    if create and not path.is_dir():
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise DataDirError(f"cannot create the data directory {path}: {err.strerror or err}") from None
    return path


def writable(path: Path) -> bool:
    """Whether files can be created in the folder ``path``."""
    return os.access(path, os.W_OK | os.X_OK)


def shared_data(*parts: str) -> Path:
    """A path inside the shared evaluation data (it may not exist: callers say what is missing)."""
    return locate("shared").joinpath(*parts)
