"""The estimate a start form and the CLI show before a run: calls and time on a model."""
from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from evalcore.providers.base import ModelConfig
from evalcore.providers.registry import default_local_config
from evalcore.providers.catalog import get_provider
from evalcore.report.estimate import default_limit, estimate_calls, estimate_run, model_speed
from evalcore.runner.plan import RunSpec
from evalcore.runner.start import store_run, run_in_foreground
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import add_model, dataset, right_for_odd  # noqa: F401  (fixture)

DEFAULT_LATENCY_S = {name: get_provider(name).latency_s for name in ("local", "openai")}
LOCAL_DEFAULT_LIMIT = get_provider("local").first_items


def test_a_model_never_run_gets_its_kinds_default(engine):
    """No stored call: the local model's default speed, said as such."""
    local = default_local_config()  # concurrency 2
    est = estimate_calls(engine, local, 60)
    assert est.seconds == pytest.approx(60 * DEFAULT_LATENCY_S["local"] / 2)
    assert not est.measured
    assert est.line().startswith("60 calls, about 30 s on local")


def test_speed_is_measured_from_the_models_stored_calls(engine, settings, dataset):
    """After a run at ~0.3 s a call with 2 in flight, the estimate uses ~6.7 calls/s, not
    the default; another model's calls do not count."""
    with FaultServer(FaultConfig(responder=right_for_odd, latency=0.3)) as server:
        add_model(settings, server, concurrency=2)
        run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                           settings.models_path)
        assert run_in_foreground(engine, run_id) == "done"
    from evalcore.providers.registry import get_model

    fake = get_model(settings.models_path, "fake")
    speed = model_speed(engine, fake)
    assert speed.measured_calls == 12
    assert 2 / 0.6 < speed.calls_per_second < 2 / 0.29
    est = estimate_calls(engine, fake, 100)
    assert est.measured and 100 / speed.calls_per_second == pytest.approx(est.seconds)
    other = ModelConfig(name="other", kind="openai", base_url="http://127.0.0.1:9", model="o")
    assert model_speed(engine, other).measured_calls == 0


def test_rpm_limit_bounds_the_speed_and_a_judge_adds_its_calls(engine):
    capped = ModelConfig(name="m", kind="openai", base_url="http://127.0.0.1:9", model="m",
                         concurrency=50, rpm=60)
    assert model_speed(engine, capped).calls_per_second == pytest.approx(1.0)
    judge = ModelConfig(name="j", kind="openai", base_url="http://127.0.0.1:9", model="j",
                        concurrency=1)
    est = estimate_calls(engine, capped, 10, judge=judge)
    assert (est.calls, est.judge_calls) == (20, 10)
    assert est.seconds == pytest.approx(10 + 10 * DEFAULT_LATENCY_S["openai"])
    assert "10 calls + 10 judge calls" in est.line()


def test_the_cli_estimate_of_a_stored_run(engine, settings, dataset):
    """estimate_run reads the run's calls and the model snapshot it keeps."""
    run_id = store_run(engine, RunSpec(dataset=dataset, model="local", rounds=5),
                       settings.models_path)
    est = estimate_run(engine, run_id)
    assert (est.calls, est.model) == (30, "local")
    assert est.seconds == pytest.approx(30 * DEFAULT_LATENCY_S["local"] / 2)


def test_default_limit_is_small_on_the_local_model_only():
    local = default_local_config()
    remote = ModelConfig(name="m", kind="openai", base_url="http://127.0.0.1:9", model="m")
    assert default_limit(local, 7540) == LOCAL_DEFAULT_LIMIT == 20
    assert default_limit(local, 12) == 0 and default_limit(remote, 7540) == 0


@hsettings(max_examples=60, deadline=None)
@given(calls=st.integers(0, 10**6), concurrency=st.integers(1, 64), rpm=st.integers(0, 10**4))
def test_more_calls_never_take_less_time(calls, concurrency, rpm):
    """Monotone and finite for any calls, slots and rpm (no stored calls)."""
    eng = _memory_engine()
    model = ModelConfig(name="m", kind="openai", base_url="http://127.0.0.1:9", model="m",
                        concurrency=concurrency, rpm=rpm)
    a = estimate_calls(eng, model, calls)
    b = estimate_calls(eng, model, calls + 1)
    assert 0 <= a.seconds <= b.seconds < float("inf")


