"""The proof that a provider is one module: `tests/providers/plain_provider.py` (a format
only the tests speak) is registered here, with no other file touched, and is found by
`models add`, the Models page, the estimates and a run, which is stored and scored."""
from __future__ import annotations

import json

import pytest

from evalcore.providers.catalog import register_provider, unregister_provider
from tests.conftest import cli_here
from tests.providers.plain_provider import PROVIDER, PlainServer
from tests.runner.conftest import dataset, right_for_odd  # noqa: F401  (fixture)

pytestmark = pytest.mark.integration


@pytest.fixture()
def plain():
    register_provider(PROVIDER)
    with PlainServer(right_for_odd) as server:
        yield server
    unregister_provider(PROVIDER.name)


def test_a_test_only_provider_is_found_everywhere(plain, app, settings, engine, dataset,
                                                  tmp_path):
    from evalcore.providers.registry import get_model
    from evalcore.report.estimate import estimate_calls
    from evalcore.store import queries

    # models add (CLI) accepts the kind and checks what the provider needs
    missing = cli_here(settings, "models", "add", "plug", "--kind", "plainjson", "--model", "p")
    assert missing.returncode == 2 and "needs base_url (e.g. http://127.0.0.1:8999)" in (
        missing.stderr)
    added = cli_here(settings, "models", "add", "plug", "--kind", "plainjson",
                     "--base-url", plain.url, "--model", "plain-1", "--concurrency", "2",
                     "--n-ctx", "2048")  # the provider's own setting is a flag
    assert added.returncode == 0, added.stderr
    assert "plainjson" in cli_here(settings, "models", "add", "--help").stdout

    # the estimate uses the provider's default speed before any call
    plug = get_model(settings.models_path, "plug")
    assert (plug.kind, plug.n_ctx) == ("plainjson", 2048)
    assert estimate_calls(engine, plug, 12).seconds == pytest.approx(12 * 0.25 / 2)

    # a run on it is stored and scored (items 1, 3, 5 right in both rounds)
    out = tmp_path / "run.json"
    ran = cli_here(settings, "stability", "--dataset", dataset, "--model", "plug",
                   "--rounds", "2", "--json", str(out))
    assert ran.returncode == 0, ran.stderr
    run, = queries.list_runs(engine)
    assert (run.model, run.status, run.done) == ("plug", "done", 12)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["distribution"]["distribution_counts"] == {"0": 3, "1": 0, "2": 3}
    assert len(plain.asked) == 12
    assert estimate_calls(engine, plug, 12).measured  # now from its own stored calls

    # the Models page lists it, offers its kind and draws its own setting (opened last:
    # the app's embedded worker would take the CLI's queued run)
    app.run()
    app.switch_page("pages/models.py").run()
    assert not app.exception, [e.value for e in app.exception]
    table = app.dataframe[0].value
    assert table.set_index("name").loc["plug", "kind"] == "plainjson"
    assert "plainjson" in app.selectbox(key="models.form.kind").options
    assert app.get_by_key("models.form.n_ctx").label == "Context size (plainjson only)"
