"""Robustness runs end to end: fault server (known answers) and the real local model."""
from __future__ import annotations

import math

import pytest

from evalcore.errors import RunError
from evalcore.perturb.review import approve, approve_unflagged, list_attack_items, reject
from evalcore.perturb.generate import make_attack_set
from evalcore.report.robustness import robustness_report
from tests.fakes.starters import start
from evalcore.runner.start import run_in_foreground
from evalcore.store import queries, run_items
from tests.conftest import require
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.perturb.attack_set_helpers import QUESTIONS, fake_engine, math_dataset  # noqa: F401
from tests.runner.conftest import add_model

pytestmark = pytest.mark.integration

CLEAN_WRONG = {3}
ATTACKED_WRONG = {0, 1}


def responder(prompt: str, schema: dict | None) -> str:
    """Clean questions right except item 3; attacked ones wrong for items 0 and 1."""
    attacked = "What number of" in prompt
    for idx, (question, answer) in enumerate(QUESTIONS):
        if question.split(" and ")[0].split(" reads ")[0] in prompt:
            wrong = idx in (ATTACKED_WRONG if attacked else CLEAN_WRONG)
            return f"The answer is {answer + 1 if wrong else answer}."
    return "I do not know."


@pytest.fixture()
def server():
    with FaultServer(FaultConfig(responder=responder)) as srv:
        yield srv


def by_hand_mcnemar(b: int, c: int) -> float:
    n = b + c
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2 ** n)


def test_robustness_run_reports_drop_flips_and_mcnemar(engine, settings, math_dataset,
                                                       fake_engine, server):
    add_model(settings, server)
    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    items = list_attack_items(engine, attack_set.id)
    assert approve_unflagged(engine, attack_set.id, reviewer="ann") == 3  # item 2 is flagged
    run_id = start("robustness", engine, attack_set_ids=[attack_set.id], model="fake",
                                   rounds=2, models_path=settings.models_path,
                                   dataset=math_dataset)
    run = queries.get_run(engine, run_id)
    assert run.kind == "robustness" and run.total == 6 * 2
    assert run_items.run_item_ids(engine, run.id) == ([items[i].source_item_id for i in (0, 1, 3)]
                                      + [items[i].attacked_item_id for i in (0, 1, 3)])
    assert run_in_foreground(engine, run_id) == "done"

    # the item-2 pair was not approved; a review after the run does not change the run
    approve(engine, items[2].id, reviewer="ann")
    report = robustness_report(engine, run_id)
    word = report["levels"]["word"]
    assert (word["questions"], word["rounds"], report["pairs"]) == (3, 2, 3)
    assert word["accuracy_clean"] == pytest.approx(4 / 6)
    assert word["accuracy_attacked"] == pytest.approx(2 / 6)
    assert word["pdr"] == pytest.approx(1 - (2 / 6) / (4 / 6))
    assert word["flips"]["right_to_wrong"] == [items[0].id, items[1].id]
    assert word["flips"]["wrong_to_right"] == [items[3].id]
    assert word["mcnemar"]["p_value"] == pytest.approx(by_hand_mcnemar(2, 1))
    assert word["paired_test"]["changed"] == 3
    assert word["consistency"]["same_answer"] == pytest.approx(0.0)  # every pair changed answer
    assert report["sets"][str(attack_set.id)]["pdr"] == word["pdr"]

    flipped = report["flips"]["right_to_wrong"]
    assert [f["item_idx"] for f in flipped] == [0, 1]
    assert flipped[0]["clean_answers"] == ["The answer is 7.", "The answer is 7."]
    assert flipped[0]["attacked_answers"] == ["The answer is 8.", "The answer is 8."]
    fragile = report["fragile"]
    assert [f["item_idx"] for f in fragile] == [0, 1]
    assert ["insert", "What number of"] in fragile[0]["diff"]
    assert fragile[0]["original"] == QUESTIONS[0][0]


def test_robustness_run_needs_approved_items_from_one_dataset(engine, settings, math_dataset,
                                                              fake_engine, server, tmp_path):
    from evalcore.dataset import import_dataset
    from tests.perturb.attack_set_helpers import write_math_csv

    add_model(settings, server)
    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    with pytest.raises(RunError, match="has no approved items; review it first"):
        start("robustness", engine, attack_set_ids=[attack_set.id], model="fake", rounds=1,
                              models_path=settings.models_path)
    for item in list_attack_items(engine, attack_set.id):
        reject(engine, item.id, reviewer="ann")
    with pytest.raises(RunError, match="no approved items"):
        start("robustness", engine, attack_set_ids=[attack_set.id], model="fake", rounds=1,
                              models_path=settings.models_path)
    import_dataset(engine, write_math_csv(tmp_path / "other.csv", QUESTIONS[:2]), name="other",
                   allow_duplicate=True)
    other = make_attack_set(engine, dataset="other", level="char")
    approve_unflagged(engine, other.id, reviewer="ann")
    with pytest.raises(RunError, match="different datasets"):
        start("robustness", engine, attack_set_ids=[attack_set.id, other.id], model="fake",
                              rounds=1, models_path=settings.models_path)
    with pytest.raises(RunError, match="were made from dataset 'other'"):
        start("robustness", engine, attack_set_ids=[other.id], model="fake", rounds=1,
                              models_path=settings.models_path, dataset=math_dataset)


def test_local_model_math23k_word_level(engine, settings, shared_datasets):
    """3 real Math23K questions, real word attack, the embedded model, one round."""
    import evalcore.perturb as perturb
    from evalcore.dataset import import_dataset
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.local import stop_local
    from evalcore.providers.registry import add_model as add

    require(hasattr(perturb, "attack_questions"), "the perturbation engine is not ready")
    import_dataset(engine, shared_datasets / "trusted-evaluation" / "Math23Ktest.csv",
                   name="math23k")
    add(settings.models_path, ModelConfig(name="local-small", kind="local", concurrency=2,
                                          threads=1, n_ctx=1024, max_tokens=24, timeout=120.0))
    attack_set = make_attack_set(engine, dataset="math23k", level="word", seed=0, limit=3)
    for item in list_attack_items(engine, attack_set.id):
        approve(engine, item.id, reviewer="ann")  # explicit: flagged ones too
    try:
        run_id = start("robustness", engine, attack_set_ids=[attack_set.id],
                                       model="local-small", rounds=1,
                                       models_path=settings.models_path)
        assert run_in_foreground(engine, run_id) == "done"
    finally:
        stop_local()
    report = robustness_report(engine, run_id)
    word = report["levels"]["word"]
    assert word["questions"] == 3 and report["timing"]["calls"] == 6
    assert report["timing"]["errors"] == 0
    assert 0.0 <= word["accuracy_clean"] <= 1.0 and word["paired_test"] is None
    assert word["mcnemar"]["discordant"] == len(report["flips"]["right_to_wrong"]) + len(
        report["flips"]["wrong_to_right"])
