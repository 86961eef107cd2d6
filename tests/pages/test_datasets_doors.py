"""The Datasets page's doors (issue 23): a role that cannot import uploads and parses
nothing; what a user typed (a search, a dataset name) is shown as text, never as Markdown."""
from __future__ import annotations

import re

import pytest

from tests.pages.helpers import SAMPLES, shown

IMAGE = "![t](http://127.0.0.1:9/s.png)"


def _as(monkeypatch: pytest.MonkeyPatch, email: str) -> None:
    """Header mode, this session signed in as `email` (role from app_user, else viewer)."""
    import pages._signin as signin

    monkeypatch.setenv("EVALCORE_AUTH", "header")
    monkeypatch.setenv("EVALCORE_HEADER_SECRET", "s" * 16)
    monkeypatch.setattr(signin, "_identity", lambda config: (email, email.split("@")[0]))


def _open(at):
    at.run()
    return at.switch_page("pages/datasets.py").run()


def test_a_viewer_cannot_upload_and_nothing_is_parsed(app, settings, monkeypatch) -> None:
    import evalcore.dataset as dataset

    reads: list[str] = []

    def spy(real):  # type: ignore[no-untyped-def]
        def call(data, filename, *args, **kwargs):  # type: ignore[no-untyped-def]
            reads.append(filename)
            return real(data, filename, *args, **kwargs)
        return call

    monkeypatch.setattr(dataset, "read_table", spy(dataset.read_table))
    monkeypatch.setattr(dataset, "parse_dataset", spy(dataset.parse_dataset))
    _as(monkeypatch, "viewer@x.com")
    _open(app)
    uploader = app.file_uploader(key="datasets.upload")
    assert uploader.proto.disabled
    assert any("may not import datasets" in text for text in map(shown, (c.value for c in
                                                                         app.caption)))
    assert app.radio(key="datasets.source").disabled  # no bundled sample parsed either
    assert not app.exception and reads == []
    assert not _has(app, "datasets.import")


def _has(at, key: str) -> bool:
    return any(getattr(b, "key", None) == key for b in at.button)


def test_an_evaluator_still_uploads_and_sees_the_preview(app, settings, monkeypatch) -> None:
    from evalcore.auth.users import add_user
    from evalcore.store.db import get_engine

    add_user(get_engine(settings.db_url), "eval@x.com", "evaluator")
    _as(monkeypatch, "eval@x.com")
    _open(app)
    uploader = app.file_uploader(key="datasets.upload")
    assert not uploader.proto.disabled
    uploader.set_value(("q.csv", (SAMPLES / "math_zh_gbk.csv").read_bytes(), "text/csv")).run()
    assert not app.exception
    assert not app.button(key="datasets.import").disabled


def test_a_search_with_markdown_is_shown_as_text(app, settings) -> None:
    from evalcore import actions
    from evalcore.auth import local_actor
    from evalcore.store.db import get_engine

    actions.import_dataset(local_actor(), get_engine(settings.db_url),
                           SAMPLES / "math_zh_gbk.csv", name="math")
    _open(app)
    app.text_input(key="datasets.browse_search").set_value(IMAGE).run()
    assert not app.exception
    [info] = [i.value for i in app.info if "No item of" in i.value]
    outside_escapes = re.sub(r"\\[!-/:-@\[-`{-~]", "", info)
    assert not set(outside_escapes) & set("![]<>")  # no image: the browser fetches nothing
    assert shown(info) == f"No item of 'math' contains '{IMAGE}'."
