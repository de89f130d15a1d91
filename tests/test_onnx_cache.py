"""The ONNX models' optimised graphs kept on disk (state/onnx_cache.py, issue 46): a process builds its sessions from
them without optimising again, and what the models compute does not change by a bit; a damaged file is rebuilt, a
folder that cannot be written or ``SATURATE_MODEL_CACHE=off`` builds as before, and a model without a known sha256
is never kept."""

from __future__ import annotations

import numpy as np
import pytest

from saturate.nodes.reading.reader import MODEL_DIR, Candidate, Reader
from saturate.state import onnx_cache

PAIRS = [
    ("What is the capital of Canada?", "Ottawa is the capital city of Canada, on the Ottawa River.", "Ottawa"),
    ("Who wrote Hamlet?", "Hamlet is a tragedy written by William Shakespeare around 1600.", "Hamlet"),
    ("How do plants make sugar?", "Photosynthesis stores light energy in sugars made from water and CO2.", "Plant"),
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    monkeypatch.setenv("SATURATE_MODEL_CACHE", str(folder))
    return folder


def _reads(reader: Reader) -> list[tuple]:
    """Each pair's probability, raw score, span and span probability."""
    out = []
    for q, s, title in PAIRS:
        (read,) = reader.read(q, [Candidate(doc=0, order=0, title=title, text=s)])
        out.append((read.p, read.score, read.span, read.span_p))
    return out


def _built_from(monkeypatch) -> list:
    """What each onnxruntime session of the test was built from (a file's path, or "bytes")."""
    import onnxruntime as ort

    sources: list = []
    real = ort.InferenceSession.__init__

    def spy(self, source, *args, **kwargs):
        sources.append(source if isinstance(source, str) else "bytes")
        real(self, source, *args, **kwargs)

    monkeypatch.setattr(ort.InferenceSession, "__init__", spy)
    return sources


def test_the_reader_is_built_from_its_kept_graph_and_reads_bit_for_bit_the_same(cache, monkeypatch):
    monkeypatch.setenv("SATURATE_MODEL_CACHE", "off")
    plain = _reads(Reader())
    assert not cache.exists()  # off: nothing written
    monkeypatch.setenv("SATURATE_MODEL_CACHE", str(cache))
    first = _reads(Reader())  # optimised from the shipped file, the graph written out
    kept = list(cache.glob("reader-*.onnx"))
    assert len(kept) == 1 and kept[0].stat().st_size > 1_000_000, list(cache.iterdir())
    assert not list(cache.glob("*.partial")), "a temporary file was left"
    stamp = kept[0].stat().st_mtime_ns
    sources = _built_from(monkeypatch)
    second = _reads(Reader())
    assert sources == [str(kept[0])], sources  # the kept graph, not the shipped bytes
    assert kept[0].stat().st_mtime_ns == stamp  # read, not written again
    assert plain == first == second, (plain, first, second)  # p, span and score, bit for bit


def test_a_damaged_kept_graph_is_rebuilt_and_replaced(cache, monkeypatch):
    plain = _reads(Reader())
    (kept,) = cache.glob("reader-*.onnx")
    good = kept.read_bytes()
    kept.write_bytes(b"\x08\x07 not a model " * 100)  # damaged
    assert _reads(Reader()) == plain
    assert kept.read_bytes() == good  # written again from the shipped model
    kept.write_bytes(good[: len(good) // 2])  # cut short
    assert _reads(Reader()) == plain
    assert kept.read_bytes() == good


def test_a_folder_that_cannot_be_used_builds_as_without_a_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    plain = None
    for where in (blocker, blocker / "models", "~no-such-user-here/models", loop / "models"):
        monkeypatch.setenv("SATURATE_MODEL_CACHE", str(where))
        reads = _reads(Reader())
        assert plain is None or reads == plain, where
        plain = reads
    assert blocker.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "loop"]


def test_a_model_without_a_known_sha256_is_never_kept(cache, tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    for file in MODEL_DIR.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    Reader(folder, check_sha=False)  # a reader the caller did not have checked: its file may change
    assert not cache.exists() or not list(cache.iterdir())


def test_the_default_embedding_model_is_built_from_its_kept_graph_with_the_same_vectors(cache, monkeypatch):
    from saturate.graph.embeddings import OnnxEmbeddings

    texts = ["What is the capital of Canada?", "Ottawa is the capital city of Canada.", "x"]
    monkeypatch.setenv("SATURATE_MODEL_CACHE", "off")
    plain = OnnxEmbeddings().embed_batch(texts)
    monkeypatch.setenv("SATURATE_MODEL_CACHE", str(cache))
    first = OnnxEmbeddings().embed_batch(texts)
    (kept,) = cache.glob("embedding-*.onnx")
    sources = _built_from(monkeypatch)
    second = OnnxEmbeddings()
    assert sources == [str(kept)], sources
    assert np.array_equal(plain, first) and np.array_equal(plain, second.embed_batch(texts))
    assert [second.embed_query(t) for t in texts] == [row.tolist() for row in plain]


def test_the_name_of_a_kept_graph_says_what_made_it(monkeypatch):
    a = onnx_cache.cached_name("reader", "ab" * 32)
    assert a.startswith("reader-abababababababab-") and a.endswith(".onnx")
    assert onnx_cache.cached_name("reader", "cd" * 32) != a  # another model
    assert onnx_cache.cached_name("reader", "ab" * 32, ["ConstantFolding"]) != a  # other rewrites
    import onnxruntime as ort

    monkeypatch.setattr(ort, "__version__", "0.0.1")
    assert onnx_cache.cached_name("reader", "ab" * 32) != a  # another onnxruntime


def test_where_the_graphs_are_kept(monkeypatch, tmp_path):
    monkeypatch.delenv("SATURATE_MODEL_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert onnx_cache.cache_dir() == tmp_path / "xdg" / "saturate" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert onnx_cache.cache_dir() == tmp_path / "user" / ".cache" / "saturate" / "models"
    for off in ("off", "OFF", "0", "no"):
        monkeypatch.setenv("SATURATE_MODEL_CACHE", off)
        assert onnx_cache.cache_dir() is None


def test_a_temporary_file_left_by_a_killed_process_is_removed_once_old(cache, monkeypatch):
    import os
    import time

    cache.mkdir()
    name = onnx_cache.cached_name("reader", _shipped_sha(), ("ConstantFolding",))
    old, fresh = cache / f".{name}.killed.partial", cache / f".{name}.writing.partial"
    old.write_bytes(b"half a graph")
    fresh.write_bytes(b"another process writing now")
    hour_ago = time.time() - 2 * onnx_cache.STALE_S
    os.utime(old, (hour_ago, hour_ago))
    Reader()
    assert not old.exists() and fresh.exists()
    assert (cache / name).is_file()


def _shipped_sha() -> str:
    from saturate.nodes.reading.reader import MODEL_FILE, _recorded_sha256

    return _recorded_sha256(MODEL_DIR)[MODEL_FILE.name]


def test_onnxruntime_sends_no_telemetry_and_writes_nothing_in_the_users_cache(tmp_path, home):
    """onnxruntime >= 1.29 sends telemetry from Linux by default and keeps a device id and a queue of unsent events
    under $XDG_CACHE_HOME/Microsoft; a saturate process turns it off (saturate/__init__.py), unless the user chose."""
    import subprocess
    import sys

    from conftest import child_env

    xdg = tmp_path / "xdg-cache"
    env = child_env(home, drop=("ORT_",), XDG_CACHE_HOME=str(xdg))
    run = subprocess.run(
        [sys.executable, "-m", "saturate", "research", "Where does the Bubye River flow?", "--max-rounds", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert not (xdg / "Microsoft").exists(), sorted(str(p) for p in xdg.rglob("*"))
    said = subprocess.run(
        [sys.executable, "-c", "import os, saturate; print(os.environ['ORT_DISABLE_TELEMETRY'])"],
        env={**env, "ORT_DISABLE_TELEMETRY": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert said.stdout.strip() == "0"  # the user's own choice stands
