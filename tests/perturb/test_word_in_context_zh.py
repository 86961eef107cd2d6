"""Chinese swaps a native reader rejects in their sentence, one sentence of our own per
class of the blind audit: literary or stilted (倘若, 尚有, 已经知道, 算出), another sense or
pairing (行驶 -> 行进, 出发 -> 启程 for a vehicle, 比赛 -> 竞赛, 要使 -> 需要使), and the
dictionary's swaps, which no check can judge in a Chinese sentence (睡觉 -> 就寝,
自行车 -> 脚踏车): with the in-context check on, only reviewed swaps are made."""
from __future__ import annotations

import random

import pytest

from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.swaps import Style, word_attack
from evalcore.perturb.tokens import segment

pytestmark = pytest.mark.usefixtures("zh_synonyms_ready")

SEEDS = range(6)

CASES = [
    ("已知一个长方形的长是8米，宽是5米，求它的面积。", "已知", "已经知道"),
    ("已知一个长方形的长是8米，宽是5米，求它的面积。", "求", "算出"),
    ("如果每个盒子装6个球，还有4个球没装，一共有多少个球？", "如果", "倘若"),
    ("如果每个盒子装6个球，还有4个球没装，一共有多少个球？", "还有", "尚有"),
    ("一辆汽车早上从车站出发，行驶了3小时到达山脚。", "出发", "启程"),
    ("一辆汽车早上从车站出发，行驶了3小时到达山脚。", "行驶", "行进"),
    ("学校举行乒乓球比赛，每个班的学生都参加了。", "比赛", "竞赛"),
    ("要使这个数能被9整除，个位上至少要填几？", "要", "需要"),
    ("要使这个数能被9整除，个位上至少要填几？", "至少", "最少"),
    ("宿舍的同学们每晚十点睡觉，早上六点半起床。", "睡觉", "就寝"),
    ("哥哥每天骑自行车上学，路上要用20分钟。", "自行车", "脚踏车"),
]


def _pairs(text: str, seed: int, style: Style | None = None) -> list[tuple[str, str]]:
    _, pairs, _ = word_attack(segment(text, "zh"), "zh", random.Random(seed),
                              replacements=20, style=style or Style())
    return pairs


def _reviewed() -> set[tuple[str, str]]:
    """(word, swap) of every entry of the reviewed Chinese table (tags dropped)."""
    table = load_lexicon().zh_paraphrases
    return {(key.split("/")[0], swap) for key, swaps in table.items() for swap in swaps}


@pytest.mark.parametrize(("text", "word", "swap"), CASES)
def test_the_swap_a_reader_rejected_is_never_made(text: str, word: str, swap: str) -> None:
    for seed in SEEDS:
        assert (word, swap) not in _pairs(text, seed), seed


def test_with_the_check_on_every_chinese_swap_is_a_reviewed_one() -> None:
    reviewed = _reviewed()
    made = {pair for text, _, _ in CASES for seed in SEEDS for pair in _pairs(text, seed)}
    assert made, "no swap at all: the sentences no longer exercise the attack"
    assert made <= reviewed, made - reviewed


def test_with_the_check_off_the_dictionary_comes_back() -> None:
    reviewed = _reviewed()
    off = Style(fluency=False)
    made = {pair for text, _, _ in CASES for seed in SEEDS for pair in _pairs(text, seed, off)}
    assert made - reviewed


def test_no_rejected_pair_is_still_in_the_table() -> None:
    kept = _reviewed() & load_lexicon().zh_avoid
    assert not kept, kept
