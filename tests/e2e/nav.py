"""Moving between the app's pages in a browser test without a full page load.

A click on a sidebar link is Streamlit's single-page navigation: the same session and
websocket, the app's JavaScript already loaded and compiled; the server runs the new
page's script and the browser draws it. `page.goto` loads index.html and the whole bundle
again and starts a new session: about twice the chromium CPU (measured 2.1-5.3 s against
0.8-4.2 s a move, docs/test-timing-log.md session 7). Use `page.goto` where the claim is about a
fresh load or a fresh session; this elsewhere.
"""
from __future__ import annotations

UI_TIMEOUT_MS = 60_000
"""Playwright's bound on one wait in a browser test. A bound, not a duration: the first
load of a fresh context (the bundle fetched and compiled, the websocket opened, the
page's first script run) took over 30 s once on two cores under the whole suite."""


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
