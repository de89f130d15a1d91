"""The ONNX models' optimised graphs, kept on disk so that a process builds a session without optimising again.

onnxruntime rewrites a model's graph every time it builds a session (fusions; for the embedding model, its int8
weights folded to float): 45 of the 175 ms of CPU the embedding model took to load, 25 of the reader's 69 ms, in
every ``saturate research`` process (issue 46). onnxruntime can write the rewritten graph out
(``SessionOptions.optimized_model_filepath``) and build from it with no rewrite at all; the scores are bit for bit
those of a session built from the original (``tests/test_onnx_cache.py``), and the embedding model's peak memory is
lower (the float weights are read, not computed beside the int8 ones: 275 -> 199 MB in a bare process).

Only models of a known sha256 are kept (the shipped reader, the default embedding model, each checked against its
pinned sha256 before it gets here), each under a name of that sha256, onnxruntime's version, the machine and the
rewrites left out, so that a new model, a new onnxruntime or another machine sharing the folder builds its own. A
file is written under a temporary name and renamed (a killed process leaves no half file under the real name, and
the next write removes its temporary file once an hour old); one that onnxruntime cannot build from (damaged) is
rebuilt from the original and replaced. Nothing here is needed: a
folder that cannot be used (not writable, a file, ``~name`` of no user, a link loop), or
``SATURATE_MODEL_CACHE=off``, builds as before: the cache saves time, it is never needed.

Where: ``SATURATE_MODEL_CACHE``, else ``$XDG_CACHE_HOME/saturate/models`` (``~/.cache/saturate/models``): derived
files, safe to delete (about 113 MB for the two default models), so in the cache folder rather than the data
directory — one per machine, not one per data directory.
"""

from __future__ import annotations

import hashlib
import os
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CACHE_ENV = "SATURATE_MODEL_CACHE"
STALE_S = 3600  # a temporary file this old was left by a killed process (writing one takes a second or two)


def cache_dir() -> Path | None:
    """The folder of the optimised graphs (None: ``SATURATE_MODEL_CACHE=off``). Nothing is created here."""
    named = os.environ.get(CACHE_ENV, "").strip()
    if named.lower() in ("off", "0", "false", "no", "none"):
        return None
    try:
        if named:
            return Path(named).expanduser()
        return Path(os.environ.get("XDG_CACHE_HOME", "").strip() or "~/.cache").expanduser() / "saturate" / "models"
    except RuntimeError:  # ~name of no user, or no home directory: a cache is never needed (built as without one)
        return None


def session_options(threads: int | None = None) -> Callable[[], Any]:
    """A factory of the ``SessionOptions`` both models are built with: every rewrite on, only errors logged, the
    threads not spinning (by default onnxruntime's threads busy-wait after each run for the next one, which took
    the CPU from the rest of a round on 2 cores: graph/embeddings.py ``_session`` has the figures), ``threads``
    threads for a run (None: onnxruntime's default, one per core)."""
    import onnxruntime as ort

    def options():
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if threads is not None:
            opts.intra_op_num_threads = threads
        return opts

    return options


def cached_name(name: str, sha256: str, disabled_optimizers: Sequence[str] = ()) -> str:
    """The file name of a model's optimised graph: what it was made from and by what."""
    import onnxruntime as ort

    made_by = f"{ort.__version__}|{platform.machine()}|{','.join(sorted(disabled_optimizers))}"
    return f"{name}-{sha256[:16]}-{hashlib.sha256(made_by.encode()).hexdigest()[:12]}.onnx"


def inference_session(
    model: bytes | Path,
    options: Callable[[], Any],
    *,
    name: str,
    sha256: str | None,
    disabled_optimizers: Sequence[str] = (),
):
    """An onnxruntime CPU session of ``model`` (its bytes or its file), built with ``options()`` (fresh
    ``SessionOptions``, every rewrite on: ``session_options``) — from the optimised graph kept for ``name``
    and ``sha256`` when there is one, else from ``model``, writing the optimised graph out for the next process.
    ``sha256`` None (a model the user named, whose file may change under the same name): built from ``model``,
    nothing kept."""
    import onnxruntime as ort

    folder = cache_dir() if sha256 else None
    if folder is None:
        return _build(ort, model, options(), disabled_optimizers)
    file = folder / cached_name(name, sha256 or "", disabled_optimizers)
    if file.is_file():  # False under a link loop or a file in the folder's place: the mkdir below then fails
        opts = options()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # rewritten already
        try:
            return ort.InferenceSession(str(file), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception:  # a damaged file (onnxruntime raises its own types): rebuilt below and replaced
            pass
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _remove_stale(folder, file.name)
        fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".partial", dir=folder)
        os.close(fd)
    except OSError:  # a folder that cannot be written: built as without a cache
        return _build(ort, model, options(), disabled_optimizers)
    try:
        opts = options()
        opts.optimized_model_filepath = tmp
        try:
            session = _build(ort, model, opts, disabled_optimizers)
        except Exception:
            # the model itself (the caller reports it) or the write of the graph (a full disk): once more without it
            session = _build(ort, model, options(), disabled_optimizers)
        else:
            if os.path.getsize(tmp) > 0:
                os.replace(tmp, file)
        return session
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass  # renamed into place


def _remove_stale(folder: Path, name: str) -> None:
    """The temporary files of this graph that a killed process left (an hour old: not one being written now)."""
    for partial in folder.glob(f".{name}.*.partial"):
        try:
            if time.time() - partial.stat().st_mtime > STALE_S:
                partial.unlink()
        except OSError:
            pass  # another process removed it


def _build(ort, model: bytes | Path, opts, disabled_optimizers: Sequence[str]):
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(
        source, sess_options=opts, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled_optimizers)
    )
