"""The command imports its engine with the garbage collector paused, then frozen (saturate/cli/loading.py, issue 46);
a program that imports saturate keeps its collector as it set it."""

from __future__ import annotations

import gc

import pytest

from saturate.cli import loading


@pytest.fixture
def collector():
    """The collector as the test found it, afterwards: enabled, nothing frozen by the test left frozen."""
    was, frozen = gc.isenabled(), gc.get_freeze_count()
    yield
    if gc.get_freeze_count() > frozen:
        gc.unfreeze()
    (gc.enable if was else gc.disable)()


def test_the_command_imports_with_the_collector_paused_then_freezes_what_it_imported(collector, monkeypatch):
    monkeypatch.setattr(loading, "_is_the_command", lambda: True)
    gc.enable()
    before = gc.get_freeze_count()
    with loading.engine_loading():
        assert not gc.isenabled()
        imported = [object() for _ in range(10)]  # what an import leaves for the life of the process
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(imported)


def test_an_import_that_fails_leaves_the_collector_running(collector, monkeypatch):
    monkeypatch.setattr(loading, "_is_the_command", lambda: True)
    gc.enable()
    with pytest.raises(KeyboardInterrupt), loading.engine_loading():
        raise KeyboardInterrupt  # a Ctrl-C while the engine loads
    assert gc.isenabled()


def test_a_program_that_imports_saturate_keeps_its_collector(collector, monkeypatch):
    monkeypatch.setattr(loading, "_is_the_command", lambda: False)
    gc.enable()
    before = gc.get_freeze_count()
    with loading.engine_loading():
        assert gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == before
    # and a collector its program had turned off stays off, nothing frozen
    monkeypatch.setattr(loading, "_is_the_command", lambda: True)
    gc.disable()
    with loading.engine_loading():
        pass
    assert not gc.isenabled() and gc.get_freeze_count() == before
