"""Word attacks reach a choice item's options (#25 item 1) and keep meaning (#25 item 5)."""
from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore.dataset.records import Question

NO_SIM = {"similarity": False, "fluency": False}
"""The rules under test alone: the fluency check (test_fluency.py) would hide a broken rule."""


def q(text: str, idx: int = 0, **kw) -> Question:
    return Question(idx=idx, question=text, **kw)


CODAH = q("I am feeling nervous about my midterm tomorrow. I fear that",
          choices=["the professor will delay the midterm.",
                   "I will doodle on my exam and receive points for it.",
                   "my grandpa has diabetes.", "I will fail."],
          reference="3", task_type="choice")


def _attack(question: Question, seed: int, **params):
    from evalcore.perturb import attack_question

    return attack_question(msgspec.structs.replace(question, idx=seed), "word", seed=seed,
                           params={**NO_SIM, **params})


def test_options_are_attacked_in_place_and_the_answer_key_is_kept(wordnet_ready):
    """The method's own file swaps words in CODAH's options; ours do too, options keep
    their order and count, the reference index is untouched, and each pair says where."""
    from evalcore.perturb.lexicon import load_lexicon

    reached = set()
    for seed in range(12):
        result = _attack(CODAH, seed)
        assert len(result.choices) == len(CODAH.choices)
        assert len(result.where) == len(result.pairs)
        for (old, new), where in zip(result.pairs, result.where):
            for place in where.split(", "):
                assert place == "question" or place.startswith("option ")
                if place == "option 3":  # the right option: reviewed swaps only
                    key = old.lower().replace("’", "'")
                    assert key in load_lexicon().en_phrases or any(
                        new in c for (lemma, _), c in load_lexicon().en_paraphrases.items())
                text = result.attacked if place == "question" else result.choices[int(place[7:])]
                assert new in text
            reached |= {w for w in where.split(", ") if w != "question"}
        assert "unchanged" not in result.flags or result.choices == CODAH.choices
    assert reached, "no option was ever attacked"


def test_the_right_option_takes_no_dictionary_synonym(wordnet_ready):
    """"I will fail." -> "I will miscarry" (the method's file): WordNet may reach a
    distractor, never the right option."""
    from evalcore.perturb.swaps import Style, Text, attack_texts
    from evalcore.perturb.tokens import segment

    text = "The story was about a strange town."  # story -> narrative: WordNet
    kinds = {True: set(), False: set()}
    for strict in (True, False):
        for seed in range(10):
            _, _, details = attack_texts([Text(segment(text, "en"), "option 0", strict)],
                                         "en", random.Random(seed), replacements=3,
                                         style=Style(fluency=False))
            kinds[strict] |= {d.get("sense", d["pos"]) for d in details["replacements"]}
    assert kinds[True] <= {"table", "phrase"}
    assert kinds[False] - {"table", "phrase"}, kinds  # WordNet did reach the distractor


def test_a_question_with_glued_options_keeps_its_options():
    from evalcore.perturb.attack import attacks_options

    glued = q("Which is right? A. yes B. no", choices=["yes", "no"], reference="0",
              task_type="choice")
    assert not attacks_options(glued)
    assert attacks_options(CODAH)
    assert not attacks_options(msgspec.structs.replace(CODAH, task_type="bias_choice"))


@pytest.mark.parametrize("text,word", [
    # the blind audit of 2026-11-26: every occurrence the same way, or none
    ("服装店购进一批衬衫，其中男式衬衫150件，女式衬衫比男式衬衫的(2/5)多20件。购进女式衬衫多少件？",
     "衬衫"),
    ("火车上有乘客320人，到站后下去乘客85人，又上来乘客60人，现在有乘客多少人？", "乘客"),
    ("爸爸今年36岁，比小明大28岁，爸爸多少岁时是小明的3倍？", "爸爸"),
])
def test_a_repeated_chinese_word_is_swapped_everywhere_or_nowhere(text, word, zh_synonyms_ready):
    for seed in range(10):
        result = _attack(q(text, task_type="math"), seed, replacements=4)
        swapped = dict(result.pairs).get(word)
        if swapped is None:
            assert result.attacked.count(word) == text.count(word), result.attacked
        else:
            assert word not in result.attacked.replace(swapped, ""), result.attacked
            assert result.attacked.count(swapped) >= text.count(word)


