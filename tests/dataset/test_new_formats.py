"""TruthfulQA's own mc_task.json (MC1 / MC2) and CrowS-Pairs, from the bundled samples."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evalcore.dataset import detect_format, import_dataset, load_questions, parse_dataset
from evalcore.dataset.formats import shuffled_positions
from evalcore.errors import DatasetError

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "samples"
MC_TASK = SAMPLES / "truthfulqa_mc_task.json"
CROWS = SAMPLES / "crows_pairs_en.csv"


def _mc_rows() -> list[dict]:
    return json.loads(MC_TASK.read_text(encoding="utf-8"))


def test_mc_task_imports_as_mc1_by_default() -> None:
    assert detect_format(["question", "mc1_targets", "mc2_targets"]).name == "truthfulqa_mc1"
    assert detect_format(["question", "mc2_targets"]).name == "truthfulqa_mc2"
    parsed = parse_dataset(MC_TASK)
    assert (parsed.format, parsed.task_type, parsed.language) == ("truthfulqa_mc1", "choice", "en")
    for q, row in zip(parsed.questions, _mc_rows(), strict=True):
        targets = row["mc1_targets"]
        assert sorted(q.choices) == sorted(targets)
        assert targets[q.choices[int(q.reference)]] == 1
        positions = q.meta["original_option_index"]
        assert [list(targets)[p] for p in positions] == q.choices
        assert "mc2_targets" not in q.meta
    # the file lists the true answer first; the shown order must not give it away
    assert {q.reference for q in parsed.questions} != {"0"}


def test_mc_task_as_mc2_gives_one_flag_per_answer() -> None:
    parsed = parse_dataset(MC_TASK, format="truthfulqa_mc2")
    assert (parsed.format, parsed.task_type) == ("truthfulqa_mc2", "multi_tf")
    for q, row in zip(parsed.questions, _mc_rows(), strict=True):
        flags = json.loads(q.reference)
        assert dict(zip(q.choices, flags, strict=True)) == row["mc2_targets"]
    assert any(json.loads(q.reference)[0] == 0 for q in parsed.questions)


def test_the_order_is_fixed_by_the_item_not_its_row(tmp_path: Path) -> None:
    rows = _mc_rows()
    path = tmp_path / "mc_task.json"
    path.write_text(json.dumps(rows[::-1]), encoding="utf-8")
    forward = {q.question: q.choices for q in parse_dataset(MC_TASK).questions}
    backward = {q.question: q.choices for q in parse_dataset(path).questions}
    assert forward == backward
    assert shuffled_positions("a question", 5) == shuffled_positions("a question", 5)
    assert sorted(shuffled_positions("a question", 5)) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("targets, message", [
    ({"a": 1, "b": 1}, "exactly one marked 1"),
    ({"a": 1}, "at least 2 answers"),
    ({"a": "yes", "b": 0}, "is not a map of answers to 0/1"),
    (["a", "b"], "is not a map of answers to 0/1"),
])
def test_bad_mc1_targets_name_the_item(tmp_path: Path, targets, message: str) -> None:
    path = tmp_path / "mc_task.json"
    good = {"question": "Fine?", "mc1_targets": {"yes": 1, "no": 0}, "mc2_targets": {"yes": 1}}
    bad = {"question": "Broken?", "mc1_targets": targets, "mc2_targets": {"x": 1}}
    path.write_text(json.dumps([good, bad]), encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"mc_task.json item 2, column 'mc1_targets'.*{message}"):
        parse_dataset(path)


def _crows_rows() -> list[dict[str, str]]:
    with CROWS.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_crows_pairs_sample_is_a_bias_pair_suite(engine) -> None:
    ds = import_dataset(engine, CROWS)
    assert (ds.format, ds.task_type, ds.language, ds.item_count) == (
        "crows_pairs", "bias_pair", "en", 12)
    questions = load_questions(engine, ds.id)
    orders = set()
    for q, row in zip(questions, _crows_rows(), strict=True):
        stereotyped = int(q.reference)
        assert q.meta["stereotyped_option"] == stereotyped
        assert q.choices[stereotyped] == row["sent_more"]
        assert q.choices[1 - stereotyped] == row["sent_less"]
        order = q.meta["option_order"]
        assert [row[name] for name in order] == q.choices
        assert (q.meta["bias_type"], q.meta["stereo_antistereo"]) == (
            row["bias_type"], row["stereo_antistereo"])
        assert q.meta["anon_writer"] == row["anon_writer"]  # other columns are kept
        orders.add(tuple(order))
    assert orders == {("sent_more", "sent_less"), ("sent_less", "sent_more")}


def test_crows_pairs_in_chinese_asks_in_chinese() -> None:
    body = ("sent_more,sent_less,stereo_antistereo,bias_type\n"
            "老人不会用智能手机发消息。,年轻人不会用智能手机发消息。,stereo,age\n")
    parsed = parse_dataset(body.encode("utf-8"), "crows_zh.csv")
    assert parsed.language == "zh" and parsed.questions[0].question.startswith("下面两个句子")


def test_crows_pairs_direction_must_be_known() -> None:
    body = "sent_more,sent_less,stereo_antistereo,bias_type\nA b.,C d.,maybe,age\n"
    with pytest.raises(DatasetError, match=r"row 2, column 'stereo_antistereo': 'maybe'"):
        parse_dataset(body.encode("utf-8"), "crows.csv")


def test_mc1_and_mc2_of_one_file_are_two_datasets(engine) -> None:
    from evalcore.errors import DuplicateDatasetError

    mc1 = import_dataset(engine, MC_TASK)
    mc2 = import_dataset(engine, MC_TASK, name="tqa-mc2", format="truthfulqa_mc2")
    assert (mc1.task_type, mc2.task_type) == ("choice", "multi_tf")
    with pytest.raises(DuplicateDatasetError, match="already imported as dataset 'tqa-mc2'"):
        import_dataset(engine, MC_TASK, name="again", format="truthfulqa_mc2")
