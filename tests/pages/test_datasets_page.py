"""The Datasets page driven through its widgets; results checked in the database.

The upload and the bundled-sample paths share `import_panel(filename, data)`. Most tests
pick a bundled sample (AppTest had no file_uploader support before 1.5x); the bad-file
test also uploads bytes through `st.file_uploader`, which AppTest 1.67 can drive.
"""
from __future__ import annotations

import csv
import io
import json

import pytest

from tests.pages.helpers import SAMPLES, shown


def _open(at):
    """The Datasets page through the router (Home is the default page)."""
    at.run()
    return at.switch_page("pages/datasets.py").run()


def _pick_sample(at, name: str):
    _open(at)
    at.radio(key="datasets.source").set_value("Bundled sample").run()
    at.selectbox(key="datasets.sample").set_value(name).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _stored(settings):
    from evalcore.dataset import list_datasets
    from evalcore.store.db import get_engine

    return {d.name: d for d in list_datasets(get_engine(settings.db_url))}


def test_importing_a_bundled_sample_stores_it(app, settings):
    _pick_sample(app, "math_zh_gbk.csv")
    assert any("math23k" in s.value for s in app.success)  # the detected format is shown
    app.button(key="datasets.import").click().run()
    assert not app.exception

    stored = _stored(settings)
    assert list(stored) == ["math_zh_gbk"]
    text = (SAMPLES / "math_zh_gbk.csv").read_bytes().decode("gb18030")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert stored["math_zh_gbk"].item_count == len(rows)
    assert stored["math_zh_gbk"].format == "math23k"
    assert any("Imported 'math_zh_gbk'" in s.value for s in app.success)
    table = next(d.value for d in app.dataframe if "source file" in d.value.columns)
    assert table["name"].tolist() == ["math_zh_gbk"]
    assert table["items"].tolist() == [len(rows)]


def test_preview_shows_the_first_items(app):
    _pick_sample(app, "math_zh_gbk.csv")
    text = (SAMPLES / "math_zh_gbk.csv").read_bytes().decode("gb18030")
    rows = list(csv.DictReader(io.StringIO(text)))
    preview = app.dataframe[0].value
    assert preview["question"].tolist() == [r["question"] for r in rows[:len(preview)]]
    assert preview["reference"].tolist() == [r["answer"] for r in rows[:len(preview)]]
    assert set(preview["task_type"]) == {"math"}
    # numbered as everywhere else: Q1 is the file's first question (was idx 0)
    assert preview["Q"].tolist() == [f"Q{n}" for n in range(1, len(preview) + 1)]
    assert "idx" not in preview.columns


def test_same_file_twice_warns_and_can_be_imported_anyway(app, settings):
    _pick_sample(app, "math_zh_gbk.csv")
    app.button(key="datasets.import").click().run()
    app.button(key="datasets.import").click().run()
    assert any("already imported" in w.value for w in app.warning)
    assert list(_stored(settings)) == ["math_zh_gbk"]

    app.text_input(key="datasets.name").set_value("math_copy")
    app.button(key="datasets.import_anyway").click().run()
    assert not app.exception
    assert sorted(_stored(settings)) == ["math_copy", "math_zh_gbk"]
    assert not any("already imported" in w.value for w in app.warning)


def test_custom_columns_are_mapped_through_the_page(app, settings):
    """No column name is recognised: the user maps them; the stored items follow the mapping."""
    import openpyxl

    from evalcore.dataset import load_questions
    from evalcore.store.db import get_engine

    _pick_sample(app, "quiz_custom_columns.xlsx")
    assert any("No known format" in i.value for i in app.info)
    mapping = json.loads((SAMPLES / "quiz_custom_columns.mapping.json").read_text())
    app.multiselect(key="datasets.map.question").set_value([mapping["question"]])
    app.selectbox(key="datasets.map.reference").set_value(mapping["reference"])
    app.multiselect(key="datasets.map.choices").set_value(mapping["choices"])
    app.selectbox(key="datasets.map.task_type").set_value(mapping["task_type"]).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    app.button(key="datasets.import").click().run()
    assert not app.exception

    dataset = _stored(settings)["quiz_custom_columns"]
    assert dataset.format == "mapped" and dataset.task_type == "choice"
    questions = load_questions(get_engine(settings.db_url), dataset.id)
    sheet = openpyxl.load_workbook(SAMPLES / "quiz_custom_columns.xlsx").active
    header, *rows = [["" if v is None else str(v) for v in r]
                     for r in sheet.iter_rows(values_only=True)]
    rows = [dict(zip(header, r, strict=True)) for r in rows if any(r)]
    assert [q.question for q in questions] == [r[mapping["question"]] for r in rows]
    first = rows[0]
    assert questions[0].choices == [first[c] for c in mapping["choices"] if first[c]]


