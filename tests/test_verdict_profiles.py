"""The source tiers file on the command line and in a session, and the benchmark's cross-validation of the profiles
(the profiles, the proof and the tier table on their own: tests/reading/test_verdict.py and test_tiers.py)."""

from __future__ import annotations

import json

import pytest

from saturate.bench.verify import GRID, STANCE_GRID
from saturate.cli import main
from saturate.graph import session_state, verify
from saturate.nodes.reading.tiers import load_tier_table
from saturate.nodes.reading.verdict import PROFILES
from saturate.sources.replay import ReplaySource
from saturate.state.errors import BadInput

from conftest import eval_file


def test_a_bad_source_tiers_file_is_bad_input_named_up_front(home, tmp_path, capsys):
    missing = tmp_path / "nope.json"
    assert main(["verify", "The bridge opened in 1932.", "--source-tiers", str(missing), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "source_tiers" in err and str(missing) in err and "not found" in err and len(err.strip().splitlines()) == 1
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert main(["verify", "The bridge opened in 1932.", "--source-tiers", str(broken), "--quiet"]) == 2
    assert str(broken) in capsys.readouterr().err
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"example.org": "gold"}))
    assert main(["verify", "The bridge opened in 1932.", "--source-tiers", str(wrong), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(wrong) in err and "example.org" in err
    # a file that changed after the settings were made is bad input too when the table is read
    wrong.write_text(json.dumps(["example.org"]))
    with pytest.raises(BadInput, match="expected"):
        load_tier_table(str(wrong))


def test_a_good_source_tiers_file_changes_the_weight(home, tmp_path):
    tiers = tmp_path / "tiers.json"
    tiers.write_text(json.dumps({"example.org": "primary"}))
    hits = [{"url": "https://example.org/bridge", "passage": "The Sydney Harbour Bridge opened in 1932."}]
    verify(
        "The Sydney Harbour Bridge opened in 1932.",
        thread_id="t",
        source=ReplaySource(hits),
        seed=0,
        source_tiers=str(tiers),
    )
    (ev,) = session_state("t")["evidence"]
    assert ev["tier"] == "primary" and ev["weight"] == 1.0


@pytest.mark.slow
def test_bench_verify_cross_validation(home, capsys):
    eval_file("factcheck", "claims.jsonl")
    assert main(["bench", "verify", "--limit", "40", "--cv", "3", "--json"]) == 0
    cv = json.loads(capsys.readouterr().out)["cv"]
    assert cv["k"] == 3 and len(cv["rule"]["folds"]) == len(cv["stance"]["folds"]) == 3
    for fold in cv["rule"]["folds"]:
        assert all(fold["chosen"][name] in values for name, values in GRID.items())
        assert 0 <= fold["test_macro_f1"] <= 1 and fold["train_macro_f1"] >= 0
    for fold in cv["stance"]["folds"]:
        assert all(fold["chosen"][name] in values for name, values in STANCE_GRID.items())
    assert cv["rule"]["calibrated_profile"] == {name: getattr(PROFILES["calibrated"], name) for name in GRID}
    assert main(["bench", "verify", "--limit", "40", "--cv", "1"]) == 2
