"""What a GGUF file is before llama.cpp loads it: its header, and whether it fits in memory.

A ``gguf:PATH`` model is checked here first, so that bad input is one line naming the file instead of llama.cpp's
"Failed to init server" (which says nothing of why) or a machine swapping itself to a halt:

- **missing**, **not a file**, **not GGUF** (its first four bytes are not ``GGUF``), a **version** llama.cpp does
  not read, or a **header cut short** → ``GGUFError``;
- **too large**: the weights (the file, memory-mapped) plus the KV cache of the context asked for (``kv_bytes``) and
  a margin for llama.cpp's buffers, against the memory available now (``available_memory``: ``MemAvailable`` and the
  cgroup's limit on Linux) → ``GGUFError`` saying both figures.

``read_header`` reads only the metadata (the key/value pairs at the start of the file), skipping the vocabulary's
arrays by their lengths: tens of milliseconds where the ``gguf`` package's ``GGUFReader`` (which builds a numpy view
of every field and tensor) took 2.7 s for SmolLM2's 49,152-token vocabulary on this machine. The layout is GGUF
version 2 and 3's (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), little-endian as llama.cpp writes it.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from saturate.state.errors import BadInput

MAGIC = b"GGUF"
VERSIONS = (2, 3)
MAX_KV = 100_000  # key/value pairs in a header: llama.cpp's files hold a few dozen
MAX_STRING = 64 * 1024 * 1024  # one string of the header (a chat template is a few KB)
MIB = 1024 * 1024
# beside the weights and the KV cache: llama.cpp's compute buffers, the logits, the tokenizer's tables
OVERHEAD_SHARE, OVERHEAD_MIB = 0.10, 128

# value types of the GGUF header and the struct format of the fixed-size ones
_STRING, _ARRAY = 8, 9
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
# the keys kept: general.* and the architecture's shape ({arch}.context_length, ...), the chat template
_KEPT_SUFFIXES = (
    ".context_length",
    ".block_count",
    ".embedding_length",
    ".attention.head_count",
    ".attention.head_count_kv",
    ".attention.key_length",
    ".attention.value_length",
)


class GGUFError(BadInput):
    """A ``gguf:`` file that cannot be run: missing, not GGUF, cut short, or too large for the memory available."""


@dataclass(frozen=True)
class GGUFInfo:
    path: Path
    size: int  # bytes on disk
    version: int
    architecture: str
    name: str  # general.name, else the file's stem
    context_length: int  # the context it was trained for (tokens); 0 when the header does not say
    block_count: int
    head_count_kv: int
    head_dim: int
    chat_template: bool  # the file carries its own chat template (tokenizer.chat_template)

    def kv_bytes(self, n_ctx: int) -> int:
        """The KV cache of ``n_ctx`` tokens in llama.cpp's default f16: keys and values, every layer."""
        return 2 * self.block_count * n_ctx * self.head_count_kv * self.head_dim * 2

    def memory_needed(self, n_ctx: int) -> int:
        """Bytes the loaded model needs, about: its weights, its KV cache, and a margin for the buffers."""
        return int(self.size * (1 + OVERHEAD_SHARE)) + self.kv_bytes(n_ctx) + OVERHEAD_MIB * MIB


def _read(f: BinaryIO, n: int) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise EOFError
    return data


def _unpack(f: BinaryIO, fmt: str) -> Any:
    return struct.unpack(fmt, _read(f, struct.calcsize(fmt)))[0]


def _string(f: BinaryIO, keep: bool = True) -> str:
    n = _unpack(f, "<Q")
    if n > MAX_STRING:
        raise ValueError(f"a header string of {n:,} bytes")
    if not keep:
        f.seek(n, os.SEEK_CUR)
        return ""
    return _read(f, n).decode("utf-8", errors="replace")


