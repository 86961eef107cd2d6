"""`attack`, `attacks ...` and `robustness` through evalcore.cli.main."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evalcore import cli
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.perturb.attack_set_helpers import QUESTIONS, fake_engine, write_math_csv  # noqa: F401
from tests.runner.conftest import add_model


@pytest.fixture()
def run(settings, capsys):
    """Call the CLI; return (code, out, err)."""
    def call(*argv: str) -> tuple[int, str, str]:
        code = cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture()
def apples(run, tmp_path: Path) -> str:
    code, _, err = run("datasets", "import", str(write_math_csv(tmp_path / "apples.csv")))
    assert code == 0, err
    return "apples"


def test_attack_review_export(run, apples, fake_engine, tmp_path):
    code, out, err = run("attack", "--dataset", apples, "--level", "word", "--seed", "3",
                         "--json")
    assert code == 0, err
    made = json.loads(out)
    assert (made["items"], made["flagged"]) == (4, 1)
    assert fake_engine[0]["seed"] == 3
    set_id = str(made["id"])

    code, out, _ = run("attack", "--dataset", apples, "--level", "char", "--name", "c1")
    assert code == 0 and "'c1': 4 items, 1 flagged" in out and "number_changed: 1" in out

    code, out, _ = run("attacks", "list", "--json")
    assert [s["name"] for s in json.loads(out)] == ["apples-word-s3", "c1"]

    code, _, err = run("attacks", "approve", set_id)
    assert code == 2 and "--unflagged" in err
    code, out, _ = run("attacks", "approve", set_id, "--unflagged", "--reviewer", "ann")
    assert code == 0 and "approved 3 item(s)" in out and "(1 flagged)" in out

    code, out, _ = run("attacks", "show", set_id, "--flagged", "--json")
    shown = json.loads(out)
    flagged = shown["attack_items"]
    assert len(flagged) == 1 and flagged[0]["status"] == "pending"
    assert flagged[0]["number"] == 3  # the question's number in its dataset, not the item id
    assert shown["review"]["reviewers"] == {"ann": 3}
    code, out, _ = run("attacks", "reject", set_id, "--item", str(flagged[0]["id"]),
                       "--note", "number changed")
    assert code == 0 and "rejected 1" in out
    code, _, err = run("attacks", "reject", "c1", "--item", str(flagged[0]["id"]))
    assert code == 2 and "is not in attack set" in err
    code, out, _ = run("attacks", "show", set_id, "--log", "--limit", "0")
    lines = out.splitlines()
    assert code == 0 and "review log (4 actions, newest first):" in lines
    from evalcore.auth.identity import local_user_name

    # the local identity, as the app records it (was "cli:$USER")
    assert f"item {flagged[0]['id']}: pending -> rejected by {local_user_name()} " in lines[-4]
    assert lines[-4].endswith("(number changed)")
    assert all("pending -> approved by ann (bulk: approve unflagged)" in x for x in lines[-3:])
    code, out, _ = run("attacks", "show", set_id, "--log", "--json")
    assert [e["status"] for e in json.loads(out)["review_log"]] == ["rejected"] + ["approved"] * 3

    path = tmp_path / "export.csv"
    code, out, _ = run("attacks", "export", set_id, "--csv", str(path))
    assert code == 0 and "wrote 4 rows" in out
    rows = list(csv.DictReader(path.read_text(encoding="utf-8-sig").splitlines()))
    assert list(rows[0])[-6:] == ["attacked_question", "attack_num", "synword_pairs",
                                  "similarity", "flags", "review_status"]
    assert [r["review_status"] for r in rows] == ["approved", "approved", "rejected", "approved"]
    assert rows[0]["question"] == QUESTIONS[0][0]

    code, out, _ = run("attacks", "show", "c1")
    assert code == 0 and "original: Tom has 3 apples" in out
    assert "- Q1 (attack item 5) [pending]" in out  # the second set's first question
    assert run("attacks", "delete", "c1")[0] == 0
    code, _, err = run("attacks", "show", "c1")
    assert code == 2 and "no attack set 'c1'" in err


def test_import_command(run, apples, tmp_path):
    attacked = {i: q.replace("How many", "What number of") for i, (q, _) in enumerate(QUESTIONS)}
    path = write_math_csv(tmp_path / "apples_undercharacterattack.csv", attacked=attacked)
    code, out, err = run("attacks", "import", str(path), "--no-similarity", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert (info["level"], info["items"], info["source_dataset"]) == ("char", 4, "apples")
    assert info["params"]["clean_link"] == "matched"
    code, _, err = run("attacks", "import", str(path), "--no-check")
    assert code == 2 and "already imported as attack set" in err


def responder(prompt: str, schema: dict | None) -> str:
    """Right on clean questions; wrong on attacked ones ('What number of')."""
    for question, answer in QUESTIONS:
        if question.split(" How many")[0].split(" How")[0][:20] in prompt:
            return f"The answer is {answer + 1 if 'What number of' in prompt else answer}."
    return "no idea"


def test_robustness_command(run, settings, apples, fake_engine, tmp_path):
    with FaultServer(FaultConfig(responder=responder)) as server:
        add_model(settings, server)
        code, out, _ = run("attack", "--dataset", apples, "--level", "word", "--json")
        set_id = str(json.loads(out)["id"])
        code, _, err = run("robustness", "--attack-set", set_id, "--model", "fake")
        assert code == 2 and "has no approved items" in err
        run("attacks", "approve", set_id, "--unflagged")
        report_path = tmp_path / "robustness.json"
        code, out, err = run("robustness", "--dataset", apples, "--attack-set", set_id,
                             "--model", "fake", "--rounds", "2", "--json", str(report_path))
    assert code == 0, err
    assert "3 clean questions, 3 attacked, 2 round(s)" in out
    assert "word: 3 questions, accuracy 100.0% -> 0.0%, PDR 100.0%" in out
    assert "flips right->wrong 3, wrong->right 0; McNemar p=0.25" in out
    # the paired difference in words (every pair lost everything: no spread, no width)
    assert "Attacked questions score 100.0 points lower, 95% CI 100.0 to 100.0" in out
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["levels"]["word"]["mcnemar"]["p_value"] == pytest.approx(0.25)
    paired = report["levels"]["word"]["intervals"]["paired"]
    assert paired["diff"] == -1.0 and paired["n"] == 3 and paired["moved"] == 1.0
    assert len(report["flips"]["right_to_wrong"]) == 3
    # flipped questions by their label, as on the pages (was "#0", the 0-based index)
    flipped = [ln.split("]")[1].split(":")[0].strip() for ln in out.splitlines()
               if ln.startswith("  [word] ")]
    assert sorted(flipped) == sorted(f"Q{r['item_idx'] + 1}"
                                     for r in report["flips"]["right_to_wrong"]), out


def test_attack_no_similarity_and_resume(run, apples, fake_engine, monkeypatch):
    import evalcore.perturb.generate as generate
    import evalcore.perturb.sets as sets

    code, out, err = run("attack", "--dataset", apples, "--level", "char",
                         "--no-similarity", "--json")
    assert code == 0, err
    assert fake_engine[-1]["params"] == {"similarity": False}
    made = json.loads(out)

    original = generate.generate_attack_items_async

    async def stop_after_one_batch(engine, set_id, **kwargs):
        def progress(done, total):
            if done >= 2:
                raise KeyboardInterrupt
        return await original(engine, set_id, **{**kwargs, "on_progress": progress,
                                                 "batch_size": 2})

    set_id = generate.create_attack_set(cli_engine(), dataset=apples, level="word", name="w")
    monkeypatch.setattr(generate, "generate_attack_items_async", stop_after_one_batch)
    code, _, err = run("attacks", "resume", "w")
    assert code == 130 and "`attacks resume " in err  # Ctrl-C after the first batch
    assert sets.get_attack_set(cli_engine(), "w").item_count == 2
    monkeypatch.setattr(generate, "generate_attack_items_async", original)
    code, out, err = run("attacks", "resume", "w", "--json")
    assert code == 0, err
    assert json.loads(out)["items"] == 4 and made["id"] != set_id


def cli_engine():
    from evalcore.cli.common import engine_and_settings

    return engine_and_settings()[0]


def test_show_prints_the_attacked_options(run, tmp_path):
    """#25: `attacks show` prints each option a word attack changed, as the page does."""
    rows = [["o", "I am feeling nervous about my midterm tomorrow. I fear that",
             "the professor will delay the midterm.",
             "I will doodle on my exam and receive points for it.",
             "my grandpa has diabetes.", "I will fail.", "3"]] * 6
    path = tmp_path / "Tiny_underwordattack.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["attribute", "Question prompt", "choice0", "choice1",
                                   "choice2", "choice3", "answer"], *rows])
    assert run("datasets", "import", str(path), "--name", "codah_cli")[0] == 0
    code, out, err = run("attack", "--dataset", "codah_cli", "--level", "word", "--seed", "3",
                         "--no-similarity", "--json")
    assert code == 0, err
    set_id = str(json.loads(out)["id"])
    code, out, _ = run("attacks", "show", set_id, "--json")
    items = json.loads(out)["attack_items"]
    changed = [o for i in items for o in i["options"]]
    assert changed and all(o["original"] != o["attacked"] for o in changed)
    assert any(i["where"] for i in items)
    code, out, _ = run("attacks", "show", set_id)
    assert code == 0 and f"option {changed[0]['index']}: {changed[0]['original']} -> " in out


