"""The start forms say what the run about to start can detect, from the dataset's newest
finished run of the kind, and say why not when there is none; in both cases as the same
one caption in the same place, so the form's element tree keeps its shape when the
dataset changes (a line that came and went left a stale start button beside the new one
in the browser while the page reran)."""
from __future__ import annotations

from pathlib import Path

from tests.fakes.stored_runs import seed_dataset, seed_run
from tests.pages.helpers import run_page

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "stability.py")


def _shape(node):
    """Element types of a block, nested as drawn (values left out)."""
    kids = getattr(node, "children", None)
    if kids is None:
        return node.type
    return (node.type, [_shape(kid) for kid in kids.values()])


def _form(at):
    return next(e for e in at.expander if e.label == "Start a new run")


def _power(at) -> list[str]:
    return [str(c.value).replace("\\", "") for c in _form(at).caption  # markdown escapes
            if "detect" in str(c.value) or "No finished stability run" in str(c.value)]


def test_the_detectable_effect_line_keeps_the_forms_shape(page_env, engine) -> None:
    done = seed_dataset(engine, "mde", [f"q{i}?" for i in range(8)])
    run = seed_run(engine, done, {i: [1, i % 2, 1, 0] for i in range(8)}, 4)
    fresh = seed_dataset(engine, "fresh", [f"p{i}?" for i in range(8)])
    at = run_page(PAGE)
    at.selectbox(key="stability.dataset").set_value(done).run()
    with_run = _power(at)
    assert len(with_run) == 1 and f"from the spread of run #{run}" in with_run[0], with_run
    assert "this run can detect a change of about" in with_run[0]
    shape = _shape(_form(at))
    at.selectbox(key="stability.dataset").set_value(fresh).run()
    assert not at.exception
    assert _power(at) == [("No finished stability run of this dataset yet: the detectable "
                           "effect is shown after the first run.")]
    assert _shape(_form(at)) == shape  # the same elements in the same places
    at.selectbox(key="stability.dataset").set_value(done).run()
    assert _shape(_form(at)) == shape and _power(at) == with_run
