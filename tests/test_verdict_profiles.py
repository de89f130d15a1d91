"""The decision rule's profiles and settings, the proof that reads well, the tier table and its file."""

from __future__ import annotations

import json

import pytest

from saturate.graph import session_state, verify
from saturate.graph.bench.verify import GRID, STANCE_GRID
from saturate.graph.cli import main
from saturate.nodes.reading.tiers import load_tier_table, registrable_domain, tier_of
from saturate.nodes.reading.verdict import PROFILES, VerifyRules, check_proof, decide_from_history, extractive_proof
from saturate.sources.replay import ReplaySource
from saturate.state.errors import BadInput
from saturate.state.records import EvidenceHit
from saturate.state.settings import Settings, SettingsError, load_settings

from conftest import shared_file


def hit(url, stance, tier="other", weight=0.4, text="The bridge opened in 1932 to traffic."):
    return EvidenceHit(
        url=url, domain=registrable_domain(url), stance=stance, tier=tier, weight=weight, excerpt=text, text=text
    )


def test_the_profile_setting_and_explicit_overrides(monkeypatch):
    assert VerifyRules.from_settings(load_settings({}, env={})).threshold == PROFILES["calibrated"].threshold
    strict = VerifyRules.from_settings(load_settings({"verify_profile": "strict"}, env={}))
    assert (strict.threshold, strict.min_sources, strict.margin, strict.partial_weight) == (1.6, 2, 2.0, 0.5)
    # an explicitly set value wins over the profile's, the others stay the profile's
    mixed = VerifyRules.from_settings(load_settings({"verify_profile": "strict", "verify_threshold": 0.8}, env={}))
    assert (mixed.threshold, mixed.min_sources, mixed.partial_weight) == (0.8, 2, 0.5)
    assert "strict with threshold 0.8" in mixed.describe()
    env = VerifyRules.from_settings(load_settings({}, env={"SATURATE_VERIFY_MIN_SOURCES": "3"}))
    assert env.min_sources == 3 and env.threshold == PROFILES["calibrated"].threshold
    with pytest.raises(SettingsError, match="verify_profile"):
        load_settings({"verify_profile": "lenient"}, env={})
    with pytest.raises(SettingsError, match="verify_margin"):
        load_settings({"verify_margin": 0.5}, env={})


def test_the_settings_describe_the_profiles_as_they_are():
    text = Settings.model_fields["verify_profile"].description
    for name, p in PROFILES.items():
        assert f"`{name}` {p.threshold:g} / {p.min_sources} / {p.margin:g} / {p.partial_weight:.1f}" in text


def test_one_agreeing_source_decides_by_default_two_are_needed_when_strict():
    one = [hit("https://en.wikipedia.org/wiki/Bridge", "support")]
    assert decide_from_history("c", one, 2, 2).outcome == "True"
    assert decide_from_history("c", one, 2, 2, PROFILES["strict"]).outcome == "Invalid"
    partial = [hit("https://en.wikipedia.org/wiki/Bridge", "partial")]
    assert decide_from_history("c", partial, 2, 2).outcome == "True"  # partial support counts in full
    # a refutation half as heavy as the support is a conflict: Invalid, whichever profile
    both = one + [hit("https://example.org/b", "refute")]
    v = decide_from_history("c", both, 2, 2)
    assert v.outcome == "Invalid" and v.conflict and "conflicts" in v.reason


def test_a_true_proof_quotes_its_decisive_evidence_and_says_what_would_change_it():
    hits = [
        hit("https://www.nsw.gov.au/bridge", "support", "primary", 1.0),
        hit("https://example.org/blog", "refute", text="The bridge opened in 1931, say some."),
    ]
    v = decide_from_history("The bridge opened in 1932.", hits, 1, 2)
    assert v.outcome == "True"
    proof = extractive_proof("The bridge opened in 1932.", v)
    decisive, against = proof.split("**Against**")
    assert "**Decisive evidence**" in decisive and '"The bridge opened in 1932 to traffic."' in decisive
    assert "https://www.nsw.gov.au/bridge" in decisive and "https://example.org/blog" in against
    assert "**What would change the verdict:** Refuting evidence weighing more than 0.5 in all (now 0.4)" in proof
    assert check_proof(proof, hits) == []


def test_false_and_invalid_proofs():
    refuting = [hit("https://a.gov/x", "refute", "primary", 1.0, text="The bridge opened in 1931.")]
    v = decide_from_history("The bridge opened in 1932.", refuting, 2, 2)
    proof = extractive_proof("The bridge opened in 1932.", v)
    assert v.outcome == "False" and proof.index("**Decisive evidence**") < proof.index("1931")
    assert "supporting evidence weighing more than 0.5" in proof.lower() and check_proof(proof, refuting) == []
    near = hit("https://b.org/y", "irrelevant", text="The bridge was painted grey.")
    far = hit("https://c.org/z", "irrelevant", text="Bananas are rich in potassium.")
    near.stance_reason, far.stance_reason = "lacks the claim's 1932", "about something else: no 'bridge' in it"
    v = decide_from_history("The bridge opened in 1932.", [near, far], 2, 2)
    proof = extractive_proof("The bridge opened in 1932.", v, [near, far])
    assert v.outcome == "Invalid" and "No evidence hit supports or refutes the claim." in proof
    assert "True needs support of 0.4 from 1 independent source (now 0 from 0)" in proof
    # the closest hits and why they do not count; not the ones about something else
    assert '"The bridge was painted grey." — [b.org](https://b.org/y) (b.org: lacks the claim\'s 1932)' in proof
    assert "Bananas" not in proof and check_proof(proof, [near, far]) == []


def test_quotes_are_checked_whitespace_aside():
    page = hit("https://a.gov/x", "support", text="The bridge opened\n\nin 1932 to traffic.")
    assert check_proof('- "The bridge opened in 1932 to traffic." https://a.gov/x', [page]) == []
    assert check_proof('- "The bridge opened in 1933 to traffic." https://a.gov/x', [page])


@pytest.mark.parametrize(
    "domain,tier",
    [
        ("ox.ac.uk", "primary"),  # academic second level
        ("u-tokyo.ac.jp", "primary"),
        ("mext.go.jp", "primary"),  # official second level
        ("legifrance.gouv.fr", "primary"),
        ("army.mil", "primary"),
        ("who.int", "primary"),
        ("nature.com", "primary"),  # journals
        ("arxiv.org", "primary"),
        ("go.com", "other"),  # "go" is official only as a country's second level
        ("apnews.com", "wire"),
        ("afp.com", "wire"),
        ("nytimes.com", "trade"),  # major news
        ("bbc.co.uk", "trade"),
        ("medium.com", "other"),
    ],
)
def test_the_tier_table(domain, tier):
    assert tier_of(domain)[0] == tier


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


def test_bench_verify_cross_validation(home, capsys):
    shared_file("factcheck", "claims.jsonl")
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
