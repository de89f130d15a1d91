"""Claim verification: evidence weights, the decision rule, stance, proofs, the verify graph and its benchmark."""

from __future__ import annotations

import json

import pytest

from saturate.graph import session_state, verify
from saturate.graph.bench.ollama_script import OllamaScript, OllamaServer
from saturate.graph.cli import main
from saturate.nodes.reading.stance import heuristic_stance
from saturate.nodes.reading.tiers import load_tier_table, registrable_domain, tier_of
from saturate.nodes.reading.verdict import (
    NEED_MORE_SEARCH,
    PROFILES,
    VerifyRules,
    check_proof,
    decide_from_history,
    extractive_proof,
)
from saturate.sources.replay import ReplaySource
from saturate.state.records import EvidenceHit
from saturate.state.settings import SettingsError, load_settings

from conftest import shared_file

STRICT = PROFILES["strict"]  # the design's rule: 1.6 from two independent sources, partial support at half weight


def hit(url, stance, tier="primary", weight=1.0, date=None, text="The bridge opened in 1932."):
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


@pytest.mark.parametrize(
    "passage,stance",
    [
        ("The Golden Gate Bridge opened in 1937 in San Francisco.", "support"),
        ("The Golden Gate Bridge in San Francisco opened in 1933.", "refute"),  # another year in the same slot
        ("The Golden Gate Bridge in San Francisco did not open in 1937; that is a myth.", "irrelevant"),  # a cue word
        ("Bananas are rich in potassium.", "irrelevant"),
        ("The Golden Gate Bridge in San Francisco is painted orange.", "irrelevant"),  # no 1937: cannot speak for it
    ],
)
def test_heuristic_stance(passage, stance):
    got, excerpt, reason = heuristic_stance("The Golden Gate Bridge in San Francisco opened in 1937.", passage)
    assert got == stance, reason
    assert excerpt in passage


def test_proof_citations_are_checked():
    hits = [hit("https://a.gov/x", "support"), hit("https://b.gov/y", "support", text="It opened in 1932 to traffic.")]
    v = decide_from_history("The bridge opened in 1932.", hits, 1, 2, STRICT)
    proof = extractive_proof("The bridge opened in 1932.", v)
    assert check_proof(proof, hits) == [] and "https://a.gov/x" in proof
    bad = proof + '\n- https://evil.example/z says "the bridge opened in 1999"'
    problems = check_proof(bad, hits)
    assert any("evil.example" in p for p in problems) and any("1999" in p for p in problems)
    assert check_proof('- https://a.gov/x: "It opened in 1932 to traffic."', hits)  # quote of another hit's text


CLAIM = "The Sydney Harbour Bridge opened in 1932."
GOOD = [
    {
        "url": "https://www.nsw.gov.au/bridge",
        "passage": "The Sydney Harbour Bridge opened in 1932 after eight years of construction.",
        "stance": "support",
    },
    {
        "url": "https://www.reuters.com/bridge",
        "passage": "Sydney's Harbour Bridge, opened in 1932, turned 90.",
        "stance": "support",
    },
    {"url": "https://en.wikipedia.org/wiki/Cheese", "passage": "Cheese is a dairy product.", "stance": "irrelevant"},
]


def test_verify_graph_true_with_proof(home):
    result = verify(CLAIM, thread_id="v", source=ReplaySource(GOOD), seed=0)
    assert result.outcome == "True" and result.debug["attempts"] == 1
    assert {s.url for s in result.sources} == {GOOD[0]["url"], GOOD[1]["url"]}
    assert all(s.excerpt and s.excerpt in g["passage"] for s in result.sources for g in GOOD if g["url"] == s.url)
    assert (
        "**Verdict: True.**" in result.proof
        and check_proof(result.proof, [EvidenceHit.model_validate(h) for h in session_state("v")["evidence"]]) == []
    )
    assert {"total_queries", "total_pages_visited"} <= set(result.debug)


def test_need_more_search_routes_back_to_plan_query(home):
    weak = [
        {
            "url": "https://en.wikipedia.org/wiki/Sydney_Harbour_Bridge",
            "passage": "The Sydney Harbour Bridge opened in 1932.",
        }
    ]
    result = verify(
        CLAIM, thread_id="w", source=ReplaySource(weak), seed=0, verify_max_attempts=3, verify_profile="strict"
    )
    state = session_state("w")
    assert result.outcome == "Invalid" and result.debug["attempts"] == 3
    assert any("need more search" in n for n in result.debug["notes"])
    # each attempt ran its own loop of rounds after the previous one
    assert len(state["records"]) >= 3 * 2 and state["attempt_start"] > 0
    assert len(state["queries"]) == len(set(q.lower() for q in state["queries"]))


