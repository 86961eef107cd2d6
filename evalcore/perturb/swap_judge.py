"""A swap judged in its sentence by a chat model: meaning kept, natural to a native reader.

The embedded check (fluency.py) is a 135M model's log-probability: blind strict audits
kept about half of the English swaps it let through, and it cannot read Chinese at all
(docs/attacks.md "Swap judge"). A stronger model, any one registered in the models file
(the run's judge model, a local vLLM or Ollama), reads the sentence before and after one
swap and answers yes or no. Its reply is hostile input: `parse_verdict` turns any text
into "yes", "no" or "unreadable", and only "yes" keeps a swap.

The word attack runs in worker threads; the model client lives on the event loop. So a
`SwapJudge` is made on the loop and called from the attack's thread: the thread hands
the calls to the loop (every place of one candidate at once) and waits. Attack threads
take turns (`turn`) except while they wait for verdicts, so the attack's own code runs
one item at a time while several items' calls are in flight.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from evalcore.errors import EvalcoreError
from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.client import get_client
from evalcore.providers.registry import get_model

Verdict = Literal["yes", "no", "unreadable"]
EMBEDDED = "embedded"
"""What an attack set records as its judge when the embedded check made its swaps."""
PROMPT = (
    "One word of a text in {language} was replaced by another. Judge the change as a careful "
    "native {language} speaker would.\n\n"
    "Before: {before}\nAfter: {after}\n\n"
    "Replaced: \"{old}\" -> \"{new}\"\n\n"
    "Does the text after the change mean exactly what it meant before, and does it read "
    "naturally (right sense, collocation, grammar and register)? "
    "Answer with one word: yes or no.")
_LANGUAGE = {"en": "English", "zh": "Chinese"}
MAX_TOKENS = 16
"""A verdict is one word; a little room for a model that repeats the label first."""
_CACHE_SIZE = 100_000
_YES = frozenset(["yes", "y", "true", "是", "对", "可以"])
_NO = frozenset(["no", "n", "false", "否", "不", "不是", "不可以"])
_LABELS = frozenset(["answer", "verdict", "final", "回答", "答案"])
_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_WORDS = re.compile(r"不是|不可以|可以|[a-z]+|[是否对不]")


def parse_verdict(reply: Any) -> Verdict:
    """"yes", "no" or "unreadable" from any reply text (never raises).

    The first word decides ("No, 'permit' is another document"); labels before it
    ("Answer: yes") are skipped. A reply whose first word is neither counts only when it
    names one verdict and never the other; anything else is unreadable."""
    if not isinstance(reply, str):
        return "unreadable"
    words = _WORDS.findall(_THINK.sub(" ", reply).lower())
    while words and words[0] in _LABELS:
        words.pop(0)
    if not words or words[1:2] == ["or"]:  # "yes or no?" repeats the question
        return "unreadable"
    if words[0] in _YES:
        return "yes"
    if words[0] in _NO:
        return "no"
    said = {"yes" for w in words if w in _YES} | {"no" for w in words if w in _NO}
    return said.pop() if len(said) == 1 else "unreadable"


class SwapJudge:
    """One model's verdicts on swaps, cached per (text before, text after)."""

    def __init__(self, config: ModelConfig, loop: asyncio.AbstractEventLoop) -> None:
        self.config = config
        self.name = config.name
        self.loop = loop
        self.turn = threading.Lock()
        """Held by an attack thread while it runs the attack's own code."""
        self._asked: dict[tuple[str, str], concurrent.futures.Future[Verdict]] = {}
        """Verdicts (or calls in flight) by (text before, text after)."""

    async def _ask(self, language: str, old: str, new: str, before: str, after: str
                   ) -> Verdict:
        name = _LANGUAGE.get(language, language)
        prompt = PROMPT.format(language=name, before=before, after=after, old=old, new=new)
        reply = await get_client(self.config).chat(ChatRequest.user(
            prompt, temperature=0.0, max_tokens=MAX_TOKENS, seed=0))
        if not reply.ok:
            raise EvalcoreError(f"swap judge model '{self.name}' failed: {reply.error}; "
                                "the stored batches are kept, resume when it answers")
        return parse_verdict(reply.text)

    def keeps(self, language: str, places: Sequence[tuple[str, str, str, str]]) -> bool:
        """Whether every place (old word, new word, text before, text after) is judged
        "yes". Called from an attack thread holding `turn`, released while it waits; a
        place already asked (or being asked by another item) is not asked again."""
        waits = []
        for old, new, before, after in places:
            key = (before, after)
            if key not in self._asked:
                if len(self._asked) > _CACHE_SIZE:
                    self._asked.clear()
                self._asked[key] = asyncio.run_coroutine_threadsafe(
                    self._ask(language, old, new, before, after), self.loop)
            waits.append(self._asked[key])
        if not all(w.done() for w in waits):
            self.turn.release()
            try:
                concurrent.futures.wait(waits)
            finally:
                self.turn.acquire()
        return all(w.result() == "yes" for w in waits)


def judge_config(name: str, models_path: Path | Any) -> ModelConfig:
    """Model `name` of the models file; an unknown name raises one line naming it and
    the models there."""
    try:
        return get_model(models_path, name)
    except EvalcoreError as exc:
        raise EvalcoreError(f"word attack param swap_judge: {exc}") from None


def make_swap_judge(name: str, models_path: Path | Any) -> SwapJudge:
    """The judge for model `name` of the models file, on the running loop."""
    return SwapJudge(judge_config(name, models_path), asyncio.get_running_loop())


def judge_label(params: dict[str, Any]) -> str | None:
    """Which judge made a word attack's swaps: a model name, "embedded", or None (none)."""
    if params.get("swap_judge"):
        return str(params["swap_judge"])
    return EMBEDDED if params.get("fluency", True) else None
