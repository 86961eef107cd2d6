"""What a user types is shown, never rendered: a search for a Markdown image in the
dataset browser made every viewer's browser fetch its URL (issue 23). A loopback server
counts the requests that would betray it."""
from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import require
from tests.e2e.nav import open_app
from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, streamlit_server
from tests.pages.helpers import SAMPLES

pytestmark = pytest.mark.browser


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        _Counter.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def canary() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    _Counter.hits = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_searched_image_is_shown_as_text_and_never_fetched(tmp_path: Path, canary: int
                                                             ) -> None:
    require(CHROMIUM.is_file(), f"{CHROMIUM} missing: apt-get install chromium")
    from playwright.sync_api import expect, sync_playwright

    from evalcore import actions
    from evalcore.auth import local_actor
    from evalcore.store.db import make_engine

    (tmp_path / "home").mkdir()
    engine = make_engine(f"sqlite:///{tmp_path / 'home' / 'evalcore.db'}")
    actions.import_dataset(local_actor(), engine, SAMPLES / "math_zh_gbk.csv", name="math")
    engine.dispose()
    image = f"![t](http://127.0.0.1:{canary}/s.png)"
    with streamlit_server(tmp_path, {}) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            open_app(page, f"{url}/datasets")
            search = page.get_by_label("Search question, options, answer or id")
            search.fill(image)
            search.press("Enter")
            expect(page.get_by_text(f"No item of 'math' contains '{image}'.")).to_be_visible(
                timeout=30_000)
            page.wait_for_timeout(1_500)  # an <img> would have been requested by now
            assert page.locator(f'img[src*="127.0.0.1:{canary}"]').count() == 0
        finally:
            browser.close()
    assert _Counter.hits == []
