"""``reading.verdict``: the decision rule (True/False/Invalid/need more search) from weighed stances, its
profiles and settings, and the extractive proof with its checked quotes."""

from __future__ import annotations

import pytest

from saturate.nodes.reading.tiers import registrable_domain
from saturate.nodes.reading.verdict import (
    NEED_MORE_SEARCH,
    PROFILES,
    VerifyRules,
    check_proof,
    decide_from_history,
    extractive_proof,
)
from saturate.state.records import EvidenceHit, Stance, Tier
from saturate.state.settings import Settings, SettingsError, load_settings

STRICT = PROFILES["strict"]  # the design's rule: 1.6 from two independent sources, partial support at half weight


def hit(
    url: str,
    stance: Stance,
    tier: Tier = "primary",
    weight: float = 1.0,
    date: str | None = None,
    text: str = "The bridge opened in 1932.",
) -> EvidenceHit:
    return EvidenceHit(
        url=url,
        domain=registrable_domain(url),
        stance=stance,
        tier=tier,
        weight=weight,
        pub_date=date,
        excerpt=text,
        text=text,
    )


def test_true_false_need_more_and_invalid():
    support = [hit("https://www.nsw.gov.au/a", "support"), hit("https://www.reuters.com/b", "support", "wire", 0.8)]
    v = decide_from_history("claim", support, 1, 2, STRICT)
    assert v.outcome == "True" and v.support == 1.8 and v.support_domains == ["nsw.gov.au", "reuters.com"]
    refute = [hit("https://a.gov/x", "refute"), hit("https://apnews.com/y", "refute", "wire", 0.8)]
    assert decide_from_history("claim", refute, 1, 2, STRICT).outcome == "False"
    weak = [hit("https://en.wikipedia.org/a", "support", "other", 0.4)]
    assert decide_from_history("claim", weak, 1, 2, STRICT).outcome == NEED_MORE_SEARCH
    v = decide_from_history("claim", weak, 2, 2, STRICT)
    assert v.outcome == "Invalid" and "never reached" in v.reason
    v = decide_from_history("claim", support + refute, 2, 2, STRICT)
    assert v.outcome == "Invalid" and "conflicts" in v.reason


def test_one_domain_counts_once_and_partial_is_weighted():
    same = [
        hit("https://www.cdc.gov/a", "support"),
        hit("https://www2.cdc.gov/b", "support"),
        hit("https://cdc.gov/c", "support"),
    ]
    v = decide_from_history("c", same, 2, 2, STRICT)
    assert v.support == 1.0 and v.support_domains == ["cdc.gov"] and v.outcome == "Invalid"
    mixed = [hit("https://a.gov/x", "support"), hit("https://b.gov/y", "partial")]
    v = decide_from_history("c", mixed, 2, 2, STRICT)
    assert v.support == 1.5 and v.outcome == "Invalid"  # 1 + 0.5 x 1 < 1.6
    assert decide_from_history("c", mixed, 2, 2, VerifyRules(partial_weight=0.6)).outcome == "True"


def test_time_alignment_where_dates_are_known():
    hits = [
        hit("https://a.gov/x", "support", date="2024-01-01"),
        hit("https://b.gov/y", "support", date="2024-03-01"),
        hit("https://c.gov/z", "refute", date="2024-02-01"),
        hit("https://d.gov/w", "refute", date="1990-01-01"),
    ]
    v = decide_from_history("c", hits, 2, 2, STRICT)
    assert any("d.gov" in e for e in v.excluded) and v.refute == 1.0 and v.outcome == "True"


def test_proof_citations_are_checked():
    hits = [hit("https://a.gov/x", "support"), hit("https://b.gov/y", "support", text="It opened in 1932 to traffic.")]
    v = decide_from_history("The bridge opened in 1932.", hits, 1, 2, STRICT)
    proof = extractive_proof("The bridge opened in 1932.", v)
    assert check_proof(proof, hits) == [] and "https://a.gov/x" in proof
    bad = proof + '\n- https://evil.example/z says "the bridge opened in 1999"'
    problems = check_proof(bad, hits)
    assert any("evil.example" in p for p in problems) and any("1999" in p for p in problems)
    assert check_proof('- https://a.gov/x: "It opened in 1932 to traffic."', hits)  # quote of another hit's text


# the profiles' tests weigh an ordinary source (an 'other' tier at 0.4) by default
def profile_hit(
    url: str,
    stance: Stance,
    tier: Tier = "other",
    weight: float = 0.4,
    text: str = "The bridge opened in 1932 to traffic.",
) -> EvidenceHit:
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
    assert text is not None
    for name, p in PROFILES.items():
        assert f"`{name}` {p.threshold:g} / {p.min_sources} / {p.margin:g} / {p.partial_weight:.1f}" in text


def test_one_agreeing_source_decides_by_default_two_are_needed_when_strict():
    one = [profile_hit("https://en.wikipedia.org/wiki/Bridge", "support")]
    assert decide_from_history("c", one, 2, 2).outcome == "True"
    assert decide_from_history("c", one, 2, 2, PROFILES["strict"]).outcome == "Invalid"
    partial = [profile_hit("https://en.wikipedia.org/wiki/Bridge", "partial")]
    assert decide_from_history("c", partial, 2, 2).outcome == "True"  # partial support counts in full
    # a refutation half as heavy as the support is a conflict: Invalid, whichever profile
    both = one + [profile_hit("https://example.org/b", "refute")]
    v = decide_from_history("c", both, 2, 2)
    assert v.outcome == "Invalid" and v.conflict and "conflicts" in v.reason


def test_a_true_proof_quotes_its_decisive_evidence_and_says_what_would_change_it():
    hits = [
        profile_hit("https://www.nsw.gov.au/bridge", "support", "primary", 1.0),
        profile_hit("https://example.org/blog", "refute", text="The bridge opened in 1931, say some."),
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
    refuting = [profile_hit("https://a.gov/x", "refute", "primary", 1.0, text="The bridge opened in 1931.")]
    v = decide_from_history("The bridge opened in 1932.", refuting, 2, 2)
    proof = extractive_proof("The bridge opened in 1932.", v)
    assert v.outcome == "False" and proof.index("**Decisive evidence**") < proof.index("1931")
    assert "supporting evidence weighing more than 0.5" in proof.lower() and check_proof(proof, refuting) == []
    near = profile_hit("https://b.org/y", "irrelevant", text="The bridge was painted grey.")
    far = profile_hit("https://c.org/z", "irrelevant", text="Bananas are rich in potassium.")
    near.stance_reason, far.stance_reason = "lacks the claim's 1932", "about something else: no 'bridge' in it"
    v = decide_from_history("The bridge opened in 1932.", [near, far], 2, 2)
    proof = extractive_proof("The bridge opened in 1932.", v, [near, far])
    assert v.outcome == "Invalid" and "No evidence hit supports or refutes the claim." in proof
    assert "True needs support of 0.4 from 1 independent source (now 0 from 0)" in proof
    # the closest hits and why they do not count; not the ones about something else
    assert '"The bridge was painted grey." — [b.org](https://b.org/y) (b.org: lacks the claim\'s 1932)' in proof
    assert "Bananas" not in proof and check_proof(proof, [near, far]) == []


def test_quotes_are_checked_whitespace_aside():
    page = profile_hit("https://a.gov/x", "support", text="The bridge opened\n\nin 1932 to traffic.")
    assert check_proof('- "The bridge opened in 1932 to traffic." https://a.gov/x', [page]) == []
    assert check_proof('- "The bridge opened in 1933 to traffic." https://a.gov/x', [page])
