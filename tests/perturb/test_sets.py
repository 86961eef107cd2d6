"""Attack set storage and import: lineage, derived dataset, links to the clean dataset."""
from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import DatasetError
from evalcore.perturb.review import attack_set_info, list_attack_items, review_progress
from evalcore.perturb.generate import make_attack_set
from evalcore.perturb.set_import import import_attack_set
from evalcore.perturb.sets import (
    AttackSetError,
    delete_attack_set,
    get_attack_set,
    list_attack_sets,
)
from tests.conftest import require
from tests.perturb.attack_set_helpers import (  # noqa: F401
    QUESTIONS,
    fake_attack,
    fake_engine,
    math_dataset,
    write_math_csv,
)


def items_of(engine, dataset_id):
    from evalcore.dataset import load_items

    return load_items(engine, dataset_id)


def test_create_stores_lineage_derived_dataset_and_pending_items(engine, math_dataset,
                                                                 fake_engine):
    from evalcore.dataset import get_dataset

    attack_set = make_attack_set(engine, dataset=math_dataset, level="word", seed=7,
                                   params={"min_similarity": 0.6}, created_by="ann")
    assert fake_engine == [{"n": 4, "level": "word", "seed": 7, "params": {"min_similarity": 0.6}}]
    assert (attack_set.name, attack_set.level, attack_set.origin, attack_set.seed,
            attack_set.item_count) == ("apples-word-s7", "word", "generated", 7, 4)
    assert attack_set.params["params"] == {"min_similarity": 0.6}
    assert attack_set.params["resolved"]["min_similarity"] == 0.6  # defaults recorded too
    assert "threshold" in attack_set.params["resolved"]
    source = get_dataset(engine, math_dataset)
    derived = get_dataset(engine, attack_set.dataset_id)
    assert attack_set.source_dataset_id == source.id
    assert derived.format == "math23k_attacked" and derived.item_count == 4
    lineage = derived.meta["lineage"]
    assert (lineage["attack_set"], lineage["source_dataset_id"], lineage["seed"],
            lineage["level"]) == (attack_set.id, source.id, 7, "word")

    clean, attacked = items_of(engine, source.id), items_of(engine, derived.id)
    for c, a in zip(clean, attacked):
        expected = fake_attack(c, "word")
        assert a.question == expected.attacked and a.meta["original_item_id"] == c.id
        assert (a.reference, a.choices, a.task_type, a.idx) == (c.reference, c.choices,
                                                                 c.task_type, c.idx)
    rows = list_attack_items(engine, attack_set.id)
    assert [r.status for r in rows] == ["pending"] * 4
    assert [r.source_item_id for r in rows] == [c.id for c in clean]
    assert [r.attacked_item_id for r in rows] == [a.id for a in attacked]
    assert rows[2].flags == ["number_changed"] and rows[2].attack_num == 2
    assert rows[0].pairs == [["How many", "What number of"]]
    assert rows[1].similarity == pytest.approx(0.94)

    again = make_attack_set(engine, dataset=math_dataset, level="word", seed=7)
    assert again.name == "apples-word-s7-2"
    with pytest.raises(AttackSetError, match="already exists"):
        make_attack_set(engine, dataset=math_dataset, level="word", name=again.name)
    assert [s.id for s in list_attack_sets(engine, math_dataset)] == [attack_set.id, again.id]
    assert get_attack_set(engine, "apples-word-s7").id == attack_set.id
    with pytest.raises(AttackSetError, match="known: .*apples-word-s7"):
        get_attack_set(engine, "nope")
    with pytest.raises(AttackSetError, match="unknown attack level"):
        make_attack_set(engine, dataset=math_dataset, level="paragraph")


def test_limit_and_info(engine, math_dataset, fake_engine):
    attack_set = make_attack_set(engine, dataset=math_dataset, level="char", limit=2)
    info = attack_set_info(engine, attack_set)
    assert (info["items"], info["level"], info["source_dataset"]) == (2, "char", "apples")
    assert info["review"]["total"] == 2 and info["review"]["pending"] == 2


def attacked_file(tmp_path: Path, name="apples_underwordattack.csv", rows=QUESTIONS) -> Path:
    attacked = {i: q.replace("How many", "What number of") for i, (q, _) in enumerate(rows)}
    attacked[1] = attacked[1].replace("10", "12")
    pairs = {i: "{'How many': 'What number of', '?': '?'}" for i in range(len(rows))}
    return write_math_csv(tmp_path / name, rows, attacked=attacked, pairs=pairs)


