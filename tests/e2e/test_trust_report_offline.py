"""The trust report opened in Debian's chromium: it renders its sections and figures and
makes no request outside the file (figures inline, no CDN, no fonts)."""
from __future__ import annotations

import os

import pytest

from tests.conftest import require
from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS
from tests.fakes.stored_runs import seed_dataset, seed_robustness_run, seed_run

pytestmark = pytest.mark.browser


def test_trust_report_opens_offline(engine, tmp_path):
    require(CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} missing")
    from playwright.sync_api import sync_playwright

    from evalcore.report.trust import trust_report_html

    ds = seed_dataset(engine, "offline", [f"q{i}?" for i in range(6)])
    seed_run(engine, ds, {i: [1, i % 2, 1] for i in range(6)}, 3, model="m")
    seed_robustness_run(engine, [f"q{i}?" for i in range(4)], {i: [1] for i in range(4)},
                        {i: [i % 2] for i in range(4)}, 1, model="m")
    page_file = tmp_path / "trust.html"
    page_file.write_text(trust_report_html(engine, model="m"), encoding="utf-8")
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                     args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_file.as_uri())
            page.wait_for_selector(".plot-container", timeout=30_000)
            headings = page.locator("h2").all_inner_texts()
            plots = page.locator(".plot-container").count()
        finally:
            browser.close()
    assert headings[:2] == ["Headline figures", "Distribution of correct rounds"]
    assert "Accuracy drop by attack level" in headings and "What was run" in headings
    assert plots == 2
    assert [u for u in requests if not u.startswith(("file:", "data:", "blob:"))] == []
