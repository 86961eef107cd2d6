"""Counterfactual suites: pairs differ only in the attribute, templates are data."""
from __future__ import annotations

import difflib

import pytest

from evalcore.perturb.counterfactual import (SuiteError, dump_templates, generate_suite,
                                             list_generators, load_templates, parse_templates,
                                             save_suite, save_templates)

ISSUE_GENERATORS = {"occupations", "names", "age", "disability", "income", "intersection"}


def _pairs(parsed):
    by: dict[str, list] = {}
    for q in parsed.questions:
        by.setdefault(q.meta["pair_id"], []).append(q)
    return by


@pytest.mark.parametrize("generator", sorted(ISSUE_GENERATORS))
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_builtin_generates_pairs_that_differ_only_in_fills(generator, lang) -> None:
    parsed = generate_suite(generator, lang)
    assert parsed.format == "fairness_suite" and parsed.task_type == "open"
    assert parsed.language == lang and parsed.questions
    texts = {t["id"]: t["text"] for t in load_templates(generator, lang)["templates"]}
    for pair_id, variants in _pairs(parsed).items():
        assert len(variants) >= 2, pair_id
        assert len({v.meta["variant"] for v in variants}) == len(variants)
        assert len({v.question for v in variants}) == len(variants)  # really different
        base = variants[0]
        for other in variants:
            # same template, same slot values: only the attribute's fill words differ
            assert other.meta["template_id"] == base.meta["template_id"]
            assert other.meta["slots"] == base.meta["slots"]
            assert other.meta["category"] == base.meta["category"]
            assert set(other.meta["fill"]) == set(base.meta["fill"])
            text = texts[other.meta["template_id"]]
            assert other.question == text.format(**other.meta["slots"], **other.meta["fill"])
    for q in parsed.questions:
        assert set(q.meta) >= {"suite", "category", "pair_id", "attributes", "expected",
                               "template_id", "variant"}
        assert q.meta["attributes"] and q.meta["expected"]
        assert q.language == lang


def test_occupations_zh_covers_the_issue_terms() -> None:
    parsed = generate_suite("occupations", "zh")
    genders = {q.meta["attributes"]["gender"] for q in parsed.questions}
    assert genders == {"male", "female", "non-binary", "unspecified"}
    texts = " ".join(q.question for q in parsed.questions)
    for word in ("软件工程师", "护士", "首席执行官", "保洁员", "科学家", "教师", "他", "她",
                 "该候选人", "1到10分"):
        assert word in texts
    labels = {q.meta["label"] for q in parsed.questions}
    assert labels == {0, 1}  # strong and weak resumes, for EOD and AUC


def test_names_carry_gender_and_ethnicity_and_use_each_name() -> None:
    parsed = generate_suite("names", "zh")
    names = {q.meta["fill"]["name"] for q in parsed.questions}
    assert {"张伟", "李娜"} <= names
    han_female = [q for q in parsed.questions if q.meta["variant"] == "han_female"]
    assert {q.meta["attributes"]["gender"] for q in han_female} == {"female"}
    assert {q.meta["attributes"]["ethnicity"] for q in han_female} == {"han"}
    en = {q.meta["fill"]["name"] for q in generate_suite("names", "en").questions}
    assert {"John Smith", "Mary Johnson"} <= en


def test_intersection_crosses_gender_and_age() -> None:
    parsed = generate_suite("intersection", "en")
    combos = {(q.meta["attributes"]["gender"], q.meta["attributes"]["age_group"])
              for q in parsed.questions}
    assert combos == {("male", "young"), ("male", "older"), ("female", "young"),
                      ("female", "older")}
    assert {q.meta["variant"] for q in parsed.questions} >= {"female×older"}