def test_import_links_to_the_existing_clean_dataset(engine, math_dataset, tmp_path):
    attack_set = import_attack_set(engine, attacked_file(tmp_path), similarity=False)
    assert (attack_set.origin, attack_set.level, attack_set.params["clean_link"]) == (
        "imported", "word", "matched")
    clean = items_of(engine, attack_set.source_dataset_id)
    assert attack_set.source_dataset_id == clean[0].dataset_id
    rows = list_attack_items(engine, attack_set.id)
    assert [r.source_item_id for r in rows] == [c.id for c in clean]
    assert rows[0].pairs == [["How many", "What number of"]]  # the identity pair is dropped
    assert rows[1].flags == ["number_changed"] and rows[0].flags == []
    assert rows[0].similarity is None  # similarity=False: no embeddings
    with pytest.raises(AttackSetError, match="already imported as attack set"):
        import_attack_set(engine, attacked_file(tmp_path), check=False)


def test_import_creates_the_clean_dataset_once(engine, tmp_path):
    from evalcore.dataset import get_dataset

    first = import_attack_set(engine, attacked_file(tmp_path), check=False)
    clean = get_dataset(engine, first.source_dataset_id)
    assert first.params["clean_link"] == "created"
    assert (clean.name, clean.format, clean.item_count) == ("apples_underwordattack-clean",
                                                            "math23k", 4)
    assert [i.question for i in items_of(engine, clean.id)] == [q for q, _ in QUESTIONS]
    assert "attacked_question" not in clean.meta["columns"]
    assert "original_question" not in items_of(engine, clean.id)[0].meta

    second = import_attack_set(engine, attacked_file(tmp_path, "apples_undercharacterattack.csv"),
                               check=False)
    assert second.level == "char" and second.params["clean_link"] == "matched"
    assert second.source_dataset_id == first.source_dataset_id


def test_import_errors_name_the_problem(engine, math_dataset, tmp_path):
    with pytest.raises(AttackSetError, match="not an attacked file"):
        import_attack_set(engine, write_math_csv(tmp_path / "plain.csv"))
    no_level = attacked_file(tmp_path, "apples_attacked.csv")
    with pytest.raises(AttackSetError, match="does not say the attack level"):
        import_attack_set(engine, no_level, check=False)
    assert import_attack_set(engine, no_level, level="sentence", check=False).level == "sentence"

    other = [("A different question with 1 number?", 1)] + QUESTIONS[1:]
    path = attacked_file(tmp_path, "other_underwordattack.csv", rows=other)
    with pytest.raises(AttackSetError, match="row 2 .*is not in dataset 'apples'"):
        import_attack_set(engine, path, source_dataset=math_dataset, check=False)
    with pytest.raises(DatasetError, match="no dataset 'missing'"):
        import_attack_set(engine, path, source_dataset="missing", check=False)


def test_import_is_all_or_nothing(engine, math_dataset, tmp_path, monkeypatch):
    import evalcore.store.attack_sets as queries
    from evalcore.dataset import list_datasets

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(queries, "insert_attack_items", broken)
    with pytest.raises(RuntimeError):
        import_attack_set(engine, attacked_file(tmp_path), check=False)
    assert [d.name for d in list_datasets(engine)] == ["apples"]
    assert list_attack_sets(engine) == []


def test_delete_attack_set(engine, math_dataset, fake_engine):
    from evalcore.dataset import list_datasets

    from evalcore.perturb.review import approve_unflagged, review_log

    attack_set = make_attack_set(engine, dataset=math_dataset, level="word")
    assert approve_unflagged(engine, attack_set.id, reviewer="ann") > 0  # history to delete too
    delete_attack_set(engine, attack_set.id)
    assert list_attack_sets(engine) == [] and len(list_datasets(engine)) == 1
    assert review_log(engine, attack_set.id) == []


def test_shared_math23k_word_attack_imports_with_lineage(engine, shared_datasets):
    from evalcore.dataset import get_dataset, import_dataset

    clean = import_dataset(engine, shared_datasets / "trusted-evaluation" / "Math23Ktest.csv",
                           name="math23k")
    path = shared_datasets / "trusted-evaluation" / "attacked" / "Math23K_underwordattack.csv"
    attack_set = import_attack_set(engine, path, similarity=False)
    assert (attack_set.item_count, attack_set.level, attack_set.source_dataset_id) == (
        500, "word", clean.id)
    assert attack_set.params["source_file"] == "Math23K_underwordattack.csv"
    derived = get_dataset(engine, attack_set.dataset_id)
    assert derived.format == "math23k_attacked"
    assert derived.meta["lineage"]["source_dataset"] == "math23k"
    progress = review_progress(engine, attack_set.id)
    assert progress["total"] == 500 and progress["pending"] == 500
    # the method's naive attacks split numbers ("20,米"): the checks must catch some
    assert progress["flags"].get("number_changed", 0) > 0
    first = list_attack_items(engine, attack_set.id, limit=1)[0]
    assert first.original.startswith("在一正方形花池") and ["多少", "什么"] in first.pairs


