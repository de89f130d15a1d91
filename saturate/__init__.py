"""saturate: a research agent on LangGraph that searches while results are new and stops when they repeat.

    from saturate import research, verify, resume, research_multi, session_state, Settings, BadInput

    result = research("Where is the Bubye River?")

This folder is the front of the house: the Python API above (loaded on first use, PEP 562 ``__getattr__``, so
``saturate --help`` does not pay for importing LangGraph), the command line (``cli/``), the reports (``views/``),
the MCP server (``mcp.py``), the benchmarks (``bench/``) and their saturation monitor (``monitor/``). The engine is in
the folders at the repository root, linked here as sub-packages (``saturate/graph -> ../graph``, ``nodes``,
``sources``, ``state``): the graphs and the session layer, the nodes, the search sources, the state
(docs/layout.md).
"""

# (no `from __future__ import annotations` here: it imports the module __future__, code that would run before the
# command's Ctrl-C handler below is in place)
import os  # both loaded by the interpreter before any code of ours: importing them runs nothing
import sys


def _is_the_command() -> bool:
    """Whether this process is the ``saturate`` command: its console script, ``python -m saturate`` or
    ``python -m saturate.cli``, as the interpreter was started. A program that imports saturate keeps its own
    Ctrl-C, and so does a batch's worker (a ``-c`` of multiprocessing, though it loads the console script)."""
    options = iter(sys.orig_argv[1:])  # the interpreter's own options, then what it runs
    for option in options:
        if option in ("-X", "-W"):  # options that take a value
            next(options, None)
        elif option.startswith("-m"):
            return (option[2:] or next(options, "")) in ("saturate", "saturate.cli")
        elif option == "-c" or not option.startswith("-"):  # a command, or a script: the console script's name
            return os.path.basename(option) in ("saturate", "saturate.exe", "saturate-script.py")
    return False


def _interrupted_early(signum: int, frame: object) -> None:
    """The command's Ctrl-C until ``saturate.cli.main`` has read its arguments: nothing has started, nothing was
    saved."""
    os.write(2, b"saturate: interrupted before anything started; nothing was saved\n")
    os._exit(130)


# The command's first instruction (issue 42). Before it, a Ctrl-C in the first 50 ms landed inside an import
# (typing, argparse, pydantic, ...) as a KeyboardInterrupt traceback and returncode -2; from here on it is one line
# and 130 whenever it lands: the handler is in place before anything is imported, and a Ctrl-C that lands while it
# is being put in place is caught below. Only the interpreter's own start comes before (docs/cli.md).
try:
    if _is_the_command():
        import signal

        # over Python's own handler only: started with Ctrl-C ignored (a shell's background job, `saturate … &`),
        # the command keeps it ignored, as Python itself does
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupted_early)
except KeyboardInterrupt:
    if not _is_the_command():
        raise
    _interrupted_early(2, None)  # SIGINT: `signal` itself may be what was loading

# onnxruntime (the reader, the embedding model) sends telemetry from Linux and macOS since 1.29: a "ProcessInfo" event
# (the system, the interpreter's path, ...) and session events to mobile.events.data.microsoft.com, a device id and an
# offline queue of unsent events (3 MB here, growing) written under ~/.cache/Microsoft/DeveloperTools. A local
# research tool keeps what it runs to itself: off unless the user says otherwise (ORT_DISABLE_TELEMETRY=0). It must be
# set before onnxruntime is first loaded in the process (its decision is latched), so here, before anything of ours
# can load it; a program that loaded onnxruntime before saturate keeps its own choice (docs/security.md).
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import importlib  # noqa: E402  (after the command's Ctrl-C handler: see above)
from typing import TYPE_CHECKING, Any  # noqa: E402

if TYPE_CHECKING:  # what the type checker and editors see; at run time each is imported on first use
    from saturate.graph.api import research, research_multi, resume, verify
    from saturate.graph.session import session_state
    from saturate.state.errors import BadInput
    from saturate.state.settings import Settings

_EXPORTS = {
    "BadInput": "saturate.state.errors",
    "Settings": "saturate.state.settings",
    "research": "saturate.graph.api",
    "research_multi": "saturate.graph.api",
    "resume": "saturate.graph.api",
    "session_state": "saturate.graph.session",
    "verify": "saturate.graph.api",
}

__all__ = ["BadInput", "Settings", "research", "research_multi", "resume", "session_state", "verify"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'saturate' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