def test_a_repeated_english_word_is_swapped_in_the_question_and_the_options(wordnet_ready):
    item = q("My teacher is really nice. My teacher",
             choices=["is a kind teacher.", "eats rocks.", "is a teacher of maths."],
             reference="0", task_type="choice")
    for seed in range(10):
        result = _attack(item, seed, replacements=4)
        texts = [result.attacked, *result.choices]
        old = [item.question, *item.choices]
        swapped = dict(result.pairs).get("teacher")
        count = sum(t.split().count("teacher") + t.count("teacher.") for t in old)
        left = sum(t.split().count("teacher") + t.count("teacher.") for t in texts)
        assert left in (0, count) if swapped else left == count, texts


@pytest.mark.parametrize("text,never", [
    ("A statue is sitting in the middle of the park.", "seated"),
    ("The laws require drivers to stop here.", "need"),
    ("This is the biggest lie in history.", "largest"),
    ("The girl is carrying a cat up the stairs.", "transport"),
    ("The child was scared. He hid on top of his desk.", "concealed"),  # needs an object
])
def test_english_swaps_keep_their_sense_in_context(text, never, wordnet_ready):
    """The blind audit's English failures: a wrong sense in context."""
    for seed in range(12):
        result = _attack(q(text), seed, replacements=4)
        assert never not in result.attacked, result.attacked


@pytest.mark.parametrize("text,allowed", [
    ("The old man is sitting on the bench.", "seated"),
    ("The girl is carrying a heavy box up the stairs.", "transport"),
])
def test_the_same_swaps_stay_where_the_sense_fits(text, allowed, wordnet_ready):
    seen = {_attack(q(text), seed, replacements=4, keep_register=False).attacked
            for seed in range(12)}  # carry -> transport moves the register
    assert any(allowed in s for s in seen), seen


@pytest.mark.parametrize("text,never", [
    ("小明看完全书用了5天，平均每天看多少页？", "全图书"),   # 全书 cut as 完全|书
    ("蛋店里有鸡蛋20筐，因供应需要，又运来几筐鸭蛋。", "供应需，"),  # 需要 is a noun here
])
def test_chinese_swaps_never_split_a_word_or_turn_a_noun_into_a_verb(text, never,
                                                                      zh_synonyms_ready):
    for seed in range(12):
        result = _attack(q(text, task_type="math"), seed, replacements=4)
        assert never not in result.attacked, result.attacked


def test_a_noun_use_of_a_verb_is_seen():
    from evalcore.perturb.sense import zh_inside_longer_word, zh_used_as_noun
    from evalcore.perturb.tokens import segment

    tokens = segment("因供应需要，又运来几筐", "zh")
    i = [t.text for t in tokens].index("需要")
    assert zh_used_as_noun(tokens, i)
    tokens = segment("他看完全书用了5天", "zh")
    assert zh_inside_longer_word(tokens, [t.text for t in tokens].index("书"))


_WORDS = st.sampled_from(["I", "will", "fail", "the", "movie", "was", "wonderful", "teacher",
                          "nice", "do", "not", "eat", "3", "apples", "Tom", "is", "sitting",
                          "really", "happy", "big", "house", ".", ",", "can't", "mother"])
_OPTION = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(question=_OPTION, options=st.lists(_OPTION, min_size=2, max_size=5),
       answer=st.integers(0, 4), seed=st.integers(0, 1000))
