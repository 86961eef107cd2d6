"""The Results page and every page's network traffic in Debian's chromium.

- Downloads never hang: every export of a stored run is clicked three times in quick
  succession; each of the downloads completes, is non-empty and reads as what it claims
  (a CSV header, JSON that parses), and the app log has no MediaFileStorageError (a
  deferred download whose file a rerun had dropped, issue 16).
- Offline: loading every page sends requests to the app's own loopback address only
  (no fonts.gstatic.com favicon, no CDN).

Never runs `playwright install`: the browser is Debian's /usr/bin/chromium.
"""
from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.e2e.nav import UI_TIMEOUT_MS, open_app
from tests.e2e.test_browser import NO_WARM_UP, streamlit_server

pytestmark = pytest.mark.browser
DOWNLOAD_TIMEOUT_S = 20.0
"""Bound on the whole burst of downloads: a hung one fails the test instead of waiting."""
DOWNLOADS = {  # page: (heading above the buttons, {button label: file name})
    "results": ("Export", {"Raw calls CSV": "run{run}_calls.csv",
                           "Stability CSV (English headers)": "stability_run{run}_en.csv",
                           "Stability JSON": "stability_run{run}.json"}),
    "stability": ("Downloads", {"CSV (中文表头)": "stability_run{run}_zh.csv",
                                "CSV (English headers)": "stability_run{run}_en.csv",
                                "JSON": "stability_run{run}.json"}),
}
"""The issue's three downloads (two CSVs, then the JSON) on each page that offers them."""
PAGES = ("", "datasets", "models", "stability", "attacks", "robustness", "fairness",
         "results", "monitoring")


@pytest.fixture(scope="module")
def results_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, int]]:
    """The app over a home holding a finished stability run of 1,509 calls and, newest, a
    small one; (url, app log, the small run's id)."""
    from evalcore.config import settings_from_env
    from evalcore.store.db import make_engine
    from tests.fakes.stored_runs import seed_dataset, seed_run

    tmp = tmp_path_factory.mktemp("results-app")
    settings = settings_from_env({"EVALCORE_HOME": str(tmp / "home")})
    settings.home.mkdir(parents=True)
    engine = make_engine(settings.db_url)
    dataset = seed_dataset(engine, "downloads", [f"What is {i} + 1?" for i in range(6)])
    big = seed_dataset(engine, "big", [f"What is {i} + 2?" for i in range(503)])
    seed_run(engine, big, {i: [1, 0, 1] for i in range(503)}, 3, model="m")  # 1,509 calls
    run_id = seed_run(engine, dataset, {i: [1, i % 2, 1] for i in range(6)}, 3, model="m")
    engine.dispose()
    with streamlit_server(tmp, {"EVALCORE_EMBEDDED_WORKER": "0", **NO_WARM_UP}) as url:
        yield url, tmp / "streamlit.log", run_id



@pytest.fixture(scope="module")
def context(chromium):  # type: ignore[no-untyped-def]
    """One browser context for the download and Monitoring tests, a tab per test (a tab in
    a fresh context cost ~1.5 s more of chromium's CPU: the app's scripts fetched and
    compiled again); the every-page test keeps a fresh one, it records every request."""
    context = chromium.new_context(accept_downloads=True, viewport={"width": 1280,
                                                                    "height": 1000})
    try:
        yield context
    finally:
        context.close()


def _check_content(name: str, body: bytes) -> None:
    """A download reads as what its name says: a CSV with a header row, JSON that parses."""
    assert body, f"{name} is empty"
    text = body.decode("utf-8-sig")
    if name.endswith(".json"):
        assert isinstance(json.loads(text), dict), name
    else:
        assert name.endswith(".csv"), name
        header, *rows = text.splitlines()
        assert header.count(",") >= 2 and rows, f"{name}: {text[:200]!r}"


@pytest.mark.parametrize("path", list(DOWNLOADS))
def test_every_download_completes_when_clicked_three_times_quickly(context, results_app,
                                                                   path: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)  # a cold app on 2 busy cores is slow
    url, log, run_id = results_app
    heading, clicked = DOWNLOADS[path]
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    downloads = []
    try:
        open_app(page, f"{url}/{path}")
        expect(page.get_by_role("heading", name=heading)).to_be_visible()
        buttons = page.locator('[data-testid="stDownloadButton"] button')
        expect(buttons.first).to_be_enabled()
        for label in clicked:  # every button drawn (a large run's page draws them late)
            expect(buttons.filter(has_text=label).first).to_be_visible()
        labels = buttons.all_inner_texts()
        # headless Chromium started no 11th download from one page in our tries, so three
        # buttons (nine downloads) per page
        chosen = [labels.index(label) for label in clicked]
        page.on("download", lambda d: downloads.append(d))
        deadline = time.monotonic() + DOWNLOAD_TIMEOUT_S
        for _ in range(3):  # one click after the other, waiting for nothing in between
            for n in chosen:
                buttons.nth(n).click(timeout=max((deadline - time.monotonic()) * 1000, 1))
        while len(downloads) < 3 * len(chosen) and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        names = [d.suggested_filename for d in downloads]
        for download in downloads:
            assert download.failure() is None, download.suggested_filename
            _check_content(download.suggested_filename,
                           Path(download.path()).read_bytes())
        wanted = [name.format(run=run_id) for name in clicked.values()]
        # each file three times; the browser may finish them in another order than clicked
        assert sorted(names) == sorted(wanted * 3), names
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    finally:
        page.close()
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "MediaFileStorageError" not in text, text[-3000:]
    assert "Deferred file" not in text, text[-3000:]


