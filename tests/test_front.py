"""The front of the house: `saturate` exports the public API, lazily, and nothing else (as httpx pins its
exported members, a change to ``__all__`` is a decision, made here)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import saturate

PUBLIC = ["BadInput", "Settings", "research", "research_multi", "resume", "session_state", "verify"]


def test_all_is_the_public_api():
    assert saturate.__all__ == PUBLIC
    assert set(PUBLIC) <= set(dir(saturate))  # editors complete them before first use


def test_each_name_is_the_engine_object():
    from saturate.graph import api, session
    from saturate.state import errors, settings

    assert saturate.research is api.research and saturate.verify is api.verify and saturate.resume is api.resume
    assert saturate.research_multi is api.research_multi and saturate.session_state is session.session_state
    assert saturate.Settings is settings.Settings and saturate.BadInput is errors.BadInput
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = saturate.nope  # type: ignore[attr-defined]


def test_importing_the_package_is_light():
    """`import saturate` (what `saturate --help` pays first) loads no LangGraph or LangChain; the first use does."""
    code = (
        "import sys, saturate; light = 'langgraph' not in sys.modules and 'langchain_core' not in sys.modules; "
        "from saturate import research; print(light, 'langgraph' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]


def test_python_dash_m_saturate_is_the_command():
    out = subprocess.run([sys.executable, "-m", "saturate", "--help"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("usage: saturate ") and "research" in out.stdout
