"""``saturate bench reader``: its thresholds chosen on half A from what each question's session read, and a run on a
set of three questions (the embedded corpus)."""

from __future__ import annotations

import json

from saturate.bench.reader import GRID, WORDS_GRID, Reading, at, choose, choose_words
from saturate.cli import main
from saturate.state.settings import READER_RULES_WORDS


def reading(half: str, *, p: float, hit: bool, in_sources: bool, words: int, other_hit: bool, other_nf: bool = False):
    return Reading(
        task_id=f"{half}{p}{words}",
        half=half,
        by_reader=True,
        p=p,
        hit=hit,
        said_not_found=False,
        in_sources=in_sources,
        em=0.0,
        f1=0.0,
        seconds=0.1,
        other_hit=other_hit,
        other_not_found=other_nf,
        words=words,
    )


def test_below_the_threshold_a_long_question_takes_the_rules_answer_a_short_one_says_not_found():
    runs = [
        # long, read as not plausible, its sources hold the answer, the rules' answer holds it
        reading("A", p=0.01, hit=False, in_sources=True, words=9, other_hit=True),
        # short, nothing in the sources: "not found" is right
        reading("A", p=0.01, hit=False, in_sources=False, words=3, other_hit=False),
        # plausible and short: the reader's own answer stands
        reading("A", p=0.5, hit=True, in_sources=True, words=3, other_hit=False),
    ]
    off = at(runs, 0.06, 0.2, words=0)
    assert off["answer"] == round(1 / 3, 4) and off["right"] == round(2 / 3, 4) and off["not_found"] == round(2 / 3, 4)
    assert off["by_rules_likely"] == 0.0
    on = at(runs, 0.06, 0.2, words=6)
    assert on["answer"] == round(2 / 3, 4) and on["right"] == 1.0 and on["not_found"] == round(1 / 3, 4)
    assert on["by_rules_likely"] == round(1 / 3, 4) and on["likely"] == round(1 / 3, 4)
    assert on["not_found_honest"] == 1.0
    # plausible and long: the rules' sentences lead, and only what the rules' answer holds is counted
    led = [reading("A", p=0.5, hit=False, in_sources=True, words=9, other_hit=True)]
    assert at(led, 0.06, words=6)["answer"] == 1.0 and at(led, 0.06, words=0)["answer"] == 0.0
    assert at(led, 0.06, words=10)["answer"] == 0.0  # shorter than the setting: the reader's answer
    # the rules saying "not found" themselves: still "not found" (honest here: nothing in the sources)
    nothing = [reading("A", p=0.01, hit=False, in_sources=False, words=9, other_hit=False, other_nf=True)]
    assert at(nothing, 0.06, words=6)["not_found"] == 1.0 and at(nothing, 0.06, words=6)["right"] == 1.0


def test_the_words_threshold_is_chosen_on_half_a_and_never_when_it_does_not_help():
    helps = {
        "s": [
            reading("A", p=0.01, hit=False, in_sources=True, words=8, other_hit=True),
            reading("A", p=0.01, hit=False, in_sources=False, words=5, other_hit=False),
            # half B would choose otherwise: it is not looked at
            reading("B", p=0.01, hit=False, in_sources=False, words=8, other_hit=False),
        ]
    }
    # 6, 7 and 8 route the first question and not the second: the longest of the best is chosen
    assert choose_words(helps, 0.06) == 8 and choose_words(helps, 0.06, "B") == 0
    hurts = {"s": [reading("A", p=0.01, hit=False, in_sources=False, words=8, other_hit=False)]}
    assert choose_words(hurts, 0.06) == 0
    # min_p first, with no question routed: "not found" for both is right once (the second), so the lowest such
    assert choose(helps) == 0.02


def test_the_threshold_never_hides_more_right_answers_than_the_bound_however_many_not_found_it_makes_right():
    # ten questions no source answers and two right answers, all read at p 0.07: "not found" below 0.08 is right for
    # the ten and hides both right answers (100 % of them); below 0.06 it hides none
    runs = [reading("A", p=0.07, hit=False, in_sources=False, words=3, other_hit=False) for _ in range(10)]
    runs += [reading("A", p=0.07, hit=True, in_sources=True, words=3, other_hit=False) for _ in range(2)]
    per_set = {"s": runs}
    assert at(runs, 0.08)["right"] > at(runs, 0.06)["right"] and at(runs, 0.08)["not_found_answered"] == 1.0
    assert at(runs, 0.06)["not_found_answered"] == 0.0
    # the most right among the thresholds that hide at most HIDDEN_MAX of them: none from 0.08 on
    assert max(GRID, key=lambda t: (at(runs, t)["right"], -t)) >= 0.08 and choose(per_set) < 0.08
    # with ten right answers read at 0.07 and one at 0.05, hiding that one (1 of 11, 9 %) is within the bound
    few = [reading("A", p=0.05, hit=False, in_sources=False, words=3, other_hit=False) for _ in range(10)]
    few += [reading("A", p=0.07, hit=True, in_sources=True, words=3, other_hit=False) for _ in range(10)]
    few += [reading("A", p=0.05, hit=True, in_sources=True, words=3, other_hit=False)]
    assert at(few, 0.06)["not_found_answered"] == round(1 / 11, 4) and choose({"s": few}) == 0.06


def test_a_run_on_three_questions_prints_every_figure_and_the_choices(home, tmp_path, capsys):
    data = tmp_path / "data"
    (data / "webq").mkdir(parents=True)
    tasks = [
        {"id": "a", "question": "What is the capital of Canada?", "answers": ["Ottawa"]},
        {"id": "b", "question": "Who painted the Mona Lisa?", "answers": ["Leonardo da Vinci"]},
        {"id": "c", "question": "what is the password of my email account?", "answers": ["hunter2"]},
    ]
    (data / "webq" / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    assert main(["bench", "reader", "--data", str(data), "--set", "webq", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["chosen_rules_words"] in WORDS_GRID and out["default_rules_words"] == READER_RULES_WORDS
    webq = out["sets"]["webq"]
    assert webq["chosen"]["all"]["tasks"] == 3 and set(webq["words_grid"]) == {str(k) for k in WORDS_GRID}
    assert {"by_rules_likely", "answer", "right", "not_found_honest"} <= set(webq["chosen"]["all"])
    runs = out["runs"]["webq"]
    assert [r["words"] for r in runs] == [
        2,
        3,
        3,
    ]  # content words: capital canada / paint mona lisa / password email account
    assert all(r["other_not_found"] in (True, False) for r in runs)
