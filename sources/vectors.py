"""Document vectors of a local corpus, computed once beside its index and searched by cosine.

``VectorIndex.open_or_build(index_path, rows, embedder, identity)`` returns the vectors of a corpus's
documents under one embedding model: a ``.npy`` file beside the corpus's SQLite index, named after the
index file (which carries the corpus's version) and the model's identity, so a changed corpus or another
model gets its own file and an unchanged one is reused. A build embeds every document's title and opening
(``DOC_CHARS`` characters: the part that says what the document is about; a 2-core machine embeds the
10,033 summaries of the embedded corpus in well under a minute) in batches of ``BATCH``, reports its
progress, writes a temporary file and moves it into place (``os.replace``) under a file lock, so a killed
build leaves nothing half-written and two processes never build the same file twice. Other models' vectors
of the same corpus stay beside them, within a bound (``sources/vector_files.py``: the least recently used go,
never one being built). A **damaged** file is rebuilt, and the corpus's notes say so: unreadable (empty, a
broken header, a folder in its place), its bytes not the sha256 recorded beside it when it was written, or rows
that are not unit vectors (a zeroed or overwritten region; checked on a sample for a memory-mapped file) — damage
never silently changes what a search ranks.

Search is a brute-force scan: one matrix-vector product over the float32 vectors (unit length, so the dot
product is the cosine; read into memory up to ``IN_MEMORY_BYTES``, memory-mapped beyond) and
``numpy.argpartition`` for the best ``n``. Measured on this project's 2-core machine (``saturate bench
perf``): well under a millisecond at 10,000 documents, linear in the corpus; an approximate index (HNSW,
IVF) is not needed below the sizes measured there.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from saturate.sources import vector_files
from saturate.state.files import file_sha256
from saturate.state.text import clip

DOC_CHARS = 128  # a document's title and opening, embedded: what it is about (about 28 WordPiece tokens)
BATCH = 16  # documents per embedding call while building
VERSION = 1  # the file's layout; a new one rebuilds every vector file
IN_MEMORY_BYTES = 512 * 2**20  # vector files up to this size are read into memory; larger ones stay memory-mapped
FLUSH_ROWS = 4096  # rows between two flushes of a build's memory map to disk
SAMPLE_ROWS = 4096  # rows of a memory-mapped file checked to be unit vectors when it is opened


def doc_text(title: str, text: str) -> str:
    """What is embedded of a document: its title and the opening of its text."""
    body = " ".join((text or "").split())
    return clip(f"{title}. {body}" if title else body, DOC_CHARS)


class VectorIndex:
    """The unit vectors of a corpus's documents, row i the document of rowid i + 1 (module docstring)."""

    def __init__(self, path: Path, vectors: np.ndarray, identity: str):
        self.path = path
        self.vectors = vectors
        self.identity = identity
        self.count, self.dim = vectors.shape
        self.remark: str | None = None  # why shipped vectors meant for this corpus were not used (open_or_build)

    @staticmethod
    def path_for(index_path: Path, identity: str) -> Path:
        digest = hashlib.sha256(f"{VERSION}|{identity}".encode()).hexdigest()[:12]
        return index_path.with_name(f"{index_path.stem}.vec-{digest}.npy")

    @classmethod
    def open_or_build(
        cls,
        index_path: Path,
        count: int,
        rows: Callable[[], Iterable[tuple[str, str]]],
        embedder,
        identity: str,
        progress: Callable[[int, int], None] | None = None,
        shipped: bool = True,
    ) -> VectorIndex:
        """The vectors of the ``count`` documents of the index at ``index_path``; ``rows()`` yields each
        document's (title, text) in rowid order, read only when the vectors must be built. With ``shipped``, vectors
        that came with saturate for exactly these rows and this model (``sources/shipped_vectors.py``) are taken
        instead of embedding the corpus; ``remark`` says why shipped ones meant for it were not."""
        path = cls.path_for(index_path, identity)
        vector_files.mark_used(path)  # before reading: a process evicting the least recently used keeps these
        key = _file_key(path, identity, count)
        with _OPEN_LOCK:
            shared = _OPEN.get(key) if key is not None else None
        if shared is not None:  # opened already in this process: one copy in memory, whatever uses it
            return shared
        found, damaged = cls._load(path, count, identity)
        if found is not None:
            vector_files.evict(index_path, path)  # other models' beyond the bound, least recently used first
            return _remember(found, identity, count)
        loaded = cls._open_locked(path, count, rows, embedder, identity, progress, shipped)
        vector_files.evict(index_path, path)
        return loaded

    @classmethod
    def _open_locked(
        cls, path: Path, count: int, rows, embedder, identity: str, progress, shipped: bool
    ) -> VectorIndex:
        """``open_or_build`` under the set's cross-process lock: read, or else take the shipped vectors or build."""
        with vector_files.lock_of(path):  # held to the end of a build: no other process builds or removes these
            found, damaged = cls._load(path, count, identity)  # built by another process while this one waited
            if found is not None:
                return _remember(found, identity, count)
            for left in path.parent.glob(f"{glob.escape(path.stem)}.*.building"):  # a build killed while writing
                left.unlink(missing_ok=True)  # held: no other build of these vectors is under way)
            for taken in (path, path.with_suffix(".json")):  # a folder in the file's place: ours to clear (its name)
                if taken.is_dir() and not taken.is_symlink():
                    shutil.rmtree(taken)
            vectors, remark = None, None
            if shipped:
                from saturate.sources import shipped_vectors  # only when a corpus's vectors are missing

                batch = getattr(embedder, "embed_batch", None) or embedder.embed_documents
                vectors, remark = shipped_vectors.matching(
                    identity, count, VERSION, lambda: (doc_text(t, x) for t, x in rows()), batch
                )
            if vectors is None:
                dim, resumed = cls._build(path, rows, count, embedder, identity, progress)
                if resumed:
                    remark = f"the vectors' build went on from document {resumed:,} of {count:,} (it was interrupted)"
            else:
                dim = int(vectors.shape[1])
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem + ".", suffix=".building")
                try:
                    with os.fdopen(fd, "wb") as fh:
                        np.save(fh, vectors)
                    os.replace(tmp, path)
                finally:
                    if os.path.exists(tmp):
                        os.unlink(tmp)
            path.with_suffix(".json").write_text(
                json.dumps({"identity": identity, "count": count, "dim": dim, "sha256": file_sha256(path)})
            )
            vector_files.mark_used(path)  # used now, however long the build took
            loaded, _ = cls._load(path, count, identity)  # read back under the lock: nothing removes it meanwhile
        if loaded is None:  # written but unreadable: a full disk, a filesystem that lost it
            raise OSError(f"the vectors written to {path} cannot be read back")
        loaded = _remember(loaded, identity, count)
        loaded.remark = (
            "; ".join(
                r
                for r in (
                    f"the vector file {path.name} was damaged ({damaged}): built again" if damaged else "",
                    remark,
                )
                if r
            )
            or None
        )
        return loaded

    @classmethod
    def _load(cls, path: Path, count: int, identity: str) -> tuple[VectorIndex | None, str | None]:
        """(the vectors, None); (None, None) when there are none for this corpus and model yet (missing, stale,
        another model's); (None, why) when the file is damaged: unreadable, its bytes not the sha256 recorded when it
        was written, or vectors that are not unit vectors (a zeroed or overwritten region). Any damage is rebuilt,
        never read as vectors that would silently change the ranking."""
        meta_path = path.with_suffix(".json")
        if not path.exists() and not meta_path.exists():
            return None, None
        try:
            meta = json.loads(meta_path.read_text())
            if not isinstance(meta, dict):
                raise ValueError("its description is not a JSON object")
            if meta.get("identity") != identity or meta.get("count") != count:
                return None, None  # stale or another model's: built anew, nothing damaged
            size = path.stat().st_size
            if size <= IN_MEMORY_BYTES:  # read into memory: a scan of it is several times faster
                data = path.read_bytes()
                if meta.get("sha256") and hashlib.sha256(data).hexdigest() != meta["sha256"]:
                    raise ValueError("its bytes are not those written: sha256 differs")
                vectors = np.load(io.BytesIO(data), allow_pickle=False)
            else:  # memory-mapped: hashing it on every open would read it whole; the sample below checks it
                vectors = np.load(path, mmap_mode="r", allow_pickle=False)
        except Exception as exc:  # noqa: BLE001 - numpy raises EOFError, tokenize.TokenError, ValueError, OSError ...
            return None, f"{type(exc).__name__}: {str(exc)[:120]}"
        if vectors.ndim != 2 or vectors.shape[0] != count or vectors.dtype != np.float32:
            return None, f"its array is {vectors.dtype} {tuple(vectors.shape)}, not {count} float32 vectors"
        if meta.get("dim") != vectors.shape[1]:
            return None, "its dimension is not the one recorded"
        rows = (
            vectors if vectors.shape[0] <= SAMPLE_ROWS else vectors[np.linspace(0, count - 1, SAMPLE_ROWS).astype(int)]
        )
        with np.errstate(all="ignore"):
            norms = np.linalg.norm(np.asarray(rows, dtype=np.float64), axis=1)
        if not np.isfinite(norms).all() or float(np.max(np.abs(norms - 1.0))) > 1e-3:
            return None, "it holds vectors that are not unit vectors (zeroed or overwritten)"
        return cls(path, vectors, identity), None

    @staticmethod
    def _build(path: Path, rows, count: int, embedder, identity: str, progress) -> tuple[int, int]:
        """Embed the rows into ``path`` (dimension, the row a resumed build went on from, else 0). The vectors go
        straight into a memory-mapped ``.partial.npy`` beside it, a batch at a time, so memory stays bounded by a
        batch whatever the corpus's size; ``.partial.json`` records how many rows are in it, so a build that was
        interrupted (Ctrl-C, a killed process) goes on where it stopped. Done, the file is moved into place."""
        partial = path.with_name(path.stem + ".partial.npy")
        state = path.with_name(path.stem + ".partial.json")
        embed = getattr(embedder, "embed_batch", None) or embedder.embed_documents  # a batched path when it has one
        out, done = None, 0
        try:
            saved = json.loads(state.read_text())
            if saved.get("identity") == identity and saved.get("count") == count:
                out = np.lib.format.open_memmap(partial, mode="r+")
                if out.dtype != np.float32 or out.ndim != 2 or out.shape[0] != count:
                    out = None
                else:
                    done = max(0, min(int(saved.get("done") or 0), count))
        except Exception:  # noqa: BLE001 - no build to go on with, or a damaged one: start afresh
            out, done = None, 0
        if out is None:
            partial.unlink(missing_ok=True)
            state.unlink(missing_ok=True)
        resumed, pos = done, done
        if done and progress is not None:
            progress(done, count)
        batch: list[str] = []

        def flush() -> None:
            nonlocal out, pos
            vecs = np.asarray(embed(batch), dtype=np.float32)
            vecs = vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
            if out is None:
                out = np.lib.format.open_memmap(partial, mode="w+", dtype=np.float32, shape=(count, vecs.shape[1]))
            out[pos : pos + len(vecs)] = vecs
            pos += len(vecs)
            batch.clear()
            if pos % FLUSH_ROWS < BATCH or pos == count:
                out.flush()
            state.write_text(json.dumps({"identity": identity, "count": count, "done": pos}))
            if progress is not None:
                progress(pos, count)

        for i, (title, text) in enumerate(rows()):
            if i < done:
                continue
            batch.append(doc_text(title, text))
            if len(batch) == BATCH:
                flush()
        if batch:
            flush()
        if out is None or pos != count:
            raise ValueError("no documents to embed" if out is None else f"{pos} of {count} documents embedded")
        dim = int(out.shape[1])
        out.flush()
        del out  # the memory map is closed before the file moves
        os.replace(partial, path)
        state.unlink(missing_ok=True)
        return dim, resumed

    def scores(self, query: np.ndarray) -> np.ndarray:
        """The cosine of every document to ``query`` (a unit vector)."""
        return self.vectors @ query

    def top(self, query: np.ndarray, n: int) -> list[tuple[int, float]]:
        """The ``n`` best (row, cosine), best first."""
        sims = self.scores(query)
        n = min(n, len(sims))
        if n <= 0:
            return []
        best = np.argpartition(-sims, n - 1)[:n]
        best = best[np.argsort(-sims[best], kind="stable")]
        return [(int(i), float(sims[i])) for i in best]


def unit(vector) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


# Vector files opened in this process, by file (path, identity, rows, the size and mtime of it and its description):
# sources over one corpus (a multi-source session's local and titles kinds, a batch's sessions in one worker) share
# one copy in memory. A rewritten file has another size or mtime, so it is opened afresh.
_OPEN: dict[tuple, VectorIndex] = {}
_OPEN_LOCK = threading.Lock()
_OPEN_MAX = 32  # files kept open; the least recently opened goes first


def _file_key(path: Path, identity: str, count: int) -> tuple | None:
    try:
        st, meta = path.stat(), path.with_suffix(".json").stat()  # the description too: both must be unchanged
    except OSError:
        return None
    if not path.is_file():
        return None
    return (str(path), identity, count, st.st_size, st.st_mtime_ns, meta.st_size, meta.st_mtime_ns)


def _remember(index: VectorIndex, identity: str, count: int) -> VectorIndex:
    key = _file_key(index.path, identity, count)
    if key is not None:
        with _OPEN_LOCK:
            _OPEN[key] = index
            while len(_OPEN) > _OPEN_MAX:
                _OPEN.pop(next(iter(_OPEN)))
    return index
