"""Every malformed file in `malformed.CASES`: the CLI refuses it in one line with exit 2,
or imports exactly the right text; the app's path (the functions the Datasets page calls)
gives the same one-line refusal or the same questions."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.errors import DatasetError
from tests.dataset.malformed import CASES, Case

REPO = Path(__file__).resolve().parents[2]
MAX_LINE = 1000
"""The longest error line any of these files may give (the 10,000-column file gave 89 KB)."""


def _migrated_home(tmp_path: Path) -> Path:
    """A home whose database is migrated already (the suite's schema template, a few ms):
    the CLI process then skips Alembic (~0.25 s of its ~0.7 s of CPU), which is not what
    these tests are about (it ran before the refusal either way)."""
    from evalcore.store.db import make_engine

    home = tmp_path / "home"
    home.mkdir()
    make_engine(f"sqlite:///{home / 'evalcore.db'}").dispose()
    return home


def _page_path(data: bytes, filename: str):  # type: ignore[no-untyped-def]
    """What pages/datasets.py does with an upload: columns (read_table), then the parse."""
    from evalcore.dataset import parse_dataset, read_table

    read_table(data, filename)
    return parse_dataset(data, filename)


def _page_error(data: bytes, filename: str) -> str:
    from evalcore.error_text import describe_error

    with pytest.raises(DatasetError) as caught:
        _page_path(data, filename)
    message = describe_error(caught.value)
    assert message is not None
    return message


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_cli_and_page_agree_on_every_malformed_file(case: Case, run, tmp_path: Path) -> None:
    data = case.make()
    path = tmp_path / case.filename
    path.write_bytes(data)
    code, out, err = run("import", str(path))
    if case.refused is not None:
        lines = err.splitlines()
        assert (code, out, len(lines)) == (2, "", 1), err[:2000]
        assert lines[0].startswith("error: ") and len(lines[0]) <= MAX_LINE, lines[0][:2000]
        assert re.search(case.refused, lines[0]), lines[0]
        assert _page_error(data, case.filename) == lines[0].removeprefix("error: ")
        return
    assert code == 0 and err == "", err
    assert f": {case.items} items," in out
    if case.warning:
        assert f"  warning: {case.warning}" in out
    else:
        assert "warning" not in out
    code, shown, _ = run("show", path.stem, "--json", "--limit", "100000")
    stored = [q["question"] for q in json.loads(shown)["questions"]]
    parsed = [q.question for q in _page_path(data, case.filename).questions]
    assert stored == parsed and len(stored) == case.items
    for idx, text in case.questions.items():
        assert stored[idx] == text


def test_the_set_is_wider_than_the_testers_38() -> None:
    refused = [c for c in CASES if c.refused]
    assert len(CASES) > 38 and len(refused) > 30
    assert len({c.filename for c in CASES}) == len(CASES)


@pytest.mark.parametrize("filename", ["deep.json", "deep_answer.jsonl", "lone_surrogate.jsonl",
                                      "latin1_cafe.csv", "unclosed_quote.csv", "nul.csv"])
def test_a_real_cli_process_prints_one_line(filename: str, tmp_path: Path) -> None:
    case = next(c for c in CASES if c.filename == filename)
    path = tmp_path / filename
    path.write_bytes(case.make())
    done = subprocess.run([sys.executable, "-m", "evalcore", "datasets", "import", str(path)],
                          capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
                          env={"EVALCORE_HOME": str(_migrated_home(tmp_path)),
                               "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    assert re.search(case.refused or "", done.stderr)


def test_fifty_megabytes_on_one_line_are_refused_in_bounded_memory(tmp_path: Path) -> None:
    """The 50 MB one-line CSV (was one 50 MB question at 367 MB peak) and a 50 MB cell
    under a header: refused in one line, the process staying far below the file x 2."""
    big = 50 * 1024 * 1024
    one_line = tmp_path / "one_line.csv"
    one_line.write_bytes(b"x" * big)
    cell = tmp_path / "cell.csv"
    cell.write_bytes(b"question,answer\n" + b"x" * big + b",1\n")
    probe = ("import re, sys\nfrom evalcore import cli\n"  # VmHWM: ru_maxrss survives exec
             "code = cli.main(['datasets', 'import', sys.argv[1]])\n"
             "status = open('/proc/self/status').read()\n"
             "print(int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1)) // 1024)\n"
             "sys.exit(code)\n")
    home = _migrated_home(tmp_path)
    for path, wanted in ((one_line, r"one_line\.csv line 1: longer than 4,194,304"),
                         (cell, r"cell\.csv line 2: longer than 4,194,304")):
        done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                              text=True, cwd=REPO, timeout=300, check=False,
                              env={"EVALCORE_HOME": str(home), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr[:500]
        assert re.search(wanted, done.stderr), done.stderr
        assert int(done.stdout.strip()) < 160, f"peak RSS {done.stdout.strip()} MB"


def test_the_field_limit_is_a_setting(run, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "two_kb.csv"
    path.write_bytes(("question,answer\n" + "题" * 1000 + ",1\n").encode())
    assert run("import", str(path))[0] == 0
    monkeypatch.setenv("EVALCORE_MAX_FIELD_BYTES", "2048")
    code, _, err = run("import", str(path), "--name", "again", "--allow-duplicate")
    assert code == 2 and "row 2, column 'question': the cell is 3,000 bytes, more than the " \
        "2,048 a cell may hold (EVALCORE_MAX_FIELD_BYTES)" in err
    monkeypatch.setenv("EVALCORE_MAX_FIELD_BYTES", "lots")
    code, _, err = run("import", str(path), "--name", "third", "--allow-duplicate")
    assert code == 2 and err.count("\n") == 1
    assert "EVALCORE_MAX_FIELD_BYTES='lots' is not a size in bytes" in err
