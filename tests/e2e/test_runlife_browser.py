"""A run's life in Debian's chromium, where only a browser shows it (issue 21):

- a double click on "Start run" creates one run, not two, however slow (the button is
  swapped for a disabled one while submitting, and the second click carries the same
  idempotency key or hits a replaced button); a click seconds later starts another;
- "Delete run" asks first, then the page lists the runs without it: no
  "RunError: run N not found" from the status fragment that reran with the deleted id.

No worker runs (EVALCORE_EMBEDDED_WORKER=0): started runs stay queued, no model is called.
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from pages._submit import DOUBLE_CLICK_S
from tests.e2e.nav import UI_TIMEOUT_MS, idle, open_app
from tests.e2e.test_browser import NO_WARM_UP, streamlit_server
from tests.waiting import still, wait_for

pytestmark = pytest.mark.browser
RUN_STORED_S = 60  # from a click to the run's row, on two cores under the whole suite


@pytest.fixture(scope="module")
def runlife_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The app over a home with one dataset and no run yet; (url, database URL)."""
    from evalcore.config import settings_from_env
    from evalcore.store.db import make_engine
    from tests.fakes.stored_runs import seed_dataset

    tmp = tmp_path_factory.mktemp("runlife-app")
    settings = settings_from_env({"EVALCORE_HOME": str(tmp / "home")})
    settings.home.mkdir(parents=True)
    engine = make_engine(settings.db_url)
    seed_dataset(engine, "sums", [f"What is {i} + 1?" for i in range(4)])
    engine.dispose()
    with streamlit_server(tmp, {"EVALCORE_EMBEDDED_WORKER": "0", **NO_WARM_UP}) as url:
        yield url, settings.db_url



def _runs(db_url: str) -> list:
    from evalcore.store import queries
    from evalcore.store.db import make_engine

    engine = make_engine(db_url)
    try:
        return queries.list_runs(engine)
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def context(chromium):  # type: ignore[no-untyped-def]
    """One browser context for the module, a tab per test (a tab in a fresh context cost
    ~1.5 s more of chromium's CPU: the app's scripts fetched and compiled again)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 1400})
    try:
        yield context
    finally:
        context.close()


def _page(context):  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)  # a cold app on 2 busy cores is slow
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    return page


def test_a_double_click_on_start_run_creates_one_run(context, runlife_app) -> None:
    from playwright.sync_api import expect

    url, db_url = runlife_app
    before = {r.id for r in _runs(db_url)}

    def new_runs() -> int:
        return len([r for r in _runs(db_url) if r.id not in before])

    page = _page(context)
    try:
        open_app(page, f"{url}/stability")  # no run yet: the start form is open
        start = page.get_by_role("button", name="Start run", exact=True)
        expect(start).to_be_enabled()
        start.click()  # a slow double click: 600 ms between the clicks (the stimulus)
        page.wait_for_timeout(600)
        page.get_by_role("button", name="Start run", exact=True).click()
        wait_for(lambda: new_runs() >= 1, RUN_STORED_S, "the first click's run")
        idle(page)  # both clicks' script runs have ended: the second stored a run or none
        still(lambda: new_runs() == 1, 1.0, "one run for a slow double click")
        again = page.get_by_role("button", name="Start run", exact=True)
        if not again.is_visible():  # with a run stored, the form's expander starts closed
            page.locator("summary", has_text="Start a new run").click()
        expect(again).to_be_enabled()
        # "long after": more than DOUBLE_CLICK_S after the last submission finished on the
        # server (before its script run ended, which `idle` saw), else the page rightly
        # takes the click for the second half of the double click before
        page.wait_for_timeout((DOUBLE_CLICK_S + 0.5) * 1000)
        again.dblclick()  # a quick one, long after: one more run
        wait_for(lambda: new_runs() >= 2, RUN_STORED_S, "the run of the click seconds later")
        idle(page)
        still(lambda: new_runs() == 2, 1.0, "one run for a quick double click")
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    finally:
        page.close()


def test_delete_run_asks_then_lists_the_runs_without_it(context, runlife_app) -> None:
    from playwright.sync_api import expect

    from evalcore.store.db import make_engine
    from tests.fakes.stored_runs import seed_run

    url, db_url = runlife_app
    engine = make_engine(db_url)
    newest = seed_run(engine, 1, {i: [1, 0] for i in range(4)}, 2, model="m")
    engine.dispose()
    page = _page(context)
    try:
        open_app(page, f"{url}/results")
        page.get_by_role("button", name="Delete run", exact=True).click()
        expect(page.get_by_text(f"Delete run #{newest}", exact=False)).to_be_visible()
        assert newest in {r.id for r in _runs(db_url)}  # nothing deleted before the answer
        page.get_by_role("button", name="Yes, delete", exact=True).click()
        expect(page.get_by_text(f"Run #{newest} deleted with its calls.")).to_be_visible()
        assert newest not in {r.id for r in _runs(db_url)}
        idle(page)  # the status fragment's rerun with the deleted id has run
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        expect(page.get_by_text("not found", exact=False)).to_have_count(0)
    finally:
        page.close()
