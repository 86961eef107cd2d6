"""Malformed uploads on the Datasets page (AppTest): one `st.error`, the same text as the
CLI's `error:` line, nothing stored; a suspicious quote is shown before importing."""
from __future__ import annotations

import pytest

from tests.dataset.malformed import CASES

REFUSED = ["deep.json", "deep_answer.jsonl", "lone_surrogate.jsonl", "latin1_cafe.csv",
           "utf8_bad_last_row.csv", "unclosed_quote.csv", "nul.csv", "three_mb_line.csv",
           "div0.xlsx", "gbk_big5_line.csv", "lone_cr.csv", "dup_keys.json"]


def _upload(app, filename: str):  # type: ignore[no-untyped-def]
    case = next(c for c in CASES if c.filename == filename)
    app.run()
    app.switch_page("pages/datasets.py").run()
    app.file_uploader(key="datasets.upload").set_value(
        (filename, case.make(), "application/octet-stream")).run()
    assert not app.exception, [e.value for e in app.exception]
    return case


def _stored(settings) -> list[str]:  # type: ignore[no-untyped-def]
    from evalcore.dataset import list_datasets
    from evalcore.store.db import get_engine

    return [d.name for d in list_datasets(get_engine(settings.db_url))]


@pytest.mark.parametrize("filename", REFUSED)
def test_a_malformed_upload_is_one_error_line(app, settings, filename: str) -> None:
    import re

    from evalcore.dataset import parse_dataset
    from evalcore.error_text import describe_error
    from evalcore.errors import DatasetError

    case = _upload(app, filename)
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and "\n" not in errors[0] and len(errors[0]) <= 1000, errors
    assert re.search(case.refused or "", errors[0])
    with pytest.raises(DatasetError) as caught:
        parse_dataset(case.make(), filename)
    assert describe_error(caught.value) == errors[0]
    assert _stored(settings) == []


def test_ten_thousand_columns_are_listed_in_one_short_line(app, settings) -> None:
    _upload(app, "ten_thousand_columns.csv")
    infos = [i.value for i in app.info if "No known format" in i.value]
    assert len(infos) == 1 and "and 9,990 more" in infos[0] and len(infos[0]) < 2000


def test_a_quote_swallowing_rows_is_shown_before_importing(app, settings) -> None:
    case = _upload(app, "quote_swallows_rows.csv")
    warnings = [w.value for w in app.warning]
    from tests.pages.helpers import shown

    assert any(f"Check before importing: {case.warning}" in shown(w) for w in warnings), warnings
