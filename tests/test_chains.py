"""What a session knows about its question: chains of slots — stopped on, kept, shown, tuned (parsed, filled and
asked for: tests/reading/test_chain.py and test_slots.py)."""

from __future__ import annotations

import json

from saturate.cli import main
from saturate.graph import research, session_state
from saturate.nodes.gate import ANSWERED, decide_gate
from saturate.state.rng import new_rng
from saturate.state.settings import NOVELTY_THRESHOLDS, load_settings

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def test_complete_chains_stop_the_gate_before_min_rounds_with_their_values_as_reason():
    settings = load_settings({"min_rounds": 3, "max_rounds": 5}, env={})
    decision, reason, draw, _ = decide_gate(2, 9.0, settings, new_rng(1), "[1.1] country = Zimbabwe")
    assert decision == "stop" and draw is None and reason.startswith(f"{ANSWERED}: [1.1] country = Zimbabwe")
    assert decide_gate(2, 9.0, settings, new_rng(1))[0] == "accept"  # not complete: min_rounds holds
    # two sub-questions: twice the rounds before the cap
    assert decide_gate(5, 9.0, settings, new_rng(1), None, chains=2)[0] == "accept"
    decision, reason, _, _ = decide_gate(10, 9.0, settings, new_rng(1), None, chains=2)
    assert decision == "cap" and "max_rounds 5 x 2 sub-questions" in reason


def test_the_novelty_threshold_defaults_to_its_method():
    for method, threshold in NOVELTY_THRESHOLDS.items():
        assert load_settings({"novelty_method": method}, env={}).novelty_threshold == threshold
    assert load_settings({"novelty_method": "embedding", "novelty_threshold": 2}, env={}).novelty_threshold == 2
    switched = load_settings({}, env={}).replace(novelty_method="embedding")
    assert switched.novelty_threshold == NOVELTY_THRESHOLDS["embedding"]  # the old method's default does not stick


def test_a_session_keeps_shows_and_reports_its_slots(home, musique_source, capsys, tmp_path):
    result = research(BUBYE, thread_id="ch", source=musique_source, seed=3)
    state = session_state("ch")
    assert [s["subject"] for s in state["chains"][0]["slots"]] == ["Bubye River", "#1"]
    assert all("slots" in r and "complete" in r for r in state["records"])
    assert state["records"][1]["planner"].startswith("slot 1.")  # round 2 asks for a slot
    assert result.short_answer == "Victoria Falls" and result.debug["slots"][1]["value"] == "Victoria Falls"
    assert main(["show", "ch"]) == 0
    out = capsys.readouterr().out
    assert "short answer: Victoria Falls" in out and "slot   [1.2] waterfall of Zimbabwe = Victoria Falls" in out
    assert main(["show", "ch", "--html", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert '<table class="slots">' in page and "Victoria Falls" in page
    assert main(["research", BUBYE, "--corpus", str(musique_source.index_path), "--json"]) in (0, 2)


def test_the_result_json_has_the_short_answer_and_the_slots(home, musique_corpus, capsys):
    assert main(["research", BUBYE, "--corpus", str(musique_corpus), "--json", "--thread", "j"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["short_answer"] == "Victoria Falls"
    assert [s["slot"] for s in out["debug"]["slots"]] == ["1.1", "1.2"]
    assert {"kind", "focus", "subject", "value", "p", "status", "source", "page"} <= set(out["debug"]["slots"][0])