def test_verify_cli_json_contract(home, capsys, monkeypatch):
    import saturate.graph.session as session

    real = session.make_context
    monkeypatch.setattr(
        session, "make_context", lambda s, h, m=None, src=None, *more: real(s, h, m, ReplaySource(GOOD))
    )
    assert main(["verify", CLAIM, "--json", "--thread", "c"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["outcome"] == "True" and out["proof"]
    assert set(out["sources"][0]) == {"n", "url", "title", "pub_date", "excerpt"}
    assert out["debug"]["total_queries"] >= 1 and "total_pages_visited" in out["debug"]
    assert main(["verify", "", "--quiet"]) == 2


def test_model_stance_and_a_rejected_model_proof(home):
    script = OllamaScript(
        plan=['{"queries": ["Sydney Harbour Bridge opening year", "Harbour Bridge 1932"]}'],
        stance=[
            '{"stance": "support", "quote": '
            '"The Sydney Harbour Bridge opened in 1932 after eight years of construction."}',
            '{"stance": "support", "quote": "made up"}',
            "not json",
        ],
        proof=['Proof: see https://invented.example/x "the bridge opened in 1932"'],
        compress=["- fact"],
    )
    with OllamaServer(script) as server:
        result = verify(
            CLAIM, thread_id="m", source=ReplaySource(GOOD), seed=0, model="ollama:qwen-test", ollama_host=server.url
        )
    ev = {h["url"]: h for h in session_state("m")["evidence"]}
    assert ev[GOOD[0]["url"]]["stance_by"] == "model"
    assert ev[GOOD[1]["url"]]["excerpt"] in GOOD[1]["passage"]  # an invented quote is replaced by a verbatim sentence
    assert ev[GOOD[2]["url"]]["stance_by"] == "heuristic"  # unusable reply → heuristic, recorded
    assert result.outcome == "True" and result.debug["proof"] == "extractive"
    assert any("model proof rejected" in n and "invented.example" in n for n in result.debug["notes"])


def test_bench_verify_json(home, capsys, tmp_path):
    shared_file("factcheck", "claims.jsonl")
    assert main(["bench", "verify", "--limit", "25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["rules"]) == {
        "gold-stance/calibrated",
        "gold-stance/strict",
        "heuristic-stance/calibrated",
        "heuristic-stance/strict",
        "always-true",
        "any-hit",
        "any-support",
        "any-support/heuristic",
    }
    for r in out["rules"].values():
        assert set(r["f1"]) == {"True", "False", "Invalid"} and 0 <= r["macro_f1"] <= 1
        assert sum(sum(row.values()) for row in r["confusion"].values()) == 25
    assert out["rules"]["always-true"]["confusion"]["True"]["True"] == out["labels"]["True"]
    # every recorded passage is a hit, and every rule and baseline is scored on those hits
    assert out["hits"]["evidence"] == out["hits"]["recorded"] == out["stance"]["hits"] > 25
    st = out["stance"]
    assert 0 <= st["always_irrelevant_accuracy"] <= 1 and 0 <= st["accuracy"] <= 1
    assert sum(sum(row.values()) for row in st["confusion"].values()) == st["hits"]
    assert st["accuracy"] == round(sum(st["confusion"][s][s] for s in st["confusion"]) / st["hits"], 4)
    assert set(out["targets"]) == {
        "gold_beats_any_support_and_always_true",
        "heuristic_beats_any_hit",
        "stance_accuracy_at_least_always_irrelevant",
    }
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"claim": "x", "label": "Maybe", "hits": []}\n')
    assert main(["bench", "verify", "--claims", str(bad)]) == 2
    assert "line 1 has label 'Maybe'" in capsys.readouterr().err


def test_evidence_in_the_checkpoint_stays_small(home):
    long = [
        {
            "url": f"https://site{i}.gov/p",
            "passage": "The Sydney Harbour Bridge opened in 1932. " + "Filler words here. " * 400,
            "stance": "support",
        }
        for i in range(2)
    ]
    result = verify(CLAIM, thread_id="big", source=ReplaySource(long), seed=0, enrich_overlap_max=1.0)
    assert result.outcome == "True"
    state = session_state("big")
    assert any(p["status"] == "stored" and p["chars"] > 5000 for p in state["pages"])  # full pages were fetched ...
    assert all(len(h["text"]) <= 500 for h in state["evidence"])  # ... but only snippets went into the checkpoint
