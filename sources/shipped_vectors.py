"""Document vectors that come with saturate: the embedded corpus's, under the default embedding model.

The embedded corpus and the default model are the same on every machine, so their vectors are too: embedding
the 10,033 summaries took ~55 s on an idle 2-core machine and minutes on a busy one, and every new user's first
session waited for it. ``shipped/<corpus>.<model>.npz`` holds them in a compact form: each unit vector as 8-bit
integers with its own scale (``q = round(v / max|v| * 127)``, a quarter of float32's size; the vector restored
from it has a cosine ≥ 0.9999 to the one the model gives, and retrieval ranks the same: ``saturate bench perf``'s
``first_session_ratio`` and tests/test_shipped_vectors.py). A manifest inside names what they are of:

- ``identity``: the embedding model's (``graph.embeddings``: its file's sha256), so another model never gets them;
- ``count`` and ``rows_sha256``: the sha256 of every embedded text (``vectors.doc_text``, in row order), so a
  changed corpus, another ``DOC_CHARS`` or another row order never gets them;
- ``version``: the vector file layout (``vectors.VERSION``).

``matching(identity, count, rows, embedder)`` gives the float32 vectors when a shipped file matches all of these
and, embedded afresh by the live model, a few sampled rows agree with it (cosine ≥ ``AGREE``: the same model
computes the same vectors here, whatever onnxruntime or tokenizer build this machine has); otherwise None and why
— the caller builds them as for any corpus. ``python training/ship_vectors.py`` writes the file from the
embedded corpus's vectors built afresh (docs/development.md).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

SHIPPED_DIR = Path(__file__).parent / "shipped"
AGREE = 0.99  # a sampled row's cosine between its shipped vector and the live model's (int8 keeps > 0.9999)
SAMPLES = 4  # rows embedded afresh to check the model agrees (spread over the corpus)
MAX_SHIPPED_BYTES = 64 * 2**20  # a file above this is not read (a damaged or foreign file in the folder)


def rows_digest(texts: Iterable[str]) -> tuple[str, int]:
    """(sha256 of the texts, each followed by a NUL, in order; how many)."""
    h = hashlib.sha256()
    n = 0
    for text in texts:
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
        n += 1
    return h.hexdigest(), n


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 codes, float32 scale per row) of unit vectors."""
    v = np.asarray(vectors, dtype=np.float32)
    scale = np.abs(v).max(axis=1) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    return np.clip(np.rint(v / scale[:, None]), -127, 127).astype(np.int8), scale


def dequantize(codes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Unit float32 vectors from the codes and scales."""
    v = codes.astype(np.float32) * scale[:, None]
    return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)


def write(path: Path, vectors: np.ndarray, identity: str, texts: Iterable[str], version: int) -> Path:
    """Write the shipped file for ``vectors`` (row i: the i-th of ``texts``) under the model ``identity``."""
    digest, count = rows_digest(texts)
    if count != len(vectors):
        raise ValueError(f"{count} texts for {len(vectors)} vectors")
    codes, scale = quantize(vectors)
    manifest = {"identity": identity, "count": count, "dim": int(vectors.shape[1]), "rows_sha256": digest}
    manifest["version"] = version
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, codes=codes, scale=scale, manifest=np.frombuffer(json.dumps(manifest).encode(), np.uint8))
    return path


def _read(path: Path) -> tuple[dict, np.ndarray, np.ndarray] | None:
    """(manifest, codes, scale) of a shipped file; None when it cannot be read as one."""
    try:
        if path.stat().st_size > MAX_SHIPPED_BYTES:
            return None
        with np.load(path, allow_pickle=False) as z:
            manifest = json.loads(bytes(z["manifest"]).decode())
            codes, scale = z["codes"], z["scale"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError, io.UnsupportedOperation):
        return None
    if not isinstance(manifest, dict) or codes.dtype != np.int8 or codes.ndim != 2 or scale.dtype != np.float32:
        return None
    if scale.shape != (codes.shape[0],) or not np.isfinite(scale).all():
        return None
    return manifest, codes, scale


def matching(
    identity: str,
    count: int,
    version: int,
    texts: Callable[[], Iterable[str]],
    embed: Callable[[list[str]], object],
) -> tuple[np.ndarray | None, str | None]:
    """(the shipped float32 vectors of these rows under this model, None) when a shipped file matches (module
    docstring); (None, why not) when one was meant for this model and corpus size but failed a check; (None, None)
    when none is meant for it. ``texts()`` yields the rows' embedded texts in order (read only for a candidate);
    ``embed`` is the live model's batch embedding, asked for ``SAMPLES`` rows."""
    if not SHIPPED_DIR.is_dir():
        return None, None
    for path in sorted(SHIPPED_DIR.glob("*.npz")):
        found = _read(path)
        if found is None:
            continue
        manifest, codes, scale = found
        if manifest.get("identity") != identity or manifest.get("count") != count:
            continue
        if manifest.get("version") != version or codes.shape != (count, manifest.get("dim")):
            return None, f"the shipped vectors {path.name} are of another layout: built here"
        digest, n = rows_digest(texts())
        if n != count or digest != manifest.get("rows_sha256"):
            return None, None  # another corpus of the same size: not meant for it
        vectors = dequantize(codes, scale)
        picks = sorted({round(i * (count - 1) / max(1, SAMPLES - 1)) for i in range(SAMPLES)})
        wanted = set(picks)
        sample = [t for i, t in enumerate(texts()) if i in wanted]
        live = np.asarray(embed(sample), dtype=np.float32)
        live = live / np.clip(np.linalg.norm(live, axis=1, keepdims=True), 1e-12, None)
        agree = (
            float(np.min(np.sum(live * vectors[picks], axis=1))) if live.shape == (len(picks), codes.shape[1]) else -1.0
        )
        if agree < AGREE:
            return (
                None,
                f"the shipped vectors {path.name} do not match this model's output (cosine {agree:.3f}): built here",
            )
        return vectors, None
    return None, None