def test_real_engine_char_attack(engine, math_dataset):
    import evalcore.perturb as perturb

    require(hasattr(perturb, "attack_questions"), "the perturbation engine is not ready")
    attack_set = make_attack_set(engine, dataset=math_dataset, level="char", seed=1, limit=2)
    rows = list_attack_items(engine, attack_set.id)
    assert len(rows) == 2 and all(r.attacked for r in rows)
    assert all(r.similarity is None or 0 <= r.similarity <= 1.0001 for r in rows)


class Stop(Exception):
    pass


def test_generation_resumes_after_a_stop_with_every_item_once(engine, math_dataset,
                                                              fake_engine):
    from evalcore.dataset import get_dataset
    from evalcore.perturb.generate import create_attack_set, generate_attack_items
    from evalcore.perturb.sets import attack_set_complete

    set_id = create_attack_set(engine, dataset=math_dataset, level="word", seed=2)
    empty = get_attack_set(engine, set_id)
    assert (empty.item_count, empty.params["total"], attack_set_complete(empty)) == (0, 4, False)
    seen: list[tuple[int, int]] = []

    def stop_after_first_batch(done, total):
        seen.append((done, total))
        if done >= 2:
            raise Stop

    with pytest.raises(Stop):
        generate_attack_items(engine, set_id, on_progress=stop_after_first_batch, batch_size=2)
    assert seen == [(0, 4), (2, 4)]
    assert len(list_attack_items(engine, set_id)) == 2
    assert get_attack_set(engine, set_id).item_count == 2

    progress: list[tuple[int, int]] = []
    done = generate_attack_items(engine, set_id, on_progress=lambda d, t: progress.append((d, t)),
                                 batch_size=2)
    assert progress == [(2, 4), (4, 4)]  # the first batch is not attacked again
    assert [c["n"] for c in fake_engine] == [2, 2]
    clean = items_of(engine, done.source_dataset_id)
    rows = list_attack_items(engine, set_id)
    assert sorted(r.source_item_id for r in rows) == [c.id for c in clean]  # each exactly once
    attacked = items_of(engine, done.dataset_id)
    assert [a.question for a in attacked] == [fake_attack(c, "word", 2).attacked for c in clean]
    assert done.item_count == 4 and get_dataset(engine, done.dataset_id).item_count == 4
    assert attack_set_complete(done)
    generate_attack_items(engine, set_id)  # nothing left: no call, no duplicate
    assert len(fake_engine) == 2 and len(list_attack_items(engine, set_id)) == 4


def test_a_fence_that_raises_writes_nothing(engine, math_dataset, fake_engine):
    from evalcore.perturb.generate import create_attack_set, generate_attack_items

    set_id = create_attack_set(engine, dataset=math_dataset, level="char")
    calls = []

    def fence(connection):
        calls.append(connection)
        if len(calls) == 2:
            raise Stop("lease taken over")

    with pytest.raises(Stop):
        generate_attack_items(engine, set_id, fence=fence, batch_size=3)
    assert len(list_attack_items(engine, set_id)) == 3  # first batch kept, second rolled back
    assert get_attack_set(engine, set_id).item_count == 3
    assert hasattr(calls[0], "execute")  # the batch transaction's connection
    generate_attack_items(engine, set_id, batch_size=3)
    assert len(list_attack_items(engine, set_id)) == 4


def test_create_validates_before_storing(engine, math_dataset):
    from evalcore.perturb.generate import create_attack_set

    with pytest.raises(AttackSetError, match="needs a translator"):
        create_attack_set(engine, dataset=math_dataset, level="sentence")
    with pytest.raises(Exception, match="unknown word attack param"):
        create_attack_set(engine, dataset=math_dataset, level="word", params={"nope": 1})
    assert list_attack_sets(engine) == []


def test_an_import_without_a_name_takes_a_free_one(engine, math_dataset, tmp_path):
    """Importing a file again (allow_duplicate) needs no new name from the user."""
    from evalcore.perturb.set_import import import_attack_set
    from tests.perturb.attack_set_helpers import write_math_csv

    path = write_math_csv(tmp_path / "apples_underwordattack.csv", attacked={})
    first = import_attack_set(engine, path, check=False)
    again = import_attack_set(engine, path, check=False, allow_duplicate=True)
    assert (first.name, again.name) == ("apples_underwordattack", "apples_underwordattack-2")
