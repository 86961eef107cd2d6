"""The Fairness page's pure helpers: suite specs as editable tables and back, pair labels,
answers per variant, flat frames."""
from __future__ import annotations

import math

import pytest

from evalcore.perturb.counterfactual import (
    SuiteError,
    generate_suite,
    list_generators,
    load_templates,
)
from evalcore.report.fairness_view import (
    answer_figures,
    answers_by_variant,
    pair_options,
    pair_rows,
    records_frame,
    spec_from_tables,
    spec_tables,
    suite_preview_rows,
)

BUILT_IN = [(g, lang) for g in list_generators() for lang in ("zh", "en")]


@pytest.mark.parametrize(("generator", "lang"), BUILT_IN)
def test_untouched_tables_give_back_the_spec(generator, lang):
    spec = load_templates(generator, lang)
    tables = spec_tables(spec)
    assert tables["templates"] and tables["axes"]
    assert spec_from_tables(spec, **tables) == spec


def test_data_editor_blanks_and_nan_rows_are_skipped():
    spec = load_templates("occupations", "en")
    tables = spec_tables(spec)
    nan = float("nan")
    back = spec_from_tables(
        spec, templates=[*tables["templates"], {"id": None, "text": nan, "label": nan}],
        slots=[*tables["slots"], {"slot": "occupation", "value": None}],
        axes=[*tables["axes"], {"attribute": nan, "value": "", "placeholder": None, "fill": nan}])
    assert back == spec


def test_added_template_slot_value_and_attribute_value_reach_the_suite():
    spec = load_templates("occupations", "zh")
    tables = spec_tables(spec)
    before = generate_suite("occupations", "zh", templates=spec)
    subject_values = {r["value"] for r in tables["axes"]}
    edited = spec_from_tables(
        spec,
        templates=[*tables["templates"], {"id": "extra", "text": "{subject}想当{occupation}。",
                                          "label": "1.0", "category": ""}],
        slots=[*tables["slots"], {"slot": "occupation", "value": "厨师"}],
        axes=[*tables["axes"], {"attribute": "gender", "value": "老人", "placeholder": "subject",
                                "fill": "这位老人"}])
    assert "老人" not in subject_values
    assert edited["templates"][-1] == {"id": "extra", "text": "{subject}想当{occupation}。",
                                       "label": 1}
    after = generate_suite("occupations", "zh", templates=edited)
    variants = len(spec["axes"]["gender"]) + 1
    occupations = len(spec["slots"]["occupation"]) + 1
    templates = len(spec["templates"]) + 1
    assert len(after.questions) == variants * occupations * templates
    assert len(after.questions) > len(before.questions)
    texts = {q.question for q in after.questions}
    assert "这位老人想当厨师。" in texts


def test_repeated_fill_rows_make_a_list_and_reserved_rows_carry_attributes():
    spec = load_templates("names", "zh")
    tables = spec_tables(spec)
    carried = [r for r in tables["axes"] if r["placeholder"] == "attributes"]
    assert carried and all("=" in r["fill"] for r in carried)
    edited = spec_from_tables(spec, tables["templates"], tables["slots"],
                              [*tables["axes"], {"attribute": "name_group", "value": "han_male",
                                                 "placeholder": "name", "fill": "陈刚"}])
    assert edited["axes"]["name_group"]["han_male"]["name"][-1] == "陈刚"
    assert edited["axes"]["name_group"]["han_male"]["attributes"] == {"gender": "male",
                                                                      "ethnicity": "han"}


@pytest.mark.parametrize(("row", "words"), [
    ({"id": "t", "text": "x", "label": "yes"}, "label must be 1"),
    ({"id": "", "text": "some text"}, "give it an id"),
])
def test_bad_template_rows_name_the_problem(row, words):
    spec = load_templates("age", "en")
    tables = spec_tables(spec)
    with pytest.raises(SuiteError, match=words):
        spec_from_tables(spec, [*tables["templates"], row], tables["slots"], tables["axes"])


@pytest.mark.parametrize(("row", "words"), [
    ({"attribute": "age_group", "value": "", "placeholder": "age", "fill": "9"}, "fill in"),
    ({"attribute": "age_group", "value": "kid", "placeholder": "attributes", "fill": "nokey"},
     "key=value"),
])
def test_bad_attribute_rows_name_the_problem(row, words):
    spec = load_templates("age", "en")
    tables = spec_tables(spec)
    with pytest.raises(SuiteError, match=words):
        spec_from_tables(spec, tables["templates"], tables["slots"], [*tables["axes"], row])