def test_any_choice_item_keeps_its_options_count_order_numbers_and_names(
        question, options, answer, seed, wordnet_ready):
    """Hostile option texts: whatever is swapped, options stay in place, numbers and
    names stay, and an unchanged option is byte for byte the same."""
    from evalcore.perturb.guard import numbers
    from evalcore.perturb.tokens import entities

    item = q(question, choices=options, reference=str(answer % len(options)),
             task_type="choice")
    result = _attack(item, seed)
    assert len(result.choices) == len(options)
    changed = {int(w[7:]) for where in result.where for w in where.split(", ")
               if w.startswith("option ")}
    for i, (old, new) in enumerate(zip(options, result.choices)):
        if i not in changed:
            assert old == new
        assert numbers(old, "en") == numbers(new, "en")
        assert set(entities(old, "en")) <= set(entities(new, "en"))
    assert not {"number_changed", "entity_changed"} & set(result.flags)


def _codah_csv(path, rows):
    import csv

    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["attribute", "Question prompt", "choice0", "choice1", "choice2",
                         "choice3", "answer"])
        for prompt, choices, answer in rows:
            writer.writerow(["o", prompt, *choices, answer])
    return path


def test_stored_set_review_and_export_carry_the_attacked_options(engine, tmp_path,
                                                                  wordnet_ready):
    """The derived item asks the attacked options; the review sees their diff; the export
    keeps the method's columns and adds attacked_choiceN and synword_where."""
    import csv

    from evalcore.dataset import import_dataset
    from evalcore.perturb.export import write_attack_set_csv
    from evalcore.perturb.review import list_attack_items, option_diffs
    from evalcore.perturb.generate import make_attack_set
    from evalcore.store.db import session_scope
    from evalcore.store.tables import Item

    rows = [(CODAH.question, CODAH.choices, 3)] * 6
    import_dataset(engine, _codah_csv(tmp_path / "codah.csv", rows), name="codah_small")
    attack_set = make_attack_set(engine, dataset="codah_small", level="word", seed=3,
                                 params={"similarity": False})
    items = list_attack_items(engine, int(attack_set.id))
    diffs = option_diffs(engine, items)
    assert diffs, "no option was attacked in 6 items"
    with session_scope(engine, write=False) as session:
        for item in items:
            clean = session.get(Item, item.source_item_id)
            derived = session.get(Item, item.attacked_item_id)
            assert derived.reference == clean.reference
            assert len(derived.choices) == len(clean.choices)
            changed = [i for i, (a, b) in enumerate(zip(clean.choices, derived.choices))
                       if a != b]
            assert [i for i, _, _ in diffs.get(int(item.id), [])] == changed
            places = {w for p in item.pairs if len(p) == 3 for w in p[2].split(", ")}
            assert {f"option {i}" for i in changed} <= places
    path = tmp_path / "out.csv"
    write_attack_set_csv(engine, int(attack_set.id), path)
    with path.open(encoding="utf-8-sig") as fh:
        out = list(csv.DictReader(fh))
    header = list(out[0])
    assert header[:7] == ["attribute", "Question prompt", "choice0", "choice1", "choice2",
                          "choice3", "answer"]
    assert header.index("attacked_question") < header.index("attacked_choice0") \
        < header.index("attack_num") < header.index("synword_pairs") \
        < header.index("synword_where")
    for row, item in zip(out, items):
        assert row["answer"] == "3"
        for i, before, after in diffs.get(int(item.id), []):
            assert row[f"attacked_choice{i}"] == after and row[f"choice{i}"] == before


def test_editing_the_question_keeps_the_option_swaps(engine, tmp_path, wordnet_ready):
    """A reviewer's edit is of the question: the option swaps stay in the pairs, and an
    item whose options changed is not `unchanged` even when the question is restored."""
    from evalcore.dataset import import_dataset
    from evalcore.perturb.review import edit_attack_item, list_attack_items, option_diffs
    from evalcore.perturb.generate import make_attack_set

    rows = [(CODAH.question, CODAH.choices, 3)] * 6
    import_dataset(engine, _codah_csv(tmp_path / "codah.csv", rows), name="codah_edit")
    attack_set = make_attack_set(engine, dataset="codah_edit", level="word", seed=3,
                                 params={"similarity": False})
    items = list_attack_items(engine, int(attack_set.id))
    diffs = option_diffs(engine, items)
    item = next(i for i in items if int(i.id) in diffs)
    option_pairs = [p for p in item.pairs if len(p) == 3 and "option" in p[2]]
    edited = edit_attack_item(engine, int(item.id), CODAH.question, reviewer="ann")
    assert "unchanged" not in edited.flags
    assert sorted(p[:2] for p in option_pairs) == sorted(p[:2] for p in edited.pairs
                                                         if len(p) == 3)


