"""The app as a person uses it: real `streamlit run`, real Debian chromium via Playwright.

Imports a small CSV through the Datasets page's file uploader and checks it is listed,
and an attacked file through the Attacks page (a job the app's worker executes);
the screenshot goes to tests/e2e/output/ (docs/screenshot.png, the README's, with
EVALCORE_UPDATE_SCREENSHOT=1).
Never runs `playwright install`: the browser is Debian's /usr/bin/chromium.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, require
from tests.e2e.nav import UI_TIMEOUT_MS, open_app

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # a renderer preloading the omnibox's WebUI popup, which headless never shows: ~0.3 s
    # of CPU a launch (docs/test-timing-log.md, session 8)
    "--disable-features=WebUIOmniboxPopup",
]
# The README's picture is refreshed only on request (EVALCORE_UPDATE_SCREENSHOT=1), so a
# test run does not leave the committed image modified; otherwise it goes to tests/e2e/output.
SCREENSHOT = (REPO_ROOT / "docs" / "screenshot.png"
              if os.environ.get("EVALCORE_UPDATE_SCREENSHOT") == "1"
              else REPO_ROOT / "tests" / "e2e" / "output" / "screenshot.png")
START_TIMEOUT_S = 90
NO_WARM_UP = {"EVALCORE_WARMUP": "0"}
"""For the module servers whose tests open a few pages and are not about the warm-up (it
imports every page's modules, ~0.7 s of CPU a server, most of them for pages never
opened): the journey and this module's server keep it, as users run the app;
tests/test_warmup.py checks it."""

# CODAH's shape (English multiple choice), three rows: small, but a real format.
SAMPLE_CSV = """attribute,Question prompt,choice0,choice1,choice2,choice3,answer
o,I am feeling nervous about my midterm tomorrow. I fear that,the professor will delay the midterm.,I will doodle on my exam and receive points for it.,my grandpa has diabetes.,I will fail.,3
o,My brother is very good at math. He,has a watermelon in his shirt.,is flying out the window.,looks like Billy Bob Buddle.,won a math competition.,3
o,The man turned on the faucet. As a result,water flowed out.,the sink caught fire.,the faucet sang a song.,the lights went out.,0
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path) -> None:
    """Poll Streamlit's health endpoint; fail with the server log if it never answers."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    pytest.fail(f"streamlit not healthy after {START_TIMEOUT_S}s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`streamlit run streamlit_app.py` on a free loopback port with a fresh EVALCORE_HOME."""
    tmp = tmp_path_factory.mktemp("browser-app")
    with streamlit_server(tmp, {}) as url:
        yield url


@contextmanager
def streamlit_server(tmp: Path, extra_env: dict[str, str]) -> Iterator[str]:
    """The app on a free loopback port, EVALCORE_HOME under `tmp`, `extra_env` added;
    yields its URL once healthy, stops it at the end."""
    port = _free_port()
    env = dict(os.environ, EVALCORE_HOME=str(tmp / "home"), **extra_env)
    env.pop("EVALCORE_DB_URL", None)
    env.pop("EVALCORE_MODELS", None)
    log = tmp / "streamlit.log"
    cmd = [sys.executable, "-m", "streamlit", "run", "streamlit_app.py",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.headless", "true", "--browser.gatherUsageStats", "false",
           # No reloading of edited modules mid-test (re-running evalcore.store.tables on
           # the same SQLModel metadata raises "Table already defined").
           "--server.fileWatcherType", "none", "--server.runOnSave", "false"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    """Debian's chromium driven by Playwright, with a fresh empty profile."""
    require(CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK),
            f"{CHROMIUM} missing: apt-get install chromium (make test does it as root)")
    from playwright.sync_api import sync_playwright  # requirements-dev.txt

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 860})
        try:
            yield context
        finally:
            context.close()


def test_first_visit_straight_to_a_page_goes_through_the_router(browser, app_url: str) -> None:
    """Runs first, on the fresh server: Streamlit would serve pages/attacks.py on its own
    (legacy pages/ mode, no shared sidebar) until some session has called st.navigation."""
    page = browser.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    try:
        open_app(page, f"{app_url}/attacks")
        page.get_by_role("heading", name="Attacks").wait_for()
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Database", exact=True).wait_for()  # the shared sidebar ran
        nav = sidebar.locator('[data-testid="stSidebarNav"]').inner_text()
        assert "Datasets" in nav and "Robustness" in nav, nav
        assert "_shared" not in nav and "streamlit app" not in nav, nav
    finally:
        page.close()


@contextmanager
def open_page(browser, tmp_path: Path) -> Iterator:
    """A new tab; on a failure its screenshot (tmp_path/failure.png) and text are kept."""
    page = browser.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    try:
        yield page
    except Exception:
        failure = tmp_path / "failure.png"
        page.screenshot(path=str(failure), full_page=True)
        print(f"page text at failure (screenshot {failure}):\n{page.inner_text('body')[:3000]}")
        raise
    finally:
        page.close()


