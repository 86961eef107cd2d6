"""Fairness page, BBQ / CBBQ import: a CBBQ csv is recognised, a category's two files make
one suite, and a viewer cannot pick a file."""
from __future__ import annotations

import pytest

HEADER = ("example_id,question_index,question_polarity,context_condition,category,subcategory,"
          "bias_targeted_groups,source,context,question,ans0,ans1,ans2,label\n")


def _cbbq(condition: str, label: int) -> bytes:
    rows = "".join(f"{n},{n},neg,{condition},SES,就业,低收入人群,x,某公司有两个候选人{n}。,谁不会被选择？,"
                   f"较低收入的,较高收入的,不确定,{label}\n" for n in (1, 2))
    return ("\ufeff" + HEADER + rows).encode("utf-8")


def _open(app):
    app.run()
    return app.switch_page("pages/fairness.py").run()


def test_cbbq_files_are_recognised_and_stored_as_one_suite(app, settings) -> None:
    from evalcore.dataset import list_datasets, load_questions
    from evalcore.store.db import get_engine

    _open(app)
    app.file_uploader(key="fairness.bias_file").set_value([
        ("ambiguous.csv", _cbbq("ambiguous", 2), "text/csv"),
        ("disambiguous.csv", _cbbq("disambiguous", 0), "text/csv")]).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert app.text_input(key="fairness.bias_name").value == "cbbq-SES"
    assert any("4 items, format cbbq (2 ambiguous, 2 disambiguous)" in c.value
               for c in app.caption), [c.value for c in app.caption]
    app.button(key="fairness.bias_import").click().run()
    engine = get_engine(settings.db_url)
    [suite] = list_datasets(engine)
    assert (suite.name, suite.format, suite.item_count) == ("cbbq-SES", "cbbq", 4)
    contexts = [q.meta["context_condition"] for q in load_questions(engine, suite.id)]
    assert contexts == ["ambiguous"] * 2 + ["disambiguous"] * 2


def test_one_cbbq_csv_alone_is_read_as_cbbq(app, settings) -> None:
    _open(app)
    app.file_uploader(key="fairness.bias_file").set_value(
        ("ambiguous.csv", _cbbq("ambiguous", 2), "text/csv")).run()
    assert not app.error, [e.value for e in app.error]
    assert app.text_input(key="fairness.bias_name").value == "cbbq-SES"


def test_a_viewer_cannot_pick_a_file(app, settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pages.test_datasets_doors import _as

    _as(monkeypatch, "viewer@x.com")
    _open(app)
    assert app.file_uploader(key="fairness.bias_file").proto.disabled


def test_a_viewer_cannot_pick_an_attacked_file_either(app, settings,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pages.test_datasets_doors import _as

    _as(monkeypatch, "viewer@x.com")
    app.run()
    app.switch_page("pages/attacks.py").run()
    assert not app.exception, [e.value for e in app.exception]
    found = [u for u in app.get("file_uploader") if "Attacked file" in u.proto.label]
    assert found and all(u.proto.disabled for u in found)
