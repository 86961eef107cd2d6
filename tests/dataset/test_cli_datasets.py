"""`python -m evalcore datasets ...` through evalcore.cli.main."""
from __future__ import annotations

import json
from pathlib import Path



SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"


def test_import_list_show_delete(run) -> None:
    code, out, _ = run("import", str(SAMPLES / "math_zh_gbk.csv"), "--json")
    assert code == 0
    info = json.loads(out)
    assert (info["name"], info["format"], info["items"]) == ("math_zh_gbk", "math23k", 10)

    code, out, err = run("import", str(SAMPLES / "math_zh_gbk.csv"))
    assert code == 2 and "already imported as dataset 'math_zh_gbk'" in err

    mapping = SAMPLES / "quiz_custom_columns.mapping.json"
    code, out, _ = run("import", str(SAMPLES / "quiz_custom_columns.xlsx"), "--name", "quiz",
                       "--mapping", str(mapping))
    assert code == 0 and "imported 'quiz'" in out

    code, out, _ = run("list", "--json")
    listed = json.loads(out)
    assert [d["name"] for d in listed] == ["math_zh_gbk", "quiz"]
    wanted = {"name", "format", "task_type", "items", "language", "id", "created_at"}
    assert wanted <= set(listed[0])

    code, out, _ = run("show", "quiz", "--limit", "2", "--json")
    shown = json.loads(out)
    assert code == 0 and len(shown["questions"]) == 2 and shown["items"] == 8

    code, out, _ = run("show", "math_zh_gbk", "--limit", "1")
    assert code == 0 and "reference: 6" in out

    assert run("delete", "quiz")[0] == 0
    code, out, _ = run("list")
    assert "math_zh_gbk" in out and "quiz" not in out


def test_errors_exit_2_with_a_message(run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("Summary,Sentiment,Label\ngood,positive,1\nhmm,,maybe\n", encoding="utf-8")
    code, _, err = run("import", str(bad))
    assert code == 2 and "bad.csv row 3, column 'Label': 'maybe'" in err
    code, _, err = run("show", "missing")
    assert code == 2 and "no dataset 'missing'" in err


def test_formats(run) -> None:
    code, out, _ = run("formats", "--json")
    names = {f["name"] for f in json.loads(out)}
    assert code == 0 and {"codah", "bbq", "cbbq", "math23k_attacked"} <= names


def test_import_a_question_answer_csv_says_which_columns_it_used(run, tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text("问题,答案\n一周有几天？,7\n一年有几个月？,12\n", encoding="utf-8")
    code, out, _ = run("import", str(path))
    assert code == 0 and "imported 'qa'" in out and "2 items" in out
    assert "columns guessed from their names: question <- '问题', reference <- '答案'" in out
    code, out, _ = run("show", "qa", "--json")
    assert json.loads(out)["guessed_mapping"].startswith("question <- '问题'")


def test_import_an_ambiguous_file_lists_the_candidates(run, tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text("question,prompt,answer\na,b,c\n", encoding="utf-8")
    code, _, err = run("import", str(path))
    assert code == 2 and "the question could be any of ['question', 'prompt']" in err


def test_delete_refuses_while_runs_use_it_unless_with_runs(run, engine) -> None:
    from tests.fakes.stored_runs import seed_dataset, seed_run

    dataset_id = seed_dataset(engine, "used", ["1 + 1?", "2 + 2?"], ["2", "4"])
    run_id = seed_run(engine, dataset_id, {0: [1, 0], 1: [1, 1]}, rounds=2)
    code, _, err = run("delete", "used")
    assert code == 2 and "run" in err
    code, out, _ = run("delete", "used", "--with-runs")
    assert code == 0 and f"#{run_id}" in out
    assert "used" not in run("list")[1]


def test_a_wrong_mapping_field_is_one_line_naming_it(run, tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text("question,answer\n1+1?,2\n", encoding="utf-8")
    code, out, err = run("import", str(path), "--mapping",
                         '{"question": "question", "reference": "answer", "task_type": "essay"}')
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("error: column mapping: task_type: must be one of 'choice', ")
    assert "essay" not in err and "Traceback" not in err
