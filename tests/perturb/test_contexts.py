"""Context lists of table pairs, the register pairs, and verdicts written back."""
from __future__ import annotations

import tomllib

from evalcore.perturb.contexts import Verdict, context_allows, load_contexts, record_verdicts


def test_a_pair_holds_only_in_its_contexts() -> None:
    assert context_allows("student", "pupil", "The teacher asked each student to read.")
    assert not context_allows("students", "pupils",
                              "The students asked the professor about engineering.")
    assert not context_allows("student", "pupil", "A student wrote a song.")  # no cue
    assert context_allows("happy", "cheerful", "A student wrote a song.")  # no entry


def test_cues_match_any_inflection_and_the_whole_item() -> None:
    assert not context_allows("lives in", "resides in", "Which lions live in prides?")
    assert not context_allows("animals", "beasts", "Penguins are animals.")
    assert context_allows("animals", "beasts", "Wild animals roam the hills.")


def test_register_pairs_are_refused_unless_allowed() -> None:
    text = "I want a new bike."
    assert not context_allows("want", "desire", text)
    assert not context_allows("wanted", "desired", text)
    assert context_allows("want", "desire", text, keep_register=False)
    assert all(len(pair) == 2 for pair in load_contexts()["register"]["pairs"])


def test_verdicts_feed_the_context_lists_with_their_source(tmp_path) -> None:
    path = tmp_path / "contexts.toml"
    path.write_text('[pairs."student/pupil"]\nholds = ["teacher"]\n', encoding="utf-8")
    changed = record_verdicts([
        Verdict("students", "pupils", "professors", kept=False, source="review queue, set 4"),
        Verdict("student", "pupil", "classroom", kept=True, source="blind audit 3"),
        Verdict("doctors", "physicians", "horse", kept=False, source="review queue, set 4"),
    ], path)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    entry = data["pairs"]["student/pupil"]
    assert changed == 3
    assert entry["holds"] == ["teacher", "classroom"] and entry["fails"] == ["professor"]
    assert entry["sources"] == {"professor": "review queue, set 4",
                                "classroom": "blind audit 3"}
    assert data["pairs"]["doctor/physician"]["fails"] == ["horse"]
    # a later verdict on the same cue moves it, and says who moved it
    record_verdicts([Verdict("student", "pupil", "teacher", kept=False, source="audit 4")],
                    path)
    entry = tomllib.loads(path.read_text(encoding="utf-8"))["pairs"]["student/pupil"]
    assert "teacher" not in entry["holds"] and "teacher" in entry["fails"]
    assert entry["sources"]["teacher"] == "audit 4"
    assert load_contexts(path)["pairs"]["student/pupil"]["fails"] == ["professor", "teacher"]
