"""The Review page in Debian's chromium, keys only: 30 attacked items decided by pressing
A (approve) or X (reject), never a click; a reload half-way resumes at the first
undecided item; the seconds per decision are measured (docs/review.md).

Each key press is followed by a wait for the next item's card, the condition itself,
never a fixed time; the deadline only bounds a failure.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.nav import UI_TIMEOUT_MS, open_app
from tests.e2e.test_browser import NO_WARM_UP, streamlit_server

pytestmark = pytest.mark.browser
N = 30
REJECTED = {4, 9, 13, 22}


@pytest.fixture(scope="module")
def review_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, int]]:
    """The app over a home with one review queue of 30 attacked items; (url, home, queue)."""
    from evalcore.config import settings_from_env
    from evalcore.store import review_queues as rq
    from evalcore.store.db import make_engine
    from tests.fakes.review_sets import seed_attack_set

    tmp = tmp_path_factory.mktemp("review-app")
    settings = settings_from_env({"EVALCORE_HOME": str(tmp / "home")})
    settings.home.mkdir(parents=True)
    engine = make_engine(settings.db_url)
    set_id, _ = seed_attack_set(engine, N)
    queue = rq.create_queue(engine, attack_set_id=set_id, guidelines="Keep the sense.")
    engine.dispose()
    env = {"EVALCORE_EMBEDDED_WORKER": "0", "EVALCORE_USER": "ann", **NO_WARM_UP}
    with streamlit_server(tmp, env) as url:
        yield url, tmp / "home", queue


def test_thirty_decisions_by_key_with_a_reload_half_way(chromium, review_app, capsys) -> None:
    from playwright.sync_api import expect

    from evalcore.config import settings_from_env
    from evalcore.store import review_queues as rq
    from evalcore.store.db import make_engine

    expect.set_options(timeout=UI_TIMEOUT_MS)
    url, home, queue = review_app
    context = chromium.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)

    def card(i: int):  # type: ignore[no-untyped-def]
        return page.get_by_text(f"question {i} attacked", exact=True)

    def keys_live(i: int) -> None:
        """After a page load, the buttons hear their keys only some seconds after the card
        is drawn: press P (previous, harmless) until the page answers, then N back to
        item i's card."""
        expect(card(i)).to_be_visible()
        answer = page.get_by_text("Your latest decision", exact=False).or_(
            page.get_by_text("You have no decision in this queue yet."))
        deadline = time.monotonic() + UI_TIMEOUT_MS / 1000
        while True:
            page.keyboard.press("p")
            try:
                expect(answer).to_be_visible(timeout=500)
                break
            except AssertionError:
                assert time.monotonic() < deadline, "the page never heard a key"
        page.keyboard.press("n")
        expect(card(i)).to_be_visible()

    try:
        open_app(page, f"{url}/review")
        keys_live(0)
        seconds = []
        for i in range(N):
            if i == N // 2:
                page.reload()
                keys_live(i)  # resumed at the first undecided item
            start = time.monotonic()
            page.keyboard.press("x" if i in REJECTED else "a")
            if i + 1 < N:
                expect(card(i + 1)).to_be_visible()
            else:
                expect(page.get_by_text("Nothing left for you in this queue.")).to_be_visible()
            seconds.append(time.monotonic() - start)
    finally:
        context.close()
    engine = make_engine(settings_from_env({"EVALCORE_HOME": str(home)}).db_url)
    try:
        decided = rq.decisions(engine, queue)
        positions = {int(i.id): int(i.position) for i in rq.queue_items(engine, queue)}
    finally:
        engine.dispose()
    assert sorted(positions[d.queue_item_id] for d in decided) == list(range(N))
    assert {positions[d.queue_item_id] for d in decided if d.verdict == "reject"} == REJECTED
    assert {d.reviewer for d in decided} == {"ann"}
    with capsys.disabled():
        print(f"\nreview by key: {N} decisions, mean {sum(seconds) / N:.2f} s, "
              f"max {max(seconds):.2f} s per decision")
