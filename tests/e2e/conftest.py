"""Browser fixtures shared by the e2e modules."""
from __future__ import annotations

import os

import pytest

from tests.conftest import require
from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def chromium():  # type: ignore[no-untyped-def]
    """Debian's chromium (Playwright), one per module; each test opens its own pages."""
    require(CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} missing")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