def test_attacks_edit_changes_the_question_and_an_option(run, engine, tmp_path):
    """The review card's edits from the CLI: the attacked question and an attacked option
    (labels and answer key unchanged), re-checked, logged, and `show` counts the swaps."""
    from evalcore.store.db import session_scope
    from evalcore.store.tables import Item

    path = tmp_path / "Tiny_underwordattack.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([
            ["attribute", "Question prompt", "choice0", "choice1", "choice2", "choice3",
             "answer", "attacked_question", "attack_num", "synword_pairs"],
            ["o", "I am nervous about the exam. I fear that", "I will fail.", "I will pass.",
             "I will sing.", "I will sleep.", "1", "I am anxious about the exam. I fear that",
             "1", "{'nervous': 'anxious'}"]])
    code, out, err = run("attacks", "import", str(path), "--name", "tiny", "--no-check",
                         "--json")
    assert code == 0, err
    set_id = json.loads(out)["id"]
    code, out, err = run("attacks", "show", str(set_id), "--json")
    item = json.loads(out)["attack_items"][0]
    code, out, err = run("attacks", "edit", str(set_id), "--item", str(item["id"]),
                         "--option", "0=I will flunk.", "--reviewer", "ann")
    assert code == 0, err
    assert "2 swaps, in the question and 1 option" in out and "now pending" in out
    with session_scope(engine, write=False) as session:
        derived = session.get(Item, item["attacked_item_id"])
        assert (derived.choices, derived.reference) == (
            ["I will flunk.", "I will pass.", "I will sing.", "I will sleep."], "1")
    code, out, err = run("attacks", "show", str(set_id), "--log")
    assert "changes 2 (2 swaps, in the question and 1 option)" in out
    assert "[edited] by ann" in out
    code, out, err = run("attacks", "edit", str(set_id), "--item", str(item["id"]),
                         "--option", "first=x")
    assert code == 2 and err.startswith("error: --option 'first=x': write N=TEXT")
    code, out, err = run("attacks", "edit", str(set_id), "--item", str(item["id"]))
    assert code == 2 and "say what to edit" in err