def test_import_csv_through_datasets_page(browser, app_url: str, tmp_path: Path) -> None:
    name = "codah-e2e"
    csv_path = tmp_path / "codah_sample.csv"
    csv_path.write_text(SAMPLE_CSV, encoding="utf-8")

    with open_page(browser, tmp_path) as page:
        _import_through_ui(page, app_url, csv_path, name)
    assert SCREENSHOT.stat().st_size > 10_000


def _import_through_ui(page, app_url: str, csv_path: Path, name: str) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)  # a cold app on 2 busy cores is slow
    open_app(page, app_url, wait_until="domcontentloaded")

    # Datasets is the default page; go there explicitly so the test does not rely on it.
    page.get_by_role("link", name="Datasets").first.click()
    uploader = page.locator('[data-testid="stFileUploader"]')
    expect(uploader).to_be_visible()
    uploader.locator('input[type="file"]').set_input_files(str(csv_path))

    # The CSV has CODAH's columns, so the page recognises the format and shows a preview.
    expect(page.get_by_text("Recognised format")).to_be_visible()
    name_input = page.get_by_label("Dataset name")
    expect(name_input).to_have_value(csv_path.stem)  # prefilled from the file name
    name_input.fill(name)
    name_input.press("Enter")  # commit the text input (one rerun) before clicking
    expect(name_input).to_have_value(name)

    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_text(f"Imported '{name}': 3 items.")).to_be_visible()

    # ...and it is listed under "Stored datasets". The table is drawn on a canvas (no text
    # in the DOM), so read the list through the delete picker, which offers every stored name.
    expect(page.get_by_text("No datasets yet")).to_have_count(0)
    expect(page.get_by_role("heading", name="Stored datasets")).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]')).to_have_count(3)  # preview, stored, items
    picker = page.get_by_role("combobox", name="Dataset to delete")
    picker.click()
    picker.press("ArrowDown")  # opens the option list
    expect(page.get_by_role("option", name=name, exact=True)).to_be_visible()
    picker.press("Escape")
    expect(page.get_by_role("option", name=name, exact=True)).to_have_count(0)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)

    # For the README: the whole page from the top (Streamlit scrolls inside stMain, so a
    # tall viewport, not full_page, shows everything), with no widget focused.
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.mouse.move(0, 0)  # no hover toolbar over a table
    page.set_viewport_size({"width": 1280, "height": 1400})
    page.evaluate("document.querySelectorAll('[data-testid=stMain], section')"
                  ".forEach(e => e.scrollTo(0, 0))")
    expect(page.get_by_role("heading", name="Datasets", exact=True)).to_be_in_viewport()
    page.wait_for_timeout(500)  # let the data grids repaint at the new size
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 10_000



ATTACKED_CSV = """id,question,segmented_text,equation,answer,attacked_question,attack_num,synword_pairs
1,小红有18颗糖，分给3个同学，每人分到几颗？,,x=18/3,6,小红有18颗糖，分给3个同窗，每人分到几颗？,1,{'同学': '同窗'}
2,一辆汽车每小时行驶60千米，4小时行驶多少千米？,,x=60*4,240,一辆汽车每小时行进60千米，4小时行进多少千米？,2,{'行驶': '行进'}
3,一根绳子长15米，剪去它的40%，还剩多少米？,,x=15*(1-40%),9,一根绳子长15米，剪去它的40%，还剩下多少米？,1,{'还剩': '还剩下'}
"""


def test_import_an_attacked_file_through_the_attacks_page(browser, app_url: str,
                                                          tmp_path: Path) -> None:
    """The Attacks page queues the import (no spinner); the app's worker imports the file
    and the page opens the new set for review once the job is done."""
    from playwright.sync_api import expect

    path = tmp_path / "Sweets_underwordattack.csv"
    path.write_text(ATTACKED_CSV, encoding="utf-8")
    expect.set_options(timeout=UI_TIMEOUT_MS)
    with open_page(browser, tmp_path) as page:
        open_app(page, f"{app_url}/attacks", wait_until="domcontentloaded")
        page.get_by_text("Import an attacked file", exact=True).click()
        uploader = page.locator('[data-testid="stFileUploader"]')
        expect(uploader).to_be_visible()
        uploader.locator('input[type="file"]').set_input_files(str(path))
        page.get_by_role("button", name="Import attack set").click()
        expect(page.get_by_text("is ready for review below")).to_be_visible()
        panel = "import of Sweets_underwordattack.csv (word level): done, 3 / 3"
        expect(page.get_by_text(panel)).to_be_visible()  # the job panel, live from the DB
        expect(page.get_by_text("Q1 ·", exact=False).first).to_be_visible()
        expect(page.get_by_text("同窗").first).to_be_visible()
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