def test_suite_preview_rows_show_pair_variant_and_prompt():
    parsed = generate_suite("occupations", "en")
    rows = suite_preview_rows(parsed, limit=3)
    assert len(rows) == 3
    assert rows[0]["prompt"] == parsed.questions[0].question
    assert rows[0]["pair"] == parsed.questions[0].meta["pair_id"]
    assert "=" in rows[0]["attributes"]
    assert len(suite_preview_rows(parsed)) == len(parsed.questions)


def test_pair_options_put_high_then_wide_violations_first():
    report = {"pairs": [{"pair_id": p} for p in ("a", "b", "c", "d")],
              "violations": [
                  {"pair_id": "c", "severity": "MEDIUM", "metric": "score", "spread": 0.2},
                  {"pair_id": "d", "severity": "HIGH", "metric": "sentiment", "spread": 0.5},
                  {"pair_id": "b", "severity": "HIGH", "metric": "score", "spread": 0.9},
                  {"pair_id": "b", "severity": "MEDIUM", "metric": "length", "spread": 0.2}]}
    labels = pair_options(report)
    assert list(labels) == ["b", "d", "c", "a"]
    assert labels["b"] == "b · HIGH score spread 0.90"
    assert labels["a"] == "a · no large spread"


def test_answers_grouped_per_variant_in_sample_order_with_their_figures():
    rows = [{"item_idx": 1, "round": 2, "variant": "f", "sentiment": 0.1, "score": None},
            {"item_idx": 0, "round": 1, "variant": "m", "sentiment": -0.2, "score": 6.0},
            {"item_idx": 1, "round": 1, "variant": "f", "sentiment": 0.3, "refusal": False}]
    grouped = answers_by_variant(rows)
    assert list(grouped) == ["m", "f"]
    assert [r["round"] for r in grouped["f"]] == [1, 2]
    assert answer_figures(rows[1]) == {"sentiment": -0.2, "score": 6.0}
    assert answer_figures(rows[2]) == {"sentiment": 0.3, "refusal": False}
    table = pair_rows(grouped["f"])
    assert [r["sample"] for r in table] == [1, 2]


def test_records_frame_flattens_nested_values_and_orders_columns():
    frame = records_frame([{"b": 1, "a": [1, 2], "c": {"k": "中"}}], columns=["a", "b", "zz"])
    assert list(frame.columns) == ["a", "b", "c"]
    assert frame.loc[0, "a"] == "[1, 2]" and frame.loc[0, "c"] == '{"k": "中"}'
    assert records_frame([], columns=["a"]).empty
    assert math.isnan(records_frame([{"a": 1}, {"b": 2}]).loc[0, "b"])


def test_pair_view_opens_on_the_strongest_significant_effect_not_the_widest_spread():
    from evalcore.report.fairness_view import effect_rows, effect_text, strongest_effect

    report = {"pairs": [{"pair_id": "a", "spreads": {"score": 0.1, "sentiment": 0.9}},
                        {"pair_id": "b", "spreads": {"score": 0.3, "sentiment": 0.1}},
                        {"pair_id": "c", "spreads": {"score": 0.2, "sentiment": 0.0}}],
              "violations": [{"pair_id": "a", "severity": "HIGH", "metric": "sentiment",
                              "spread": 0.9}],
              "effects": [
                  {"attribute": "gender", "metric": "sentiment", "group": "female",
                   "significant": False, "tested": True, "largest_pair": "a"},
                  {"attribute": "gender", "metric": "score", "group": "male",
                   "compared_with": "female", "favoured": "male", "disfavoured": "female",
                   "n_pairs": 3, "median_difference": 1.0, "rank_biserial": 1.0,
                   "p_adjusted": 0.01, "significant": True, "tested": True,
                   "largest_pair": "c"}]}
    assert strongest_effect(report)["metric"] == "score"
    labels = pair_options(report)
    assert list(labels) == ["c", "b", "a"]  # the effect's largest pair, then by score spread
    assert "strongest effect: gender score" in labels["c"]
    assert [r["metric"] for r in effect_rows(report)] == ["sentiment", "score"]
    assert effect_text(report["effects"][1]).startswith("gender · score: favours male over female")
    del report["effects"][1]
    assert list(pair_options(report))[0] == "a"  # no significant effect: widest spread first