def test_mapping_is_prefilled_from_evalcore_suggestion(app, settings):
    from evalcore.dataset import load_questions, suggest_mapping
    from evalcore.store.db import get_engine

    _pick_sample(app, "mc_en.jsonl")
    records = [json.loads(line) for line in (SAMPLES / "mc_en.jsonl").read_text().splitlines()
               if line.strip()]
    guess = suggest_mapping(list(records[0]))
    assert guess is not None
    assert app.multiselect(key="datasets.map.question").value == guess.question_columns()
    assert app.selectbox(key="datasets.map.reference").value == guess.reference
    assert app.selectbox(key="datasets.map.task_type").value == guess.task_type

    app.button(key="datasets.import").click().run()
    dataset = _stored(settings)["mc_en"]
    questions = load_questions(get_engine(settings.db_url), dataset.id)
    assert len(questions) == len(records)
    assert [q.reference for q in questions] == [str("ABCD".index(r["answer"])) for r in records]


def test_bad_bundled_file_shows_an_error_naming_row_and_column(app, settings, tmp_path,
                                                               monkeypatch):
    from pages import _shared

    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "bad_math.csv").write_text(
        "id,question,segmented_text,equation,answer\n1,1+1=?,,,2\n2,2+2=?,,,four\n",
        encoding="utf-8")
    monkeypatch.setattr(_shared, "SAMPLES_DIR", samples)
    _pick_sample(app, "bad_math.csv")
    errors = [e.value for e in app.error]
    assert len(errors) == 1, errors
    assert "row 3" in errors[0] and "'answer'" in errors[0] and "four" in errors[0]
    with pytest.raises(KeyError):
        app.button(key="datasets.import")
    assert _stored(settings) == {}


def test_bad_uploaded_file_shows_an_error(app, settings):
    _open(app)
    app.file_uploader(key="datasets.upload").set_value(
        ("broken.jsonl", b'{"question": "ok?", "answer": "yes"}\n{"question": oops}\n',
         "application/jsonl")).run()
    assert not app.exception
    errors = [e.value for e in app.error]
    assert len(errors) == 1 and "broken.jsonl line 2" in errors[0], errors
    assert _stored(settings) == {}


def test_delete_asks_for_confirmation(app, settings):
    _pick_sample(app, "math_zh_gbk.csv")
    app.button(key="datasets.import").click().run()
    app.selectbox(key="datasets.delete_target").set_value("math_zh_gbk").run()
    app.button(key="datasets.delete").click().run()
    assert any("Delete dataset 'math_zh_gbk'" in w.value for w in app.warning)
    app.button(key="datasets.delete_cancel").click().run()
    assert list(_stored(settings)) == ["math_zh_gbk"]

    app.selectbox(key="datasets.delete_target").set_value("math_zh_gbk").run()
    app.button(key="datasets.delete").click().run()
    app.button(key="datasets.delete_confirm").click().run()
    assert not app.exception
    assert _stored(settings) == {}
    assert any("No datasets yet" in i.value for i in app.info)


@pytest.mark.parametrize("content, certain", [
    ("问题,答案\n一周有几天？,7\n", True),
    ("q,a\nHow many days has a week?,7\n", True),
    ("question,prompt,answer\na,b,c\n", False),
])
def test_question_answer_files_show_the_guess_and_prefill_it(app, settings, tmp_path,
                                                              monkeypatch, content, certain):
    from pages import _shared

    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "qa.csv").write_text(content, encoding="utf-8")
    monkeypatch.setattr(_shared, "SAMPLES_DIR", samples)
    _pick_sample(app, "qa.csv")
    header = content.splitlines()[0].split(",")
    assert app.multiselect(key="datasets.map.question").value == [header[0]]
    assert app.selectbox(key="datasets.map.reference").value == header[-1]
    if certain:
        assert any(f"columns guessed from their names: question <- '{header[0]}'" in shown(s.value)
                   and "prefilled" in s.value for s in app.success)
    else:
        assert any("could be any of ['question', 'prompt']" in shown(i.value) for i in app.info)
    app.button(key="datasets.import").click().run()
    assert list(_stored(settings)) == ["qa"]


@pytest.mark.parametrize("sample, fmt", [("truthfulqa_mc_task.json", "truthfulqa_mc1"),
                                         ("crows_pairs_en.csv", "crows_pairs")])
