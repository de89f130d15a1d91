"""``reading.tiers``: a domain's tier (the weight of its word), registrable domains and the tier table file."""

from __future__ import annotations

import json

import pytest

from saturate.nodes.reading.tiers import load_tier_table, registrable_domain, tier_of
from saturate.state.settings import SettingsError, load_settings


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


def test_tiers_by_registrable_domain(tmp_path):
    assert registrable_domain("https://news.bbc.co.uk/x") == "bbc.co.uk"
    assert registrable_domain("https://alice.github.io/p") == "alice.github.io"  # private suffix: independent
    assert tier_of("nasa.gov")[0] == "primary" and tier_of("reuters.com")[0] == "wire"
    assert tier_of("britannica.com")[0] == "trade" and tier_of("wikipedia.org")[0] == "other"
    assert tier_of("tesla.com", "Tesla was founded in 2003")[0] == "primary"  # the subject's own site
    f = tmp_path / "tiers.json"
    f.write_text(json.dumps({"wikipedia.org": "trade"}))
    assert tier_of("wikipedia.org", table=load_tier_table(str(f)))[0] == "trade"
    f.write_text(json.dumps({"x.com": "gold"}))
    with pytest.raises(ValueError, match="bad entries x.com"):
        load_tier_table(str(f))
    with pytest.raises(SettingsError, match="other must not exceed 0.4"):
        load_settings({"tier_weights": {"primary": 1, "wire": 0.8, "trade": 0.6, "other": 0.5}})
