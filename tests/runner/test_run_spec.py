"""A run spec from a form, CLI flags or a stored run config is checked (`runner.plan.run_spec`):
`RunSpec`'s constructor checks no ranges, so a builder that used it would let `rounds=0`,
a temperature of 5 or a schedule "daily" into the database."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from evalcore.errors import RunError
from evalcore.kinds import get_kind
from evalcore.runner.plan import RunSpec, run_spec

BASE = {"dataset": "d", "model": "m"}
SECRET = "sk-secret-schedule-value"

BAD = {
    # field: (value, a piece of the message)
    "rounds-0": ({"rounds": 0}, "rounds: Expected `int` >= 1"),
    "rounds-101": ({"rounds": 101}, "rounds: Expected `int` <= 100"),
    "rounds-text": ({"rounds": "many"}, "rounds: Expected `int`"),
    "concurrency-0": ({"concurrency": 0}, "concurrency: Expected `int` >= 1"),
    "concurrency-1001": ({"concurrency": 1001}, "concurrency: Expected `int` <= 1000"),
    "temperature-minus": ({"temperature": -0.1}, "temperature: Expected `float` >= 0"),
    "temperature-3": ({"temperature": 3}, "temperature: Expected `float` <= 2"),
    "budget-0": ({"budget": 0}, "budget: Expected `float` > 0"),
    "budget-minus": ({"budget": -1.5}, "budget: Expected `float` > 0"),
    "limit-0": ({"limit": 0}, "limit: Expected `int` >= 1"),
    "schedule": ({"schedule": SECRET},
                 "schedule: must be one of 'sequential', 'question', 'round'"),
    "prompt-style": ({"prompt_style": "many"}, "prompt_style: must be one of 'zero', 'few'"),
    "no-dataset": ({"dataset": None}, "dataset"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_run_spec_refuses_a_bad_setting_naming_the_field(case: str) -> None:
    change, message = BAD[case]
    with pytest.raises(RunError) as caught:
        run_spec({**BASE, **change})
    assert message in str(caught.value), str(caught.value)
    assert str(caught.value).startswith("invalid run setting: ")
    assert SECRET not in str(caught.value)


def test_run_spec_reads_a_form_leniently_like_before() -> None:
    """Text from a form or a query string becomes numbers; unknown keys are ignored (as
    pydantic did), so a stored config written by an older version still loads."""
    spec = run_spec({**BASE, "rounds": "5", "concurrency": "8", "temperature": "0.5",
                     "budget": 2, "an_old_key": 1})
    assert (spec.rounds, spec.concurrency, spec.temperature, spec.budget) == (5, 8, 0.5, 2.0)
    assert isinstance(spec.rounds, int) and isinstance(spec.temperature, float)


def test_a_stored_spec_comes_back_equal() -> None:
    spec = RunSpec(dataset="d", model="m", rounds=3, schedule="round", budget=1.5,
                   extra={"pairs": [[1, 2, 3, 4, "char", "x"]]})
    assert run_spec(msgspec.structs.asdict(spec)) == spec
    assert run_spec(msgspec.json.decode(msgspec.json.encode(spec))) == spec


@pytest.mark.parametrize("case", ["rounds-0", "temperature-3", "schedule", "budget-0"])
def test_the_stability_builder_refuses_what_the_form_or_flags_got_wrong(case: str) -> None:
    """The one builder of the page form, the CLI flags, the demo and schedules."""
    change, message = BAD[case]
    with pytest.raises(RunError, match=message.split(":")[0]):
        get_kind("stability").build(None, {**BASE, **change})  # type: ignore[arg-type]


def test_the_stability_builder_makes_numbers_of_form_text() -> None:
    spec, items = get_kind("stability").build(None, {**BASE, "rounds": "4"})  # type: ignore[arg-type]
    assert (spec.kind, spec.rounds, items) == ("stability", 4, None)


def test_the_fairness_builder_refuses_bad_samples_and_temperature(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcore.fairness as fairness

    monkeypatch.setattr(fairness, "get_dataset",
                        lambda engine, name: SimpleNamespace(task_type="open",
                                                             format="fairness_suite"))
    monkeypatch.setattr(fairness, "require_fairness_dataset", lambda engine, dataset: None)
    with pytest.raises(RunError, match="rounds: Expected `int` <= 100"):
        fairness.fairness_spec(None, suite="s", model="m", samples=500)  # type: ignore[arg-type]
    with pytest.raises(RunError, match="temperature"):
        fairness.fairness_spec(None, suite="s", model="m", temperature=9)  # type: ignore[arg-type]
    with pytest.raises(RunError, match="concurrency"):
        fairness.fairness_spec(None, suite="s", model="m", concurrency=0)  # type: ignore[arg-type]
    spec = fairness.fairness_spec(None, suite="s", model="m", samples=3)  # type: ignore[arg-type]
    assert (spec.rounds, spec.temperature, spec.kind) == (3, 0.7, "fairness")


def test_the_robustness_builder_refuses_bad_rounds_and_schedule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcore.runner.robustness as robustness

    pairs = [[1, 10, 20, 7, "char", "attacked"]]
    monkeypatch.setattr(robustness, "robustness_pairs",
                        lambda engine, ids: (SimpleNamespace(name="d", id=1), pairs))
    with pytest.raises(RunError, match="rounds"):
        robustness.robustness_spec(None, attack_set_ids=[7], model="m", rounds=0)  # type: ignore[arg-type]
    with pytest.raises(RunError, match="schedule: must be one of"):
        robustness.robustness_spec(None, attack_set_ids=[7], model="m", rounds=1,  # type: ignore[arg-type]
                                   schedule="daily")
    spec, items = robustness.robustness_spec(None, attack_set_ids=[7], model="m",  # type: ignore[arg-type]
                                             rounds=2)
    assert (spec.rounds, spec.extra["pairs"], items) == (2, pairs, [10, 20])


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
                   st.lists(st.integers(), max_size=3),
                   st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))
FIELDS = ["kind", "dataset", "model", "rounds", "judge", "schedule", "prompt_style",
          "template", "limit", "item_ids", "concurrency", "temperature", "budget", "name",
          "created_by", "extra"]


@hsettings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=8))
def test_run_spec_of_any_input_is_in_range_or_a_run_error(data: dict[str, Any]) -> None:
    """Whatever a form, flags or an edited config hold: a spec within every range, or one
    RunError line; never another exception."""
    try:
        spec = run_spec({**BASE, **data})
    except RunError as exc:
        assert str(exc).startswith("invalid run setting: ") and "\n" not in str(exc)
        return
    assert 1 <= spec.rounds <= 100
    assert spec.schedule in ("sequential", "question", "round")
    assert spec.prompt_style in ("zero", "few")
    assert spec.limit is None or spec.limit >= 1
    assert spec.concurrency is None or 1 <= spec.concurrency <= 1000
    assert spec.temperature is None or 0 <= spec.temperature <= 2
    assert spec.budget is None or spec.budget > 0
    assert isinstance(spec.extra, dict) and isinstance(spec.dataset, str)


@pytest.mark.integration
def test_create_run_refuses_a_spec_built_in_code_out_of_range(engine, settings,  # noqa: ANN001
                                                              dataset) -> None:
    """The constructor checks no ranges; `create_run`, the one door to the database, does."""
    from evalcore.runner.start import store_run
    from evalcore.store import queries

    for bad in (RunSpec(dataset=dataset, model="local", rounds=0),
                RunSpec(dataset=dataset, model="local", temperature=7.0),
                RunSpec(dataset=dataset, model="local", schedule="daily")):  # type: ignore[arg-type]
        with pytest.raises(RunError, match="invalid run setting"):
            store_run(engine, bad, settings.models_path)
    assert queries.list_runs(engine) == []


@pytest.mark.integration
def test_a_budget_change_is_checked_and_a_bad_one_keeps_the_stored_spec(  # noqa: ANN201
        engine, settings, dataset):  # noqa: ANN001
    from evalcore.runner.start import store_run, set_budget
    from evalcore.store import queries

    run_id = store_run(engine, RunSpec(dataset=dataset, model="local", rounds=2, budget=1.0),
                       settings.models_path)
    for bad in (0, -3.0, "lots"):
        with pytest.raises(RunError, match="budget"):
            set_budget(engine, run_id, bad)  # type: ignore[arg-type]
    assert queries.get_run(engine, run_id).config["spec"]["budget"] == 1.0
    set_budget(engine, run_id, "2.5")  # type: ignore[arg-type]
    stored = queries.get_run(engine, run_id).config["spec"]
    assert stored["budget"] == 2.5 and stored["rounds"] == 2 and stored["kind"] == "stability"


@pytest.mark.integration
def test_a_stored_config_edited_out_of_range_is_refused_naming_the_field(  # noqa: ANN201
        engine, settings, dataset):  # noqa: ANN001
    """The job reads the spec back from the run's JSON column: outside data again."""
    from evalcore.runner.run import _prepare
    from evalcore.runner.start import store_run
    from evalcore.store import queries

    run_id = store_run(engine, RunSpec(dataset=dataset, model="local", rounds=2),
                       settings.models_path)
    config = queries.get_run(engine, run_id).config
    queries.update_run(engine, run_id, config={**config, "spec": {**config["spec"],
                                                                  "schedule": "daily"}})
    with pytest.raises(RunError, match="schedule: must be one of 'sequential', 'question'"):
        _prepare(engine, queries.get_run(engine, run_id), None)
