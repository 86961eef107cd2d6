"""Header mode on a real server: the user header is honoured only with the proxy's shared
secret (Playwright sends the headers a reverse proxy would, on every request and the
websocket); without it, or with a wrong one, the app shows only the refusal."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.nav import UI_TIMEOUT_MS, open_app
from tests.e2e.test_browser import NO_WARM_UP, streamlit_server

pytestmark = pytest.mark.browser
SECRET = "only-the-proxy-knows-this"


@pytest.fixture(scope="module")
def header_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with streamlit_server(tmp_path_factory.mktemp("header-app"), {
            "EVALCORE_AUTH": "header", "EVALCORE_HEADER_SECRET": SECRET,
            "EVALCORE_ADMINS": "root@example.com", **NO_WARM_UP}) as url:
        yield url


@pytest.fixture(scope="module")
def context(chromium):  # type: ignore[no-untyped-def]
    """One browser context for the module; each test opens its own page with its own
    headers and no cookies (a page in a fresh context cost ~1.5 s more of chromium's CPU:
    the app's scripts fetched and compiled again)."""
    context = chromium.new_context()
    try:
        yield context
    finally:
        context.close()


def _page(context, headers: dict):  # type: ignore[no-untyped-def]
    """A new tab sending `headers` on every request and the websocket, as a proxy would."""
    context.clear_cookies()
    page = context.new_page()
    page.set_extra_http_headers(headers)
    page.set_default_timeout(60_000)
    return page


@pytest.mark.parametrize("headers, signed_in", [
    ({"X-Forwarded-Email": "root@example.com", "X-Evalcore-Proxy-Secret": SECRET}, True),
    ({"X-Forwarded-Email": "root@example.com"}, False),
    ({"X-Forwarded-Email": "root@example.com", "X-Evalcore-Proxy-Secret": "guess"}, False),
], ids=["through-the-proxy", "no-secret", "wrong-secret"])
def test_user_header_counts_only_with_the_shared_secret(context, header_app: str,
                                                        headers: dict, signed_in: bool) -> None:
    from playwright.sync_api import expect

    page = _page(context, headers)
    try:
        open_app(page, header_app)
        if signed_in:
            expect(page.get_by_role("button", name="Run the demo")).to_be_visible(  # Home
                timeout=UI_TIMEOUT_MS)
            expect(page.get_by_text("role admin")).to_be_visible()
        else:
            expect(page.get_by_text("Access refused")).to_be_visible(timeout=UI_TIMEOUT_MS)
            expect(page.get_by_text("did not come through the trusted proxy")).to_be_visible()
            expect(page.get_by_role("button", name="Run the demo")).to_have_count(0)
    finally:
        page.close()


@pytest.mark.parametrize("path", ["", "datasets", "team"])
def test_the_refusal_shows_nothing_else(context, header_app: str, path: str) -> None:
    """No sidebar listing the files of pages/ (Streamlit's automatic one), on any URL."""
    from playwright.sync_api import expect

    page = _page(context, {"X-Forwarded-Email": "root@example.com"})
    try:
        open_app(page, f"{header_app.rstrip('/')}/{path}")
        expect(page.get_by_text("Access refused")).to_be_visible(timeout=UI_TIMEOUT_MS)
        page.wait_for_timeout(1_000)  # a sidebar would be drawn by now
        expect(page.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
        expect(page.locator('[data-testid="stSidebar"]')).to_have_count(0)
        for name in ("datasets", "signin", "shared", "team", "models"):
            expect(page.get_by_role("link", name=name, exact=False)).to_have_count(0)
    finally:
        page.close()
