"""bench/word_audit.py scores a reviewer's verdicts with a Wilson interval (#25 item 5)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def audit():
    spec = importlib.util.spec_from_file_location("word_audit", ROOT / "bench" / "word_audit.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _verdicts(keeps: int, n: int) -> list[dict]:
    return [{"id": i + 1, "verdict": "keeps" if i < keeps else "changes"} for i in range(n)]


def test_share_wilson_bound_and_target(audit):
    scipy_stats = pytest.importorskip("scipy.stats")
    result = audit.score(_verdicts(196, 200))
    low, high = scipy_stats.binomtest(196, 200).proportion_ci(method="wilson")
    assert result["share"] == 0.98
    assert result["wilson_95"] == [round(low, 4), round(high, 4)]
    assert result["target_met"] and result["changes_ids"] == [197, 198, 199, 200]
    # 95% of 60 meets the share but not the lower bound: the sample is too small
    assert not audit.score(_verdicts(57, 60))["target_met"]
    assert not audit.score(_verdicts(188, 200))["target_met"]  # 94%


def test_an_unknown_verdict_is_named(audit):
    rows = _verdicts(3, 3) + [{"id": 4, "verdict": "maybe"}]
    with pytest.raises(SystemExit, match=r"verdicts \[4\]"):
        audit.score(rows)


def test_a_fresh_sample_skips_the_items_of_earlier_keys(audit, tmp_path):
    """The fresh sample after a fix must not show the reviewer the items judged before."""
    import json

    en = tmp_path / "word_key_en.json"
    en.write_text(json.dumps([{"id": 1, "set": "CODAH", "row": 12, "pairs": []}]))
    zh = tmp_path / "word_key_zh.json"
    zh.write_text(json.dumps([{"id": 1, "set": "Math23K", "row": 3, "pairs": []}]))
    assert audit.seen_items([en, zh], "en") == {("CODAH", 12)}
    assert audit.seen_items([en, zh], "zh") == {("Math23K", 3)}
    assert audit.seen_items([], "en") == frozenset()


def test_exclude_takes_several_key_files(audit, tmp_path):
    """The third English sample must miss the items of both earlier ones: --exclude takes
    several files after one flag, or one per flag, and a fresh key's name (word_key_en_fresh)
    still says its language."""
    import json

    first = tmp_path / "word_key_en.json"
    first.write_text(json.dumps([{"id": 1, "set": "CODAH", "row": 12, "pairs": []}]))
    fresh = tmp_path / "word_key_en_fresh.json"
    fresh.write_text(json.dumps([{"id": 1, "set": "TruthfulQA", "row": 5, "pairs": []}]))
    args = audit.build_parser().parse_args(
        ["--write", "--exclude", str(first), str(fresh), "--exclude", str(first)])
    assert args.exclude == [first, fresh, first]
    assert audit.seen_items(args.exclude, "en") == {("CODAH", 12), ("TruthfulQA", 5)}
    assert audit.build_parser().parse_args(["--write"]).exclude == []


def test_rows_name_a_set_its_span_and_optionally_another_file(audit, tmp_path):
    rows = audit.parse_rows(["CODAH=301-500", f"Math23K=1-20@{tmp_path / 'm.csv'}"])
    assert rows["CODAH"] == (audit.DATA / "CODAHtest.csv", range(301, 501))
    assert rows["Math23K"] == (tmp_path / "m.csv", range(1, 21))
    for bad in ("CODA=1-5", "CODAH=5", "CODAH=0-5", "CODAH=a-b"):
        with pytest.raises(SystemExit, match="SET=FIRST-LAST"):
            audit.parse_rows([bad])


def test_sets_never_audited_are_drawn_only_when_named(audit):
    rows = audit.parse_rows(["BBQ-Age=1-600", "Translation=1-500"])
    assert rows["BBQ-Age"] == (audit.DATA / "../bbq/Age.sample.jsonl", range(1, 601))
    assert "BBQ-Age" not in audit.SETS["en"] and "Translation" not in audit.SETS["en"]


@pytest.mark.integration
def test_the_blind_file_holds_items_only_from_the_rows_given(audit, wordnet_ready):
    from tests.conftest import require

    require((audit.DATA / "CODAHtest.csv").is_file(), "the shared CODAH file is missing")
    rows = audit.parse_rows(["CODAH=401-420"])
    blind, key = audit.draw("en", 5, 3, 1, rows=rows)
    assert blind and len(blind) == len(key) <= 5
    assert all(set(b) == {"id", "original", "attacked"} for b in blind)  # nothing else
    assert all(k["set"] == "CODAH" and 401 <= k["row"] <= 420 for k in key)
    assert audit.draw("zh", 5, 3, 1, rows=rows) == ([], [])  # no Chinese set named


def test_a_template_written_set_gives_one_item_per_set_of_swaps(audit):
    from types import SimpleNamespace as NS

    same = [("a", "b")]
    pool = [("CBBQ-SES", NS(idx=0), NS(pairs=same)), ("CBBQ-SES", NS(idx=1), NS(pairs=same)),
            ("CBBQ-SES", NS(idx=2), NS(pairs=[("c", "d")])),
            ("Math23K", NS(idx=3), NS(pairs=same)), ("Math23K", NS(idx=4), NS(pairs=same))]
    kept = [q.idx for _, q, _ in audit._one_per_swap_set(pool)]
    assert kept == [0, 2, 3, 4]  # the shared sets' items are distinct questions: all kept