def test_every_page_requests_only_the_app_itself(chromium, results_app) -> None:
    """Each page asks nothing of any host but the app's own loopback one. One fresh load
    (Home), then every other page by the sidebar: the bootstrap (index.html, the app's
    scripts, its fonts) is the same for every path, and a page reached by the sidebar
    still requests what its elements need (its icon as the favicon, images, styles), so
    this records the same hosts as a load of each path at ~half the chromium CPU."""
    from tests.e2e.nav import idle, sidebar_to

    url, _, _ = results_app
    context = chromium.new_context()
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    try:
        page = context.new_page()
        page.set_default_timeout(UI_TIMEOUT_MS)
        open_app(page, url)
        page.locator('[data-testid="stSidebar"]').get_by_text("Database", exact=True).wait_for()
        page.locator("h1").first.wait_for()
        idle(page)
        page.wait_for_timeout(300)  # the favicon is set after the page draws
        for path in PAGES[1:]:
            sidebar_to(page, path, path.capitalize())
            page.wait_for_timeout(300)
    finally:
        context.close()
    hosts = {urlparse(u).hostname for u in requests if urlparse(u).scheme in ("http", "https",
                                                                               "ws", "wss")}
    outside = sorted(u for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")
                     and urlparse(u).hostname not in ("127.0.0.1", "localhost"))
    assert requests and hosts, "no request recorded"
    assert outside == [], outside


def test_monitoring_shows_a_schedule_change_without_a_reload(context, results_app) -> None:
    """Walked on the real model: a schedule's new runs showed on the Monitoring page only
    after a reload. The schedules part re-reads the database every 10 s while one is
    active: a period changed elsewhere (here: in this process, as the CLI would) shows in
    the open page. Costs ~1 s of CPU beyond the module's server (one page, one refresh)."""
    from playwright.sync_api import expect

    from evalcore.auth.identity import Actor
    from evalcore.config import settings_from_env
    from evalcore.monitor.actions import add_schedule, edit_schedule
    from evalcore.store.db import make_engine
    from tests.pages.helpers import add_fake_model

    url, log, _ = results_app
    settings = settings_from_env({"EVALCORE_HOME": str(log.parent / "home")})
    add_fake_model(settings)
    engine = make_engine(settings.db_url)
    admin = Actor(email="", name="tester", role="admin")
    row = add_schedule(admin, engine, "stability", {"dataset": "downloads", "model": "fake",
                                                    "rounds": 1},
                       models_path=settings.models_path, every_s=86400)  # no worker: no run
    page = context.new_page()
    try:
        open_app(page, f"{url}/monitoring")
        expect(page.get_by_text(f"Schedule {row.id} · stability · downloads · fake · "
                                "every 1d")).to_be_visible(timeout=UI_TIMEOUT_MS)
        edit_schedule(admin, engine, row.id, every_s=3600)
        # no reload; wait_for polls less than expect (~0.03 core against ~0.2 on a big page)
        page.get_by_text(f"Schedule {row.id} · stability · downloads · fake · "
                         "every 1h").wait_for(timeout=25_000)
    finally:
        page.close()
        from evalcore.monitor.actions import delete_schedule

        delete_schedule(admin, engine, row.id)  # the other tests see the app as it was
        engine.dispose()


def test_no_card_of_a_large_run_is_cut_off_at_1366_px(context, results_app) -> None:
    """'Done 1508 / 1...': a large run's cards fit a 1366 x 768 window, sidebar open."""
    from playwright.sync_api import expect

    from tests.e2e.nav import idle

    url, _, small = results_app
    big = small - 1  # seeded just before it
    page = context.new_page()
    page.set_viewport_size({"width": 1366, "height": 768})
    page.set_default_timeout(UI_TIMEOUT_MS)
    try:
        open_app(page, f"{url}/results")
        page.get_by_role("combobox", name="Run details").click()
        page.get_by_role("option").filter(has_text=f"#{big} ").first.click()
        expect(page.locator('[data-testid="stMetric"]').filter(has_text=re.compile("1,?509")).first
               ).to_be_visible()
        idle(page)
        shown = page.locator('[data-testid="stMetricValue"], [data-testid="stMetricLabel"]'
                             ).evaluate_all(  # the card and every box inside it
            "els => els.map(e => [e.innerText, Math.max(...[e, ...e.querySelectorAll('*')]"
            ".map(x => x.scrollWidth - x.clientWidth))])")
        cut = [text for text, overflow in shown if overflow > 1]
        assert shown and not cut, f"cut off at 1366 px: {cut}"
    finally:
        page.close()