def test_attack_params_are_checked_before_anything_is_queued(run, apples, engine):
    """`--params` with a value the engine cannot use: one line naming key, value and the
    allowed ones, exit 2, no set and no job (it used to fail in the worker)."""
    from evalcore.perturb.sets import list_attack_sets
    from evalcore.store.jobs import list_jobs

    for params, named in (('{"ops": ["explode"]}', 'ops=["explode"]'),
                          ('{"ops": ["insert"], "insertions": 0}', "insertions=0"),
                          ("[1]", "JSON object"), ("{ops", "not valid JSON")):
        code, _, err = run("attack", "--dataset", apples, "--level", "char",
                           "--params", params)
        assert code == 2 and named in err and err.count("\n") == 1, (params, err)
    assert not list_attack_sets(engine) and not list_jobs(engine)


def test_attack_params_reach_the_engine(run, apples, fake_engine):
    code, _, err = run("attack", "--dataset", apples, "--level", "char",
                       "--params", '{"ops": ["swap", "drop"], "insertions": 2}')
    assert code == 0, err
    assert fake_engine[0]["params"]["ops"] == ["swap", "drop"]


def test_attack_word_options_reach_the_engine(run, apples, fake_engine):
    code, _, err = run("attack", "--dataset", apples, "--level", "word", "--any-register",
                       "--no-fluency", "--no-similarity", "--json")
    assert code == 0, err
    assert fake_engine[-1]["params"] == {"similarity": False, "keep_register": False,
                                         "fluency": False}
    code, _, err = run("attack", "--dataset", apples, "--level", "char", "--any-register")
    assert code != 0 and "--level word" in err and "Traceback" not in err


def test_attack_with_a_swap_judge(run, settings, tmp_path):
    """`--swap-judge MODEL`: every swap put to the model; one it refuses is not made; the
    set records the judge. An unknown model is refused before anything is queued."""
    asked: list[str] = []

    def judge(prompt: str, schema: dict | None) -> str:
        asked.append(prompt)
        return "no"

    rows = [("She decided to buy a large car because her family needed more room.", 1),
            ("The student finished the difficult homework before dinner.", 2)]
    code, _, err = run("datasets", "import", str(write_math_csv(tmp_path / "stories.csv",
                                                                  rows=rows)))
    assert code == 0, err
    code, _, err = run("attack", "--dataset", "stories", "--level", "word",
                       "--swap-judge", "nosuch")
    assert code == 2 and "swap_judge" in err and "'nosuch'" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = run("attack", "--dataset", "stories", "--level", "char",
                       "--swap-judge", "fake")
    assert code == 2 and "--swap-judge" in err and "--level word" in err
    with FaultServer(FaultConfig(responder=judge)) as server:
        add_model(settings, server)
        code, out, err = run("attack", "--dataset", "stories", "--level", "word",
                             "--swap-judge", "fake", "--no-similarity", "--json")
    assert code == 0, err
    assert asked  # the word attack had swaps to judge, and every one was refused
    code, out, _ = run("attacks", "show", str(json.loads(out)["id"]), "--json")
    shown = json.loads(out)
    assert shown["params"]["swap_judge"] == "fake"
    assert all(i["pairs"] == [] for i in shown["attack_items"])