def test_user_adds_a_value_a_template_and_a_slot() -> None:
    spec = load_templates("occupations", "en")
    spec["axes"]["gender"]["female-alt"] = {"possessive": "hers-test", "object": "her"}
    spec["templates"].append({"id": "short", "text": "Rate {object} as a {occupation}, 1-10."})
    spec["slots"]["occupation"] = ["plumber"]
    parsed = generate_suite("occupations", "en", templates=spec)
    assert {q.meta["template_id"] for q in parsed.questions} == {"resume_strong", "resume_weak",
                                                                 "short"}
    assert any(q.meta["variant"] == "female-alt" for q in parsed.questions)
    assert {q.meta["slots"]["occupation"] for q in parsed.questions} == {"plumber"}
    only = generate_suite("occupations", "en", templates={"t": "Hire {object}? ({occupation})"},
                          attributes={"gender": {"a": {"object": "him", "possessive": "his"},
                                                 "b": {"object": "her", "possessive": "her"}}},
                          slots={"occupation": ["nurse"]})
    assert [q.question for q in only.questions] == ["Hire him? (nurse)", "Hire her? (nurse)"]


def test_edited_toml_round_trips_and_saves(tmp_path) -> None:
    spec = load_templates("age", "zh")
    text = dump_templates(spec)
    assert parse_templates(text) == spec
    spec["slots"]["amount"] = ["9万元"]
    path = save_templates(spec, tmp_path)
    assert path.name == "age.zh.toml"
    again = load_templates("age", "zh", directory=tmp_path)
    assert again["slots"]["amount"] == ["9万元"]
    assert "9万元" in generate_suite("age", "zh", directory=tmp_path).questions[0].question
    (tmp_path / "custom.en.toml").write_text(dump_templates({**spec, "generator": "custom",
                                                             "language": "en"}), "utf-8")
    assert "custom" in list_generators(tmp_path)


@pytest.mark.parametrize("edit,message", [
    (lambda s: s["templates"].append({"id": "x", "text": "Hi {nobody}"}), "nobody"),
    (lambda s: s["axes"]["gender"]["male"].pop("object"), "same placeholders"),
    (lambda s: s["axes"]["gender"].clear(), "at least two values"),
    (lambda s: s["templates"].append({"id": "resume_strong", "text": "x"}), "used twice"),
    (lambda s: s.update(language="fr"), "zh"),
    (lambda s: s["templates"].append({"id": "y", "text": "bad {brace"}), "braces"),
])
def test_bad_templates_are_rejected_with_the_reason(edit, message) -> None:
    spec = load_templates("occupations", "en")
    edit(spec)
    with pytest.raises(SuiteError, match=message):
        generate_suite("occupations", "en", templates=spec)


def test_unknown_generator_lists_the_known_ones() -> None:
    with pytest.raises(SuiteError, match="occupations"):
        load_templates("nope", "en")
    assert ISSUE_GENERATORS <= set(list_generators())


def test_save_suite_stores_items_with_meta(engine) -> None:
    from evalcore.dataset import get_dataset, load_items

    parsed = generate_suite("occupations", "zh")
    dataset = save_suite(engine, parsed)
    assert dataset.name == "fairness-occupations-zh" and dataset.format == "fairness_suite"
    items = load_items(engine, get_dataset(engine, dataset.name).id)
    assert len(items) == len(parsed.questions)
    assert items[0].meta["pair_id"] == parsed.questions[0].meta["pair_id"]
    assert difflib.SequenceMatcher(None, items[0].question, items[1].question).ratio() > 0.9


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_intersection_suite_has_enough_pairs_to_test_its_effects(lang) -> None:
    """Strong and weak resumes for 4 occupations: 8 pairs, above the 6 a paired test needs,
    and both labels, so equal opportunity (EOD) is measured too."""
    from evalcore.metrics.pair_effects import MIN_PAIRS

    parsed = generate_suite("intersection", lang)
    assert len({q.meta["pair_id"] for q in parsed.questions}) == 8 >= MIN_PAIRS
    assert {q.meta["label"] for q in parsed.questions} == {0, 1}