def test_the_new_format_samples_are_recognised(app, settings, sample, fmt):
    _pick_sample(app, sample)
    assert any(f"Recognised format **{fmt}**" in s.value for s in app.success)
    app.button(key="datasets.import").click().run()
    assert _stored(settings)[sample.rsplit(".", 1)[0]].format == fmt


def _use_file(app, monkeypatch, tmp_path, name: str, content: str):
    from pages import _shared

    samples = tmp_path / "samples"
    samples.mkdir(exist_ok=True)
    (samples / name).write_text(content, encoding="utf-8")
    monkeypatch.setattr(_shared, "SAMPLES_DIR", samples)
    return _pick_sample(app, name)


def test_no_guess_says_so_instead_of_claiming_a_prefill(app, settings, tmp_path, monkeypatch):
    _use_file(app, monkeypatch, tmp_path, "odd.csv", "x,y\n1,2\n")
    infos = [i.value for i in app.info]
    assert any("nothing could be guessed" in i for i in infos), infos
    assert not any("prefilled" in i for i in infos)


def test_import_anyway_stays_through_a_rename_and_speaks_page_words(app, settings):
    _pick_sample(app, "math_zh_gbk.csv")
    app.button(key="datasets.import").click().run()
    app.button(key="datasets.import").click().run()  # the same content again
    warnings = [w.value for w in app.warning]
    assert any("already imported as dataset 'math_zh_gbk'" in w and "Import anyway" in w
               for w in warnings), warnings
    app.button(key="datasets.import_anyway").click().run()  # the name is still taken
    warnings = [w.value for w in app.warning]
    assert any("A dataset named 'math_zh_gbk' already exists: rename this one" in w
               and "click Import anyway again" in w for w in warnings), warnings
    assert not any("--" in w for w in warnings)  # no CLI flags on a page
    app.text_input(key="datasets.name").set_value("math_copy").run()  # the rename
    app.button(key="datasets.import_anyway").click().run()  # ... the button is still there
    assert not app.exception
    assert sorted(_stored(settings)) == ["math_copy", "math_zh_gbk"]
    assert any("Imported 'math_copy'" in s.value for s in app.success)
    with pytest.raises(KeyError):
        app.button(key="datasets.import_anyway")


def test_a_delete_clears_the_import_messages_about_the_old_dataset(app, settings):
    _pick_sample(app, "math_zh_gbk.csv")
    app.button(key="datasets.import").click().run()
    app.button(key="datasets.import").click().run()
    assert app.button(key="datasets.import_anyway")
    app.selectbox(key="datasets.delete_target").set_value("math_zh_gbk").run()
    app.button(key="datasets.delete").click().run()
    app.button(key="datasets.delete_confirm").click().run()
    assert not app.exception
    assert _stored(settings) == {}
    assert [s.value for s in app.success if "Deleted" in s.value] == [
        "Deleted dataset 'math_zh_gbk'."]
    assert not any("Imported" in s.value for s in app.success)
    assert not any("already" in w.value for w in app.warning)
    with pytest.raises(KeyError):
        app.button(key="datasets.import_anyway")


def test_stored_items_are_browsed_a_page_at_a_time_and_searched(app, settings, tmp_path,
                                                                 monkeypatch):
    content = "q,a\n" + "".join(f"Question {n} about pears,{n}\n" for n in range(1, 121))
    _use_file(app, monkeypatch, tmp_path, "pears.csv", content)
    app.button(key="datasets.import").click().run()
    browse = next(d for d in app.dataframe if "number" in d.value.columns)
    assert browse.value["number"].tolist() == list(range(1, 51))
    assert any("120 items · showing 1-50" in c.value for c in app.caption)
    page = next(n for n in app.number_input if n.key.startswith("datasets.browse_page."))
    page.set_value(3).run()
    browse = next(d for d in app.dataframe if "number" in d.value.columns)
    assert browse.value["number"].tolist() == list(range(101, 121))
    app.text_input(key="datasets.browse_search").set_value("question 11").run()
    browse = next(d for d in app.dataframe if "number" in d.value.columns)
    assert browse.value["number"].tolist() == [11, *range(110, 120)]
    assert any("11 of 120 items match · showing 1-11" in c.value for c in app.caption)
    assert browse.value["Q"].tolist() == ["Q11", *(f"Q{n}" for n in range(110, 120))]
    app.text_input(key="datasets.browse_search").set_value("Q7").run()  # the label finds it
    browse = next(d for d in app.dataframe if "number" in d.value.columns)
    assert browse.value["Q"].tolist() == ["Q7"]
    app.text_input(key="datasets.browse_search").set_value("plums").run()
    assert any("No item of 'pears' contains 'plums'" in i.value for i in app.info)


