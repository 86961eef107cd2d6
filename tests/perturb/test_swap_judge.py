"""The swap judge: a model of the models file judges each word swap in its text.

A fake OpenAI-compatible server plays the judge: it answers "no" for planted bad swaps,
and the attack must drop them and go on with the next candidate or word."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.dataset.records import Question
from evalcore.errors import EvalcoreError
from evalcore.perturb.attack import attack_questions, resolve_params
from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.params import check_swap_judge
from evalcore.perturb.swap_judge import parse_verdict
from evalcore.providers.base import ModelConfig
from evalcore.providers.client import run_closing_clients
from evalcore.providers.registry import add_model
from tests.fakes.fault_server import FaultConfig, FaultServer

EN = ["She decided to buy a large car because her family needed more room.",
      "The student finished the difficult homework before dinner and went to sleep."]
ZH_TABLE = "如果每个盒子装6个球，一共有多少个球？"  # 如果 and 一共: two reviewed swaps each
ZH_DICT = "哥哥每天骑自行车上学，路上要用20分钟。"  # 自行车: only the dictionary has a swap


class Judge:
    """A responder: "No." for the planted swaps, `answer` for the rest; records asks."""

    def __init__(self, bad: set[str] = frozenset(), answer: str = "Yes") -> None:
        self.bad, self.answer = set(bad), answer
        self.asked: list[tuple[str, str]] = []
        self.prompts: list[str] = []

    def __call__(self, prompt: str, schema: dict | None) -> str:
        found = re.search(r'Replaced: "(.*)" -> "(.*)"', prompt)
        assert found, prompt
        self.asked.append(found.groups())
        self.prompts.append(prompt)
        return "No." if found.group(2) in self.bad else self.answer


def _attack(judge: Judge, texts: list[str], tmp_path: Path, seed: int = 0,
            **params) -> list:
    models = tmp_path / "models.toml"
    with FaultServer(FaultConfig(responder=judge)) as server:
        if not models.exists():
            add_model(models, ModelConfig(name="fake-judge", kind="openai", model="fake",
                                          base_url=server.openai_url, timeout=5.0,
                                          max_retry_wait=1.0, max_attempts=1))
        else:  # the server's port changes: point the model at this one
            from evalcore.providers.registry import update_model

            update_model(models, "fake-judge", base_url=server.openai_url)
        questions = [Question(idx=i, question=t) for i, t in enumerate(texts)]
        return run_closing_clients(attack_questions(
            questions, "word", seed=seed, models_path=models,
            params={"swap_judge": "fake-judge", "similarity": False, "replacements": 5,
                    **params}))


@pytest.mark.usefixtures("wordnet_ready")
def test_a_swap_judged_no_is_dropped_and_the_attack_goes_on(tmp_path):
    everything = Judge()
    made = {p for r in _attack(everything, EN, tmp_path) for p in r.pairs}
    assert len(made) >= 3, made  # the sentences still exercise the attack
    planted = {new for _, new in sorted(made)[:2]}
    judge = Judge(bad=planted)
    results = _attack(judge, EN, tmp_path)
    kept = {p for r in results for p in r.pairs}
    assert not {new for _, new in kept} & planted  # dropped, not flagged after the fact
    assert {new for _, new in judge.asked} >= planted  # they were asked, then refused
    assert kept == made - {p for p in made if p[1] in planted}  # the other words still go
    assert all(r.details["judge"] == "fake-judge" for r in results)


@pytest.mark.usefixtures("zh_synonyms_ready")
def test_the_next_candidate_of_a_word_is_tried(tmp_path):
    """如果 has two reviewed swaps: the one drawn first is refused, the other is made."""
    table = load_lexicon().zh_paraphrases
    for seed in range(3):
        first = dict(_attack(Judge(), [ZH_TABLE], tmp_path, seed)[0].pairs)
        assert "如果" in first, first
        judge = Judge(bad={first["如果"]})
        second = dict(_attack(judge, [ZH_TABLE], tmp_path, seed)[0].pairs)
        assert ("如果", first["如果"]) in judge.asked
        assert second.get("如果") in set(table["如果"]) - {first["如果"]}, (seed, second)


@pytest.mark.usefixtures("wordnet_ready")
def test_an_unreadable_verdict_refuses_the_swap(tmp_path):
    judge = Judge(answer="Hard to say: it depends on what the writer meant.")
    results = _attack(judge, EN, tmp_path)
    assert judge.asked  # every swap was put to the judge
    assert all(r.pairs == [] and r.attacked == t for r, t in zip(results, EN))


@pytest.mark.usefixtures("zh_synonyms_ready")
def test_chinese_dictionary_swaps_come_back_only_with_a_judge(tmp_path):
    from evalcore.perturb.attack import attack_question

    without = attack_question(Question(idx=0, question=ZH_DICT), "word",
                              params={"similarity": False, "replacements": 5})
    judge = Judge()
    with_judge = _attack(judge, [ZH_DICT], tmp_path)[0]
    table = load_lexicon().zh_paraphrases
    unreviewed = [(old, new) for old, new in with_judge.pairs
                  if new not in table.get(old, ())]
    assert "自行车" not in dict(without.pairs)
    assert unreviewed and ("自行车", dict(with_judge.pairs)["自行车"]) in judge.asked
    assert "Chinese" in judge.prompts[0] and ZH_DICT in judge.prompts[0]
    refused = _attack(Judge(bad={new for _, new in unreviewed}), [ZH_DICT], tmp_path)[0]
    assert not set(refused.pairs) & set(unreviewed)


@pytest.mark.usefixtures("wordnet_ready")
def test_each_sentence_and_swap_is_asked_once(tmp_path):
    judge = Judge(bad={"big"})
    _attack(judge, [EN[0], EN[0], EN[0]], tmp_path)  # three items, same text and swaps
    assert judge.prompts and len(judge.prompts) == len(set(judge.prompts))


@pytest.mark.usefixtures("wordnet_ready")
def test_a_judge_that_fails_stops_the_attack_naming_it(tmp_path):
    models = tmp_path / "models.toml"
    with FaultServer(FaultConfig(mode="500")) as server:
        add_model(models, ModelConfig(name="down", kind="openai", model="x", max_attempts=1,
                                      base_url=server.openai_url, timeout=5.0))
        with pytest.raises(EvalcoreError, match="swap judge model 'down' failed"):
            run_closing_clients(attack_questions(
                [Question(idx=0, question=EN[0])], "word", models_path=models,
                params={"swap_judge": "down", "similarity": False}))


def test_swap_judge_param_errors_are_one_line_naming_the_model(tmp_path):
    with pytest.raises(EvalcoreError) as bad_type:
        resolve_params("word", {"swap_judge": 3})
    assert "swap_judge=3" in str(bad_type.value) and "\n" not in str(bad_type.value)
    with pytest.raises(EvalcoreError, match="unknown char attack param"):
        resolve_params("char", {"swap_judge": "x"})
    models = tmp_path / "models.toml"
    add_model(models, ModelConfig(name="present", kind="openai", model="x",
                                  base_url="http://127.0.0.1:9/v1"))
    check_swap_judge({"swap_judge": "present"}, models)
    with pytest.raises(EvalcoreError) as missing:
        check_swap_judge({"swap_judge": "nosuch"}, models)
    text = str(missing.value)
    assert "swap_judge" in text and "'nosuch'" in text and "present" in text
    assert "\n" not in text


@given(st.text(max_size=300))
def test_any_reply_gives_a_verdict(reply):
    assert parse_verdict(reply) in ("yes", "no", "unreadable")


@given(st.sampled_from(["yes", "no"]),
       st.sampled_from(["", "Answer: ", "**", "<think>yes or no? no</think>\n", " \"",
                        "Verdict - "]),
       st.sampled_from(["", ".", "!", ", the meaning is kept", "\n\nBecause ..."]))
def test_a_verdict_is_read_through_labels_and_markup(verdict, before, after):
    assert parse_verdict(before + verdict.capitalize() + after) == verdict


@pytest.mark.parametrize(("reply", "verdict"), [
    ("No, 'permit' is another document.", "no"),
    ("是", "yes"), ("不是。", "no"), ("否", "no"),
    ("The swap keeps the meaning: yes", "yes"),
    ("yes or no? I cannot tell", "unreadable"),
    ("It could be yes, or it could be no", "unreadable"),
    ("", "unreadable"), ("<think>no", "unreadable"), ("maybe", "unreadable"),
])
def test_verdicts_of_known_replies(reply, verdict):
    assert parse_verdict(reply) == verdict


@pytest.mark.integration
@pytest.mark.usefixtures("wordnet_ready")
def test_the_embedded_model_as_swap_judge(tmp_path, monkeypatch):
    """The wire end to end with provider "local": every swap made was put to the model
    and read as "yes". (SmolLM2-135M says "Yes." to nearly anything: it proves the path,
    not a judge; the strong model's audit is the measurement still to make.)"""
    from evalcore.perturb import swap_judge
    from evalcore.providers.local import stop_local

    read: list[str] = []
    parse = swap_judge.parse_verdict

    def recorded(reply):
        read.append(parse(reply))
        return read[-1]

    monkeypatch.setattr(swap_judge, "parse_verdict", recorded)
    models = tmp_path / "models.toml"
    add_model(models, ModelConfig(name="local-judge", kind="local", concurrency=2, threads=1,
                                  n_ctx=1024, timeout=120.0))
    try:
        results = run_closing_clients(attack_questions(
            [Question(idx=i, question=t) for i, t in enumerate(EN)], "word",
            models_path=models, params={"swap_judge": "local-judge", "similarity": False}))
    finally:
        stop_local()
    made = [p for r in results for p in r.pairs]
    assert read and set(read) <= {"yes", "no", "unreadable"}
    assert len(made) <= read.count("yes")
    assert all(r.details["judge"] == "local-judge" for r in results)
