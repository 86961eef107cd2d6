"""Character attack: the edit-count rule, seeds, protected tokens, typos."""
from __future__ import annotations

import random
import re

import pytest

from evalcore.dataset.records import Question
from evalcore.perturb import attack_question, edit_count
from evalcore.perturb.char import char_attack, insertion_gaps
from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.tokens import segment

NO_SIM = {"similarity": False}
ZH = "一个工厂要生产3000个零件，前6天生产了750个，剩下的要在15天内完成，平均每天生产多少个？"
EN = "I am feeling nervous about my midterm tomorrow. I fear that"


def q(text: str, idx: int = 0, **kw) -> Question:
    return Question(idx=idx, question=text, **kw)


@pytest.mark.parametrize("words, edits", [(1, 2), (14, 2), (15, 1), (29, 2), (30, 3), (101, 10)])
def test_edit_count_rule(words, edits):
    assert edit_count(words) == edits


def _noise_count(original: str, attacked: str) -> int:
    """Characters added (insert only): the attacked text minus the original, by length."""
    return len(attacked.replace(" ", "")) - len(original.replace(" ", ""))


def test_english_insertions_follow_the_rule():
    short = q(EN)  # 11 words -> 2
    long = q(" ".join(["word"] * 35) + ".")  # 35 words -> 3
    assert _noise_count(EN, attack_question(short, "char", params=NO_SIM).attacked) == 2
    result = attack_question(long, "char", params=NO_SIM)
    assert result.attack_num == 3 and len(result.attacked.split()) == 35 + 3


def test_chinese_insertions_use_the_noise_list():
    result = attack_question(q(ZH), "char", params=NO_SIM)
    lex = load_lexicon()
    assert result.attack_num == result.details["wanted"] == edit_count(result.details["words"])
    added = [e["noise"] for e in result.details["edits"]]
    assert all(n in lex.zh_noise for n in added)
    assert len(result.attacked) == len(ZH) + len(added)
    assert result.flags == []


def test_seeded_and_independent_of_other_items():
    a = attack_question(q(ZH, idx=7), "char", seed=3, params=NO_SIM)
    b = attack_question(q(ZH, idx=7), "char", seed=3, params=NO_SIM)
    assert a.attacked == b.attacked
    seeds = {attack_question(q(ZH, idx=7), "char", seed=s, params=NO_SIM).attacked
             for s in range(8)}
    assert len(seeds) > 1  # the seed matters
    other_idx = {attack_question(q(ZH, idx=i), "char", seed=3, params=NO_SIM).attacked
                 for i in range(8)}
    assert len(other_idx) > 1  # each item draws its own edits


def test_noise_never_touches_numbers_units_or_operators():
    text = "在一正方形花池的4周栽了44棵柳树，每两棵柳树之间的间隔是20米，9.1/7的商加上3.8*5的积是多少？"
    numbers = re.findall(r"\d+(?:\.\d+)?(?:/\d+)?米?", text)
    for seed in range(30):
        attacked = attack_question(q(text), "char", seed=seed,
                                   params={**NO_SIM, "insertions": 6}).attacked
        for n in numbers:
            assert n in attacked, (n, attacked)
        assert "3.8*5" in attacked and "9.1/7" in attacked


def test_gaps_skip_glued_options():
    text = "Which is red? choice0: the sky choice1: blood choice2: grass"
    tokens = segment(text, "en")
    cut = text.index("choice0")
    gaps = insertion_gaps(tokens, "en")
    offsets = [sum(len(t.text) for t in tokens[:i]) for i in gaps]
    assert offsets and all(o < cut for o in offsets)


def test_typos_only_touch_free_words():
    text = "Alice bought 12 apples and 3 pears in Paris yesterday afternoon."
    for seed in range(20):
        result = attack_question(q(text), "char", seed=seed,
                                 params={**NO_SIM, "ops": ["swap", "drop", "keyboard"],
                                         "insertions": 4})
        for kept in ("Alice", "12", "3", "Paris"):
            assert re.search(rf"\b{kept}\b", result.attacked), result.attacked
        for edit in result.details["edits"]:
            assert edit["before"] != edit["after"]
        assert "number_changed" not in result.flags


def test_keyboard_typo_uses_a_neighbour_key():
    tokens = segment("wonderful", "en")
    _, _, details = char_attack(tokens, "en", random.Random(1), ops=["keyboard"], edits=1)
    (edit,) = details["edits"]
    diff = [(a, b) for a, b in zip(edit["before"], edit["after"]) if a != b]
    rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
    (old, new), = diff
    r_old = next(i for i, r in enumerate(rows) if old in r)
    r_new = next(i for i, r in enumerate(rows) if new in r)
    assert abs(r_old - r_new) <= 1
    assert abs(rows[r_old].index(old) - rows[r_new].index(new)) <= 1


def test_unknown_op_is_an_error():
    from evalcore.errors import EvalcoreError

    with pytest.raises(EvalcoreError, match=r'ops=\["explode"\] is not allowed'):
        attack_question(q(EN), "char", params={**NO_SIM, "ops": ["explode"]})
    with pytest.raises(EvalcoreError, match="known:"):
        attack_question(q(EN), "char", params={"insertionz": 2})


def test_an_attack_result_is_frozen_and_plain_data():
    """Reviewers and stored sets read it; nothing may change it after the guard ran."""
    import json

    import msgspec

    result = attack_question(q(EN), "char", params=NO_SIM)
    with pytest.raises(AttributeError):
        result.attacked = "changed"  # type: ignore[misc]
    data = msgspec.to_builtins(result)
    assert data["attacked"] == result.attacked and data["level"] == "char"
    assert json.loads(json.dumps(data))["details"]["seed"] == 0
