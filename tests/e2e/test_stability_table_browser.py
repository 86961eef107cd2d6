"""The Stability page's questions table fits its column in Debian's chromium: no column
(the success rate was) sits past the table's right edge, whatever the order or errors.

The table is a canvas (glide-data-grid), so what AppTest sees says nothing about what is
cut off; its scroller's width does. Never runs `playwright install`.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.nav import UI_TIMEOUT_MS, idle, open_app
from tests.e2e.test_browser import NO_WARM_UP, streamlit_server
from tests.e2e.test_journey import _pick

pytestmark = pytest.mark.browser
WIDTHS = """() => {
    const head = Array.from(document.querySelectorAll('h4'))
        .find(h => h.innerText.trim() === 'Questions');
    const table = head && Array.from(document.querySelectorAll('[data-testid="stDataFrame"]'))
        .find(d => head.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING);
    const scroller = table && table.querySelector('.dvn-scroller');
    return scroller ? [[scroller.scrollWidth, scroller.clientWidth]] : [];
}"""
"""(content width, visible width) of the first table under the "Questions" heading."""


@pytest.fixture(scope="module")
def stability_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app over one finished run with long questions and a failed round."""
    from evalcore.config import settings_from_env
    from evalcore.store.db import make_engine
    from tests.fakes.stored_runs import seed_dataset, seed_run

    tmp = tmp_path_factory.mktemp("stability-table")
    settings = settings_from_env({"EVALCORE_HOME": str(tmp / "home")})
    settings.home.mkdir(parents=True)
    engine = make_engine(settings.db_url)
    questions = [f"Question {i}: " + "a rather long word problem " * 6 for i in range(8)]
    dataset = seed_dataset(engine, "long", questions)
    seed_run(engine, dataset, {i: [1, i % 2, None if i == 3 else 1] for i in range(8)}, 3)
    engine.dispose()
    with streamlit_server(tmp, {"EVALCORE_EMBEDDED_WORKER": "0", **NO_WARM_UP}) as url:
        yield url


def _widths(page) -> list[list[int]]:
    page.wait_for_function(f"({WIDTHS})().length > 0")
    return page.evaluate(WIDTHS)


def test_the_questions_table_has_no_column_past_its_right_edge(chromium, stability_app,
                                                                tmp_path: Path) -> None:
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(UI_TIMEOUT_MS)
    try:
        open_app(page, f"{stability_app}/stability")
        [(content, visible)] = _widths(page)
        assert content <= visible + 1, f"the table is {content} px wide in {visible} px"
        _pick(page, "Order", "CI width, widest first")  # one more column: CI width
        idle(page)  # the rerun with the new order has drawn its table
        [(content, visible)] = _widths(page)
        assert content <= visible + 1, f"the table is {content} px wide in {visible} px"
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
        raise
    finally:
        page.close()
