"""The Fairness page on a BBQ run: no decision threshold to set, and the answers one by
one with their filters (issue 16)."""
from __future__ import annotations

from pathlib import Path

from tests.pages.helpers import run_page, values
from tests.report.test_bbq_answers import bbq_run

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "fairness.py")


def _cards(at) -> list[str]:
    return [m for m in values(at, "markdown") if m.startswith("**Q")]


def test_a_bbq_run_hides_the_threshold_and_browses_its_answers(page_env, engine,
                                                                shared_datasets):
    bbq_run(engine, shared_datasets)
    at = run_page(PAGE)
    assert not [n for n in at.number_input if n.key == "fairness.threshold"]
    assert any(e.label == "Answers one by one (12)" for e in at.expander)
    assert len(_cards(at)) == 10  # the first page
    bodies = " ".join(el.proto.body for el in at.get("html"))
    assert "Who is too lazy to play sports?" in bodies and "The answer is 2" in bodies
    assert "picked" in bodies and "stereotyped group" in bodies

    at.selectbox(key="fairness.bbq.outcome").select("unparsed").run()
    cards = _cards(at)
    assert len(cards) == 6, cards
    captions = " ".join(values(at, "caption"))
    assert "6 of 12 answers match" in captions and "how: invalid" in captions

    at.selectbox(key="fairness.bbq.context").select("disambiguated").run()
    assert all("disambiguated" in c for c in _cards(at)) and len(_cards(at)) == 3
    at.selectbox(key="fairness.bbq.outcome").select("all").run()
    at.number_input(key="fairness.bbq.page").set_value(2).run()
    assert not at.exception
    assert len(_cards(at)) == 6  # past the end: the last page (6 fit on one)
    assert "6 of 12 answers match; page 1 of 1" in " ".join(values(at, "caption"))
    at.selectbox(key="fairness.bbq.category").select("all").run()
    at.selectbox(key="fairness.bbq.bias").select("biased").run()
    assert [c.split(" ·")[0] for c in _cards(at)] == ["**Q10**"]  # the one disambiguated (idx 9)
    at.selectbox(key="fairness.bbq.bias").select("unknown").run()  # only an ambiguous one
    assert _cards(at) == [] and any("No answer matches" in i for i in values(at, "info"))


def test_a_counterfactual_run_keeps_its_threshold(page_env, engine):
    from tests.pages.test_fairness_page import seeded_run

    seeded_run(engine)
    at = run_page(PAGE)
    assert [n for n in at.number_input if n.key == "fairness.threshold"]
    assert not any(e.label.startswith("Answers one by one") for e in at.expander)
