"""Several files of one benchmark as one dataset: CBBQ's ambiguous + disambiguous files."""
from __future__ import annotations

import json

import pytest

from evalcore.dataset import parse_files, store_parsed, suggested_name
from evalcore.errors import DatasetError


def _files(shared_datasets, category: str) -> list[tuple[str, bytes]]:
    folder = shared_datasets / "cbbq" / category
    return [(p.name, p.read_bytes()) for p in (folder / "ambiguous.csv",
                                               folder / "disambiguous.csv")]


def test_a_category_s_two_files_are_one_suite(shared_datasets) -> None:
    files = _files(shared_datasets, "SES")
    parsed = parse_files(files)
    counts = [len(parse_files([f]).questions) for f in files]
    assert parsed.format == "cbbq" and len(parsed.questions) == sum(counts)
    assert [q.idx for q in parsed.questions] == list(range(sum(counts)))
    assert {q.meta["context_condition"] for q in parsed.questions} == {"ambiguous",
                                                                        "disambiguous"}
    assert parsed.questions[-1].meta["source_file"] == "disambiguous.csv"
    assert parsed.source_file == "ambiguous.csv + disambiguous.csv"
    assert suggested_name(parsed) == "cbbq-SES"


def test_a_run_on_the_suite_has_both_bias_scores_and_the_authors_total(engine,
                                                                       shared_datasets) -> None:
    from evalcore.dataset import load_items
    from evalcore.report.fairness import fairness_report
    from evalcore.store import queries
    from evalcore.store.tables import utcnow

    parsed = parse_files(_files(shared_datasets, "gender"))
    dataset = store_parsed(engine, parsed, name="cbbq-gender")
    items = load_items(engine, dataset.id)[:40] + load_items(engine, dataset.id)[-40:]
    run = queries.create_run(engine, kind="fairness", dataset_id=dataset.id, model="fake",
                             rounds=1, status="done", total=len(items), done=len(items),
                             finished_at=utcnow(), config={"item_ids": [i.id for i in items]})
    queries.record_calls(engine, [
        {"run_id": run.id, "item_id": item.id, "round": 1, "stage": "answer", "model": "fake",
         "prompt": item.question, "answer": "The answer is A"} for item in items])
    bbq = fairness_report(engine, int(run.id), include_rows=False)["bbq"]
    assert bbq["s_amb"] is not None and bbq["s_dis"] is not None
    assert bbq["authors_convention"]["s_total"] is not None


def test_files_of_two_formats_are_refused_naming_the_file(shared_datasets) -> None:
    bbq = json.dumps({"example_id": 1, "context": "c", "question": "q?", "ans0": "a",
                      "ans1": "b", "ans2": "unknown", "label": 2, "answer_info": {},
                      "additional_metadata": {}, "context_condition": "ambig"})
    with pytest.raises(DatasetError, match=r"^bbq\.jsonl: read as bbq"):
        parse_files([_files(shared_datasets, "SES")[0], ("bbq.jsonl", bbq.encode())])
    with pytest.raises(DatasetError, match="no file given"):
        parse_files([])


def test_the_cli_imports_a_category_s_two_files_as_one(run, shared_datasets) -> None:
    folder = shared_datasets / "cbbq" / "SES"
    code, out, err = run("import", str(folder / "ambiguous.csv"),
                         str(folder / "disambiguous.csv"), "--json")
    assert code == 0, err
    info = json.loads(out)
    assert (info["name"], info["format"]) == ("cbbq-SES", "cbbq")
    assert info["source_file"] == "ambiguous.csv + disambiguous.csv"
    code, _, err = run("import", str(folder / "ambiguous.csv"), str(folder / "nope.csv"))
    assert code == 2 and "nope.csv: file not found" in err
