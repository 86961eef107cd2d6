"""The app's warm-up (issue 21): started once by streamlit_app.py, it imports what the pages
import and opens the database, so a page's first visit finds them loaded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.warmup import imports_of
from tests.conftest import REPO_ROOT


def test_imports_of_reads_module_and_function_level_imports(tmp_path: Path) -> None:
    page = tmp_path / "page.py"
    page.write_text(
        "import json\nimport pandas as pd\nfrom evalcore.store import queries\n"
        "from pages import _shared\n\n"
        "def draw():\n    from evalcore.report.compare import run_list\n"
        "    import evalcore.report.stability_charts\n", encoding="utf-8")
    assert imports_of([page]) == [
        "evalcore.store", "evalcore.store.queries", "pages", "pages._shared",
        "evalcore.report.compare", "evalcore.report.compare.run_list",
        "evalcore.report.stability_charts"]


def _python(code: str, home: Path, warm: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("EVALCORE_DB_URL", "EVALCORE_MODELS", "EVALCORE_WARMUP")}
    env.update(EVALCORE_HOME=str(home), PYTHONPATH=str(REPO_ROOT))
    if not warm:
        env["EVALCORE_WARMUP"] = "0"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=300).stdout
    return json.loads(out.strip().splitlines()[-1])


PROBE = """
import json, sys
{run}
from evalcore import warmup
w = warmup._started
assert w is not None, "the warm-up never started"
assert w.done.wait(240), "the warm-up did not finish"
wanted = ['pandas', 'plotly.graph_objects', 'sqlalchemy', 'evalcore.report.compare',
          'evalcore.perturb.sets', 'pages._results_compare', 'pages._attack_sets']
from pathlib import Path
again = warmup.start(sorted(Path('pages').glob('*.py')))  # a later call: the same warm-up
print(json.dumps({{"missing": [m for m in wanted if m not in sys.modules],
                  "failed": w.failed, "engine_ready": w.engine_ready,
                  "imported": len(w.imported), "same": again is w}}))
"""


@pytest.fixture(scope="module")
def app_process(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """One script run of the app (Home) in a fresh process, then a second `start()` call in
    it; both tests below read it (a process importing every page's modules costs ~2.5 s of
    CPU: one, not two)."""
    home = tmp_path_factory.mktemp("warm") / "home"
    run = ("from streamlit.testing.v1 import AppTest\n"
           f"at = AppTest.from_file({str(REPO_ROOT / 'streamlit_app.py')!r}, "
           "default_timeout=240).run()\n"
           "assert not at.exception, [e.value for e in at.exception]\n")
    return _python(PROBE.format(run=run), home), home


def test_the_app_starts_a_warm_up_that_loads_the_pages_modules_and_database(
        app_process: tuple[dict, Path]) -> None:
    """Afterwards the background warm-up has imported what the other pages import and
    opened the database."""
    result, home = app_process
    assert result["missing"] == [] and result["failed"] == {}, result
    assert result["engine_ready"] is True and result["imported"] > 50, result
    assert (home / "evalcore.db").is_file()


def test_start_runs_once_per_process_and_can_be_turned_off(app_process: tuple[dict, Path],
                                                           tmp_path: Path) -> None:
    on, _ = app_process  # the app's start, then another call: the first call's warm-up
    assert on["same"] is True and on["imported"] > 50 and "pandas" not in on["missing"], on
    code = ("import json, sys\nfrom pathlib import Path\nfrom evalcore import warmup\n"
            "pages = sorted(Path('pages').glob('*.py'))\n"
            "first = warmup.start(pages); again = warmup.start(pages)\n"
            "first.done.wait(240)\n"
            "print(json.dumps({'same': first is again, 'imported': len(first.imported), "
            "'pandas': 'pandas' in sys.modules}))")
    off = _python(code, tmp_path / "off", warm=False)
    assert off == {"same": True, "imported": 0, "pandas": False}, off