def test_a_dataset_used_by_runs_can_be_deleted_with_them_from_the_page(app, settings):
    from evalcore.store import queries
    from evalcore.store.db import get_engine

    _pick_sample(app, "math_zh_gbk.csv")
    app.button(key="datasets.import").click().run()
    engine = get_engine(settings.db_url)
    dataset = _stored(settings)["math_zh_gbk"]
    runs = [queries.create_run(engine, kind="stability", model="m", dataset_id=dataset.id,
                               status="done").id for _ in range(3)]
    app.selectbox(key="datasets.delete_target").set_value("math_zh_gbk").run()
    app.button(key="datasets.delete").click().run()
    app.button(key="datasets.delete_confirm").click().run()
    assert not app.exception
    assert "math_zh_gbk" in _stored(settings)
    assert any("is used by 3 run(s)" in w.value for w in app.warning)
    listed = next(d for d in app.dataframe if "run" in d.value.columns)
    assert listed.value["run"].tolist() == runs
    assert any(link.proto.page.endswith("results.py") or "Results" in link.proto.label
               for link in app.get("page_link"))
    app.button(key="datasets.delete_with_runs").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert _stored(settings) == {} and queries.list_runs(engine) == []
    assert any("Deleted 3 run(s)" in s.value for s in app.success)


def test_column_names_are_shown_as_typed_not_as_markdown(app, settings, tmp_path, monkeypatch):
    """A column `**total**` or `$x$` must not turn bold or into LaTeX in the messages."""
    _use_file(app, monkeypatch, tmp_path, "marks.csv", "**total**,$x$,:red[a],`c`\n1,2,3,4\n")
    infos = [i.value for i in app.info]
    text = next(i for i in infos if "No known format has these columns" in i)
    assert "(**total**, $x$, :red[a], `c`)" in shown(text), text  # reads back as typed
    assert "**total**" not in text and ":red[a]" not in text  # ... and is no markup


def test_browse_shows_the_dataset_just_imported(app, settings):
    """Walked in a browser: after importing CODAH (500 items) Browse still showed the
    demo's 12 reviews, the first dataset stored; it now shows the one just imported."""
    _pick_sample(app, "math_zh_gbk.csv")
    app.button(key="datasets.import").click().run()
    at = _pick_sample(app, "mc_en.jsonl")
    at.text_input(key="datasets.name").set_value("second").run()
    at.button(key="datasets.import").click().run()
    assert not at.exception, [e.value for e in at.exception]
    stored = _stored(settings)
    assert at.selectbox(key="datasets.browse").value == stored["second"].id


def test_a_workbook_with_several_sheets_asks_which_one(app, settings, tmp_path):
    """Sheets after the first were ignored without a word."""
    from tests.dataset.workbooks import workbook

    path = workbook(tmp_path / "two.xlsx", {"easy": [["question", "answer"], ["1+1", 2]],
                                            "hard": [["question", "answer"], ["2+2", 4],
                                                     ["3+3", 6]]})
    _open(app)
    app.file_uploader(key="datasets.upload").set_value(
        ("two.xlsx", path.read_bytes(), "application/octet-stream")).run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    box = app.selectbox(key="datasets.sheet")
    assert box.options == ["easy", "hard"] and box.value is None
    assert any("2 sheets with data" in i.value for i in app.info)
    box.set_value("hard").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    app.button(key="datasets.import").click().run()
    assert _stored(settings)["two"].item_count == 2
    assert app.selectbox(key="datasets.sheet").value == "hard"  # the choice stays shown


def test_numeric_answers_prefill_math_and_the_preview_says_it_was_guessed(app, settings,
                                                                           tmp_path, monkeypatch):
    content = "question,target\nWhat is 45 times 2?,90\nHow many days has a week?,7\n"
    _use_file(app, monkeypatch, tmp_path, "plain.csv", content)
    assert app.selectbox(key="datasets.map.task_type").value == "math"
    assert any("Task type **math** guessed from the answers: all numbers (2 answers looked "
               "at)" in c.value for c in app.caption), [c.value for c in app.caption]
    app.button(key="datasets.import").click().run()
    assert _stored(settings)["plain"].task_type == "math"


def test_a_few_shot_prompt_file_is_named_as_one(app, settings):
    prompts = {"codah": "Learn from the following sample.\nThe question is:"}
    _open(app)
    app.file_uploader(key="datasets.upload").set_value(
        ("FSamples.json", json.dumps(prompts).encode(), "application/json")).run()
    errors = [e.value for e in app.error]
    assert any("few-shot prompt file" in e for e in errors), errors
    assert _stored(settings) == {}