def test_an_edit_keeps_where_each_pair_is_and_may_edit_an_attacked_option(engine, tmp_path,
                                                                          wordnet_ready):
    """Walk 2026-11-27: after an edit the question's pairs lost their `(question)` tag and
    only the question could be edited. Now each pair keeps its places, an attacked option
    is edited like the question (derived item, review log, export), labels and answer key
    stay, and attack_num counts distinct swaps (old -> new), wherever they were made."""
    import csv

    from evalcore.dataset import import_dataset
    from evalcore.perturb.export import write_attack_set_csv
    from evalcore.perturb.generate import make_attack_set
    from evalcore.perturb.review import (
        edit_attack_item,
        list_attack_items,
        option_diffs,
        review_log,
        swaps_line,
    )
    from evalcore.perturb.sets import AttackSetError
    from evalcore.store.db import session_scope
    from evalcore.store.tables import Item

    rows = [(CODAH.question, CODAH.choices, 3)] * 6
    import_dataset(engine, _codah_csv(tmp_path / "codah.csv", rows), name="codah_opts")
    attack_set = make_attack_set(engine, dataset="codah_opts", level="word", seed=3,
                                 params={"similarity": False})
    items = list_attack_items(engine, int(attack_set.id))
    item = next(i for i in items if int(i.id) in option_diffs(engine, items))
    question = CODAH.question.replace("nervous", "anxious")
    options = list(CODAH.choices)
    options[1] = "I will doodle on my test and get points for it."
    options[3] = "I will not pass."
    edited = edit_attack_item(engine, int(item.id), question, reviewer="ann",
                              options=options)
    assert edited.pairs == [["nervous", "anxious", "question"], ["exam", "test", "option 1"],
                            ["receive", "get", "option 1"], ["fail", "not pass", "option 3"]]
    assert edited.attack_num == 4
    assert swaps_line(edited.pairs) == "4 swaps, in the question and 2 options"
    with session_scope(engine, write=False) as session:
        derived = session.get(Item, edited.attacked_item_id)
        clean = session.get(Item, edited.source_item_id)
        assert (derived.choices, derived.reference) == (options, clean.reference)
    assert review_log(engine, int(attack_set.id))[0]["attacked"] == "\n".join(
        [question, f"option B: {options[1]}", f"option D: {options[3]}"])
    out = tmp_path / "out.csv"
    write_attack_set_csv(engine, int(attack_set.id), out)
    with out.open(encoding="utf-8-sig") as fh:
        row = next(r for r in csv.DictReader(fh) if r["attacked_question"] == question)
    assert (row["attacked_choice1"], row["attacked_choice3"]) == (options[1], options[3])
    assert row["attack_num"] == "4" and row["answer"] == "3"

    # the same swap in several places is one swap; a question-only edit keeps the options
    same = [o.replace("I will", "I'll") for o in CODAH.choices]
    edited = edit_attack_item(engine, int(item.id), question, reviewer="ann", options=same)
    assert edited.pairs == [["nervous", "anxious", "question"],
                            ["I will", "I'll", "option 1, option 3"]]
    assert (edited.attack_num, swaps_line(edited.pairs)) == (  # places, as the method's
        3, "2 swaps, in the question and 2 options")
    edited = edit_attack_item(engine, int(item.id), CODAH.question, reviewer="ann")
    assert edited.pairs == [["I will", "I'll", "option 1, option 3"]]
    with pytest.raises(AttackSetError, match="3 options given, the question has 4"):
        edit_attack_item(engine, int(item.id), question, reviewer="ann", options=same[:3])
    with pytest.raises(AttackSetError, match="option C is empty"):
        edit_attack_item(engine, int(item.id), question, reviewer="ann",
                         options=[*same[:2], " ", same[3]])