_ENGINE: list = []


def _memory_engine():
    """One in-memory database for all hypothesis examples (a fixture is not re-made)."""
    from evalcore.store.db import make_engine

    if not _ENGINE:
        _ENGINE.append(make_engine("sqlite://"))
    return _ENGINE[0]


def test_a_stored_snapshot_is_checked_not_trusted(engine, settings, dataset):
    """A run's model snapshot is a JSON column: read leniently ("3" is 3) and checked (a
    negative concurrency is an error naming the field, not a negative estimate)."""
    from evalcore.store import queries
    from evalcore.values import ValidationError

    run_id = store_run(engine, RunSpec(dataset=dataset, model="local", rounds=5),
                       settings.models_path)
    config = queries.get_run(engine, run_id).config
    snapshot = config["models"]["local"]
    queries.update_run(engine, run_id, config={
        **config, "models": {"local": {**snapshot, "concurrency": "3"}}})
    assert estimate_run(engine, run_id).seconds == pytest.approx(
        30 * DEFAULT_LATENCY_S["local"] / 3)
    queries.update_run(engine, run_id, config={
        **config, "models": {"local": {**snapshot, "concurrency": -3}}})
    with pytest.raises(ValidationError, match="concurrency"):
        estimate_run(engine, run_id)


def test_a_measured_estimate_says_how_long_the_calls_it_learnt_from_were(engine, settings,
                                                                         dataset):
    """Short calls (a demo's one-word replies) say little about long ones: the line names
    the mean prompt and reply lengths of the stored calls it used."""
    from sqlalchemy import text

    with FaultServer(FaultConfig(responder=right_for_odd)) as server:
        add_model(settings, server)
        run_id = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=1),
                           settings.models_path)
        assert run_in_foreground(engine, run_id) == "done"
    with engine.connect() as conn:  # a call's prompt is its run item's
        rows = conn.execute(text(
            "SELECT r.prompt, c.answer FROM call c JOIN run_item r ON r.run_id = c.run_id "
            "AND r.item_id = c.item_id WHERE c.model = 'fake'")).all()
    assert len(rows) == 6 and all(len(p) > 50 for p, _ in rows)
    prompt = round(sum(len(p) for p, _ in rows) / len(rows))
    reply = round(sum(len(a) for _, a in rows) / len(rows))
    from evalcore.providers.registry import get_model

    line = estimate_calls(engine, get_model(settings.models_path, "fake"), 60).line()
    assert line.endswith(f"(from its earlier runs: 6 calls with ~{prompt}-character prompts "
                         f"and ~{reply}-character replies; longer ones take longer)"), line


def test_a_stored_run_is_estimated_from_calls_of_a_similar_length(engine, settings, dataset,
                                                                  tmp_path):
    """Fast short calls (the demo's) and slow long ones are stored for one model: a run of
    long prompts is estimated from the long calls, a run of short ones from the short."""
    from tests.runner.conftest import QUESTIONS, import_qa

    padding = " Consider every detail of the story carefully before you answer." * 12
    long_name = import_qa(engine, tmp_path, [(q + padding, a) for q, a in QUESTIONS], "long")
    with FaultServer(FaultConfig(responder=right_for_odd, latency=0.05)) as server:
        add_model(settings, server, concurrency=1)
        short_run = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=1),
                              settings.models_path)
        assert run_in_foreground(engine, short_run) == "done"
        server.reconfigure(latency=0.4)
        long_run = store_run(engine, RunSpec(dataset=long_name, model="fake", rounds=1),
                             settings.models_path)
        assert run_in_foreground(engine, long_run) == "done"
    late_long = store_run(engine, RunSpec(dataset=long_name, model="fake", rounds=2),
                          settings.models_path)
    late_short = store_run(engine, RunSpec(dataset=dataset, model="fake", rounds=2),
                           settings.models_path)
    long_est, short_est = estimate_run(engine, late_long), estimate_run(engine, late_short)
    assert "6 calls of a similar length" in long_est.line()
    assert "6 calls of a similar length" in short_est.line()
    assert 12 * 0.4 <= long_est.seconds < 12 * 0.8  # not the 12 x ~0.2 s of all calls mixed
    assert 12 * 0.05 <= short_est.seconds < 12 * 0.3
