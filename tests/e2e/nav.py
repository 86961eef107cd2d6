"""Moving between the app's pages in a browser test without a full page load.

A click on a sidebar link is Streamlit's single-page navigation: the same session and
websocket, the app's JavaScript already loaded and compiled; the server runs the new
page's script and the browser draws it. `page.goto` loads index.html and the whole bundle
again and starts a new session: about twice the chromium CPU (measured 2.1-5.3 s against
0.8-4.2 s a move, docs/test-timing-log.md session 7). Use `page.goto` where the claim is about a
fresh load or a fresh session; this elsewhere.
"""
from __future__ import annotations

import warnings

UI_TIMEOUT_MS = 60_000
"""Playwright's bound on one wait in a browser test. A bound, not a duration: on two cores
busy with the whole suite, the first load of a fresh context (the bundle fetched and
compiled, the websocket opened, the page's first script run) can pass 30 s."""
FIRST_LOAD_MS = 30_000
"""How long a fresh load may take to connect to its server before it is loaded again."""
_APP = '[data-testid="stApp"]'


def idle(page) -> None:
    """Wait until the app is not running a script (Streamlit's status widget is gone)."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden")


def sidebar_to(page, path: str, heading: str) -> None:
    """Open the page at url path `path` ("" for Home) by its sidebar link; return once its
    heading `heading` is shown and its script run has ended, so nothing of the page before
    is left to be found by the next locator."""
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
    page.get_by_role("heading", name=heading, exact=True).wait_for()
    idle(page)


def open_app(page, url: str, **goto) -> None:
    """`page.goto(url)`, then wait until the page's Streamlit app has connected to its
    server. A first load can stay unconnected on a loaded machine: one still unconnected
    after FIRST_LOAD_MS is loaded again, as a person would, with a warning naming the
    states it was stuck in; a second one fails the test with them."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    connected = page.locator(f'{_APP}[data-test-connection-state="CONNECTED"]')
    page.goto(url, **goto)
    try:
        connected.wait_for(state="attached", timeout=FIRST_LOAD_MS)
        return
    except PlaywrightTimeout:
        stuck = _app_state(page)
    warnings.warn(f"first load of {url} not connected after {FIRST_LOAD_MS} ms ({stuck}); "
                  "loading it again", stacklevel=2)
    page.reload(**goto)
    try:
        connected.wait_for(state="attached", timeout=FIRST_LOAD_MS)
    except PlaywrightTimeout:
        raise AssertionError(f"{url} never connected: first {stuck}, then after a reload "
                             f"{_app_state(page)}") from None


def _app_state(page) -> str:
    """The app root's connection and script states, or what the page shows instead."""
    app = page.locator(_APP)
    if app.count() == 0:
        return f"no app root; page text: {page.locator('body').inner_text()[:300]!r}"
    return (f"connection {app.first.get_attribute('data-test-connection-state')}, "
            f"script {app.first.get_attribute('data-test-script-state')}")
