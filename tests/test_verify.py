"""Claim verification: the verify graph, its model calls, its CLI and its benchmark (evidence weights, the decision
rule, stance and proofs on their own: tests/reading/test_verdict.py, test_stance.py and test_tiers.py)."""

from __future__ import annotations

import json

from saturate.bench.ollama_script import OllamaScript, OllamaServer
from saturate.cli import main
from saturate.graph import session_state, verify
from saturate.nodes.reading.verdict import check_proof
from saturate.sources.replay import ReplaySource
from saturate.state.records import EvidenceHit

from conftest import eval_file

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


def verify_judged_by(script: OllamaScript, claim: str, thread: str, hits: list[dict]):
    """``claim`` verified on the recorded ``hits`` with the scripted model judging the stances (off by default)."""
    with OllamaServer(script) as server:
        return verify(
            claim,
            thread_id=thread,
            source=ReplaySource(hits),
            seed=0,
            model="ollama:qwen-test",
            ollama_host=server.url,
            model_stances=True,
        )


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
    result = verify_judged_by(script, CLAIM, "m", GOOD)
    ev = {h["url"]: h for h in session_state("m")["evidence"]}
    assert ev[GOOD[0]["url"]]["stance_by"] == "model"
    # an invented quote: the hit counts as irrelevant, shown with a verbatim sentence, and the session notes it
    assert ev[GOOD[1]["url"]]["stance"] == "irrelevant" and ev[GOOD[1]["url"]]["excerpt"] in GOOD[1]["passage"]
    assert ev[GOOD[1]["url"]]["stance_reason"].startswith("model: no verbatim quote")
    assert any("1 model stance(s) quoted nothing" in n for n in result.debug["notes"])
    assert ev[GOOD[2]["url"]]["stance_by"] == "heuristic"  # unusable reply → heuristic, recorded
    assert result.outcome == "True" and result.debug["proof"] == "extractive"
    assert any("model proof rejected" in n and "invented.example" in n for n in result.debug["notes"])


EIFFEL = "The Eiffel Tower is located in Berlin."
EIFFEL_HITS = [
    {
        "url": "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "passage": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.",
        "stance": "refute",
    },
    {
        "url": "https://en.wikipedia.org/wiki/Berlin",
        "passage": "Berlin is the capital of Germany.",
        "stance": "irrelevant",
    },
    {"url": "https://example.org/1", "passage": "1", "stance": "irrelevant"},
]


def test_a_model_that_supports_everything_with_empty_quotes_never_makes_a_claim_true(home):
    """What SmolLM2 did on a real server (issue 34): every hit "support", with an empty or one-word quote. Such
    stances count as irrelevant, so the false claim is not True."""
    script = OllamaScript(
        plan=['{"queries": ["Eiffel Tower location", "Eiffel Tower Berlin"]}'],
        stance=['{"stance": "support", "quote": ""}', '{"stance": "support", "quote": "1"}'],
        compress=["- fact"],
    )
    result = verify_judged_by(script, EIFFEL, "e", EIFFEL_HITS)
    evidence = session_state("e")["evidence"]
    assert evidence and all(h["stance"] == "irrelevant" for h in evidence if h["stance_by"] == "model")
    assert result.outcome != "True", result.proof
    assert any("quoted nothing from their passage" in n for n in result.debug["notes"])


ARTS = "Dr. Marloes Arts has published several papers on social and environmental sustainability."
OTHERS = [  # passages about other people of that first name (the public factcheck claim fcb-0192's kind of hits)
    {
        "url": "https://example.org/hemmer",
        "passage": "Dr. Marloes Hemmer has published several papers on the history of Dutch painting.",
        "stance": "irrelevant",
    },
    {
        "url": "https://example.org/peeters",
        "passage": "Dr. Marloes Peeters published articles on sustainability and bio-sensing platforms.",
        "stance": "irrelevant",
    },
]


def test_a_models_partial_for_a_passage_about_someone_else_never_makes_a_claim_true(home):
    """Qwen2.5-Coder-0.5B called 9 of the first 10 false public claims True, each on a "partial" with a verbatim
    quote from a passage about another person: a model stance needs the claim's subject (and, to support, every name
    and number) in its passage, else it counts as irrelevant. The stances of both decide passes count in
    model_calls."""
    script = OllamaScript(
        plan=['{"queries": ["Marloes Arts papers", "Marloes Arts sustainability"]}'],
        stance=[
            '{"stance": "partial", "quote": "' + OTHERS[0]["passage"] + '"}',
            '{"stance": "partial", "quote": "' + OTHERS[1]["passage"] + '"}',
        ],
        compress=["- fact"],
    )
    result = verify_judged_by(script, ARTS, "arts", OTHERS)
    asked = len(script.by_role("stance"))
    evidence = session_state("arts")["evidence"]
    assert evidence and all(h["stance_by"] == "model" for h in evidence)
    assert all(h["stance"] == "irrelevant" for h in evidence), [h["stance_reason"] for h in evidence]
    assert all(h["stance_reason"].startswith("model: the passage lacks what the claim names") for h in evidence)
    assert result.outcome != "True", result.proof
    assert asked >= len(evidence) and result.debug["model_calls"] >= asked  # every decide pass's stances counted


def test_bench_verify_json(home, capsys, tmp_path):
    eval_file("factcheck", "claims.jsonl")
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
