"""The Fairness page on bias benchmark runs (issue 21): a CBBQ run shows the CBBQ authors'
figures beside evalcore's; a CrowS-Pairs run's headline and gate block agree, and its
answers can be read one by one."""
from __future__ import annotations

from pathlib import Path

from tests.pages.helpers import run_page, values

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "fairness.py")


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_a_cbbq_run_shows_the_authors_convention_beside_evalcore(page_env, engine,
                                                                 shared_datasets) -> None:
    from tests.report.test_cbbq_authors import seed_cbbq_run

    seed_cbbq_run(engine, shared_datasets)
    at = run_page(PAGE)
    metrics = _metrics(at)
    assert metrics["Bias, ambiguous"] == "0.500"
    assert metrics["Bias, ambiguous (authors)"] == "1.000"
    assert metrics["CBBQ total (authors)"] == "1.000"
    assert metrics["Items read differently"] == "20 of 40"
    captions = " ".join(values(at, "caption"))
    assert "count option A as the biased answer to every negative question" in captions
    assert "they differ on 20 of 40 items (10 ambiguous, 10 disambiguated)" in captions
    per_category = next(d.value for d in at.dataframe if "s_amb (authors)" in d.value.columns)
    by_name = per_category.set_index("category")
    assert by_name.loc["gender", "read differently"] == 20
    assert by_name.loc["SES", "read differently"] == 0
    warnings = " ".join(values(at, "warning"))
    assert "GROUP_TERMS" not in warnings


def test_a_crows_run_gives_one_verdict_in_the_headline_and_the_gate(page_env, engine) -> None:
    from tests.report.test_crows_verdict import four_of_ten_unreadable

    four_of_ten_unreadable(engine)
    at = run_page(PAGE)
    card = " ".join(el.proto.body for el in at.get("html"))
    assert ">FAIL</div>" in card and "parse_rate_min 0.600" in card
    assert "NOT MEASURED" not in card
    errors = values(at, "error")
    assert any(e.startswith("Gate FAILED (1 of ") for e in errors), errors


def _cards(at) -> list[str]:
    return [m for m in values(at, "markdown") if m.startswith("**Pair ")]


def test_a_crows_run_browses_its_answers_one_by_one(page_env, engine) -> None:
    from tests.report.test_crows_verdict import UNREADABLE, four_of_ten_unreadable

    four_of_ten_unreadable(engine)
    at = run_page(PAGE)
    assert any(e.label == "Answers one by one (10)" for e in at.expander)
    assert len(_cards(at)) == 10
    warnings = " ".join(values(at, "warning"))
    assert "4 of 10 replies named neither sentence" in warnings
    assert "under 'Answers one by one' (Counts as: unreadable)" in warnings
    at.selectbox(key="fairness.crows.reading").select("unreadable").run()
    assert len(_cards(at)) == 4
    bodies = " ".join(el.proto.body for el in at.get("html"))
    assert UNREADABLE in bodies and "stereotyped sentence" in bodies
    assert "4 of 10 answers match; page 1 of 1" in " ".join(values(at, "caption"))
    at.selectbox(key="fairness.crows.reading").select("stereotyped").run()
    cards = _cards(at)
    assert cards and len(cards) + 4 <= 10
    assert "picked" in " ".join(el.proto.body for el in at.get("html"))