def _value(f: BinaryIO, kind: int, keep: bool) -> Any:
    if kind in _SCALARS:
        return _unpack(f, _SCALARS[kind])
    if kind == _STRING:
        return _string(f, keep)
    if kind == _ARRAY:  # skipped: the vocabulary, its scores and merges (nothing here needs them)
        item, count = _unpack(f, "<I"), _unpack(f, "<Q")
        if item in _SCALARS:
            f.seek(count * struct.calcsize(_SCALARS[item]), os.SEEK_CUR)
        elif item == _STRING:
            for _ in range(count):
                f.seek(_unpack(f, "<Q"), os.SEEK_CUR)
        else:
            for _ in range(count):
                _value(f, item, False)
        return None
    raise ValueError(f"unknown value type {kind}")


def _kept(key: str) -> bool:
    return key.startswith("general.") or key == "tokenizer.chat_template" or key.endswith(_KEPT_SUFFIXES)


def read_header(path: Path) -> GGUFInfo:
    """The metadata of the GGUF file at ``path``; ``GGUFError`` (one line naming it) when it is none."""
    shown = str(path)
    if not path.exists():
        raise GGUFError(f"gguf: no file at {shown}")
    if not path.is_file():
        raise GGUFError(f"gguf: {shown} is not a file")
    size = path.stat().st_size
    try:
        with path.open("rb") as f:
            if f.read(4) != MAGIC:
                raise GGUFError(
                    f"gguf: {shown} is not a GGUF file (it does not start with 'GGUF'); give a model file in the "
                    "GGUF format, as llama.cpp, LM Studio and Ollama use"
                )
            version = _unpack(f, "<I")
            if version not in VERSIONS:
                raise GGUFError(f"gguf: {shown} is GGUF version {version}, which llama.cpp does not read (2 or 3)")
            _tensors, count = _unpack(f, "<Q"), _unpack(f, "<Q")
            if count > MAX_KV:
                raise ValueError(f"{count:,} header entries")
            meta: dict[str, Any] = {}
            for _ in range(count):
                key = _string(f)
                kind = _unpack(f, "<I")
                keep = _kept(key)
                value = _value(f, kind, keep)
                if keep:
                    meta[key] = value
    except GGUFError:
        raise
    except (EOFError, ValueError, struct.error, UnicodeDecodeError) as exc:
        why = "it ends inside its header" if isinstance(exc, EOFError) else str(exc)
        raise GGUFError(f"gguf: {shown} is not a readable GGUF file ({why}): damaged or cut short?") from None
    except OSError as exc:
        raise GGUFError(f"gguf: cannot read {shown} ({exc.strerror or exc})") from None
    arch = str(meta.get("general.architecture") or "")

    def number(key: str) -> int:
        value = meta.get(f"{arch}.{key}")
        return int(value) if isinstance(value, (int, float)) and value > 0 else 0

    heads = number("attention.head_count")
    head_dim = number("attention.key_length") or (number("embedding_length") // heads if heads else 0)
    return GGUFInfo(
        path=path,
        size=size,
        version=version,
        architecture=arch,
        name=str(meta.get("general.name") or path.stem),
        context_length=number("context_length"),
        block_count=number("block_count"),
        head_count_kv=number("attention.head_count_kv") or heads,
        head_dim=head_dim,
        chat_template=bool(meta.get("tokenizer.chat_template")),
    )


def available_memory() -> int | None:
    """Bytes of memory available now (Linux: ``MemAvailable``, within the cgroup's limit when there is one; else
    the free physical pages), or None when the system does not say."""
    found: int | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        try:
            found = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            found = None
    try:  # cgroup v2: a container's limit, less what it uses
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            left = int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
            found = left if found is None else min(found, left)
    except (OSError, ValueError):
        pass
    return found


def check_fits(info: GGUFInfo, n_ctx: int) -> None:
    """``GGUFError`` when the model with a context of ``n_ctx`` tokens needs more memory than is available."""
    need, have = info.memory_needed(n_ctx), available_memory()
    if have is not None and need > have:
        raise GGUFError(
            f"gguf: {info.path} needs about {need / MIB:,.0f} MB with a {n_ctx:,}-token context "
            f"({info.size / MIB:,.0f} MB of weights, {info.kv_bytes(n_ctx) / MIB:,.0f} MB of KV cache) and "
            f"{have / MIB:,.0f} MB of memory is available: close other programs, use a smaller file (a lower "
            "quantization), or lower --num-ctx"
        )
