"""saturate research --sources / --multi, show, resume, runs and bench multi."""

from __future__ import annotations

import json
import re

import pytest

from saturate.cli import main

from conftest import eval_file

BUBYE = "What is the name of the waterfall in the country where the Bubye River is found?"


def test_research_sources_json_show_resume_runs(home, musique_corpus, capsys):
    c = str(musique_corpus)
    assert main(["research", BUBYE, "--sources", f"local:{c},titles:{c}", "--thread", "cli", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["thread"] == "cli" and out["outcome"] == "answer"
    assert {lp["source"] for lp in out["loops"]} == {"local:musique", "titles:musique"}
    assert all(
        s["tag"] in ("verified_multi", "unverified_single", "contradicted") and s["found_by"] for s in out["sources"]
    )  # a local corpus is never an official source
    assert set(out["tags"]) == {"verified_official", "verified_multi", "unverified_single", "contradicted"}
    assert out["tags"]["verified_official"] == 0 and "key_actors" in out
    assert out["debug"]["total_queries"] == out["rounds"] == sum(out["debug"]["queries_by_source"].values())

    assert main(["show", "cli"]) == 0
    shown = capsys.readouterr().out
    assert "audit cli · [local:musique] q1:" in shown and "audit cli · [titles:musique] q1:" in shown
    assert "loop local:musique:" in shown and "(breadcrumbs)" in shown and "leads followed:" in shown
    followed = next(line for line in shown.splitlines() if line.startswith("leads followed: "))
    names = re.findall(r"(?:^leads followed: |\), )([^(]+?) \(", followed)
    assert names and len(names) == len({n.lower() for n in names}), followed  # each name once, with its ways
    assert re.search(r"\((?:other|person|organisation|identifier): (?:with the task|its own page) in ", followed)
    assert "found by local:musique, titles:musique" in shown

    assert main(["resume", "cli", "--quiet"]) == 0
    quiet = capsys.readouterr().out.strip().splitlines()
    # --quiet: the answer, then exactly the sources it cites (so no [n] points at nothing)
    by_n = {s["n"]: s for s in out["sources"]}
    order = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", out["answer"])))
    assert order and {n for n in order} == {s["n"] for s in out["sources"] if s["cited"]}
    assert quiet == [out["answer"]] + [f"[{n}] {by_n[n]['title']} — {by_n[n]['url']}" for n in order]
    assert main(["runs", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert runs[0]["thread"] == "cli" and runs[0]["status"] == "done" and runs[0]["rounds"] == out["rounds"]

    # a multi-source session has its own HTML report (tests/test_report.py); fork covers single-loop sessions
    assert main(["show", "cli", "--html", str(home / "r.html")]) == 0
    assert "queries over 2 sources" in capsys.readouterr().out and (home / "r.html").exists()
    assert main(["fork", "cli", "--round", "1"]) == 2
    assert "multi-source session" in capsys.readouterr().err


def test_research_multi_flag_with_live_progress(home, musique_corpus, capsys):
    assert (
        main(
            [
                "research",
                BUBYE,
                "--multi",
                "--corpus",
                str(musique_corpus),
                "--thread",
                "one",
                "--breadcrumb-limit",
                "1",
            ]
        )
        == 0
    )
    cap = capsys.readouterr()
    assert "multi-source: local (alone)" in cap.err and "[local:musique] q1:" in cap.err
    assert "breadcrumbs: following" in cap.err and "merged:" in cap.err
    assert "sources searched:" in cap.out and "local:musique: " in cap.out and "thread: one" in cap.out
    # the cited sources first (with tag and who found them), then the on-topic ones, then a count of the rest
    answer, rest = cap.out.split("\n\n", 1)
    order = list(dict.fromkeys(int(n) for n in re.findall(r"\[(\d+)\]", answer)))
    listed = [int(n) for n in re.findall(r"^\[(\d+)\] .*  \[\w+\]$", rest, re.M)]
    assert rest.startswith("Cited:\n") and order and listed[: len(order)] == order
    assert "     found by: local:musique " in rest and "saturate show one, or --json)" in rest


def test_events_are_json_lines(home, musique_corpus, capsys):
    c = str(musique_corpus)
    assert main(["research", BUBYE, "--sources", f"local:{c}", "--events", "--quiet", "--breadcrumb-limit", "0"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    assert events and all(ev["event"] == "source_query" and ev["source"] == "local:musique" for ev in events)
    assert events[-1]["action"] == "stop"


def test_bad_sources_exit_2(home, tmp_path, capsys):
    assert main(["research", BUBYE, "--sources", "gopher:x"]) == 2
    assert "sources" in capsys.readouterr().err
    assert main(["research", BUBYE, "--sources", f"local:{tmp_path / 'missing.jsonl'}"]) == 2
    err = capsys.readouterr().err
    assert "corpus not found" in err and "source 'local:missing'" in err


def test_bench_multi_json(home, capsys):
    eval_file("musique", "tasks.jsonl")  # skipped without the evaluation data
    argv = ["bench", "multi", "--set", "musique", "--limit", "3", "--latency-ms", "0", "--jobs", "1", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["set"] == "musique" and out["single"]["tasks"] == 3 and out["latency_ms"] == 0
    assert set(out["scenarios"]) == {"document", "one_corpus"}
    doc, one = out["scenarios"]["document"], out["scenarios"]["one_corpus"]
    assert [(s["name"], s["depth"]) for s in doc["sources"]] == [
        ("local:musique", "rich"),
        ("titles:musique", "shallow"),
        ("wiki", "shallow"),
    ]
    assert [s["name"] for s in one["sources"]] == ["local:musique", "titles:musique"]
    for sc in (doc, one):
        assert sc["multi"]["tasks"] == 3 and sc["multi"]["ceiling_violations"] == 0 and sc["bar"]["ceilings_met"]
        assert {"gold_recall", "relevant", "results", "searches", "seconds"} <= sc["multi"].keys()
        assert sc["multi"]["searches"] > out["single"]["searches"] / 2
        assert sc["bar"]["relevant_ratio"] == round(sc["multi"]["relevant"] / out["single"]["relevant"], 3)
    kinds = doc["multi"]["by_kind"]
    assert set(kinds) == {"local", "titles", "wiki"} and all(k["loops"] == 3 for k in kinds.values())
    assert kinds["titles"]["queries"] <= 2 and kinds["wiki"]["queries"] <= 2  # shallow: 1-2 queries
    assert sum(kinds["titles"]["distribution"].values()) == 3


@pytest.mark.slow
def test_bench_multi_text_in_worker_processes(home, capsys):
    """The default output: both configurations beside the single loop, the audit per kind, the bar; tasks run
    in worker processes."""
    eval_file("hotpotqa", "tasks.jsonl")  # skipped without the evaluation data
    argv = ["bench", "multi", "--set", "hotpotqa", "--limit", "2", "--latency-ms", "5", "--jobs", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "== hotpotqa (2 tasks, every search waits 5 ms)" in out
    assert "multi (document)" in out and "multi (one corpus)" in out
    assert "  audit titles (shallow, ceiling 3):" in out and "  audit local (rich, ceiling 6):" in out
    assert out.count("seed's bar: relevant x") == 2 and "2 worker processes" in out
    with pytest.raises(SystemExit) as exited:  # a usage error, as the flag is parsed
        main(["bench", "multi", "--jobs", "0"])
    assert exited.value.code == 2
