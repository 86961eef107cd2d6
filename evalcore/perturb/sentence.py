"""Sentence-level attack: back-translation through a pivot language.

Two translators: "google" (deep-translator's GoogleTranslator, an online service, run in a
thread under a timeout: this machine cannot reach it, and it must fail fast with a clear
message) and "llm:MODEL" (a model from models.toml through evalcore.providers, e.g. the
offline `local` model). A failed translation raises `TranslationError`; the attack turns
it into the original text flagged "translation_failed".
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evalcore.errors import EvalcoreError
from evalcore.perturb.degenerate import clean_translation
from evalcore.providers.base import ChatRequest
from evalcore.providers.client import get_client
from evalcore.providers.registry import get_model

if TYPE_CHECKING:
    from evalcore.providers.base import ModelConfig

LANGUAGE_NAMES = {"zh": "Chinese", "en": "English", "ja": "Japanese", "fr": "French",
                  "de": "German", "es": "Spanish", "ko": "Korean", "ru": "Russian"}
"""Pivot languages the LLM prompt can name."""
_GOOGLE_CODES = {"zh": "zh-CN"}
DEFAULT_GOOGLE_TIMEOUT = 10.0
"""Seconds one online translation may take before it counts as failed."""
DEFAULT_PIVOT = {"zh": "en", "en": "zh"}
"""Pivot used when params give none: the other language of the pair we evaluate."""
TRANSLATE_PROMPT = (
    "Translate the following {source} text into {target}. Keep every number, name and "
    "option label exactly as written. Reply with the translation only.\n\n{text}")


class TranslationError(EvalcoreError):
    """A translation could not be made (service unreachable, timeout, empty reply)."""


@runtime_checkable
class Translator(Protocol):
    """Anything that translates one text; `name` goes into the attack's details."""

    name: str

    async def translate(self, text: str, source: str, target: str) -> str: ...


class GoogleTranslator:
    """deep-translator's GoogleTranslator under a timeout.

    deep-translator calls `requests.get` with no timeout, so the call runs in a daemon
    thread and the wait is bounded here. Not `asyncio.to_thread`: `asyncio.run` joins the
    default executor on exit and would hang on a dead connection; a daemon thread stuck
    there is left to the OS (it holds no lock and writes nothing).
    """

    name = "google"

    def __init__(self, *, timeout: float = DEFAULT_GOOGLE_TIMEOUT,
                 base_url: str | None = None) -> None:
        self.timeout = timeout
        self.base_url = base_url
        """Override of the service URL (tests point it at a local server)."""

    def _translate_sync(self, text: str, source: str, target: str) -> str:
        from deep_translator import GoogleTranslator as _Google

        client = _Google(source=_GOOGLE_CODES.get(source, source),
                         target=_GOOGLE_CODES.get(target, target))
        if self.base_url:
            client._base_url = self.base_url
        return client.translate(text)

    async def translate(self, text: str, source: str, target: str) -> str:
        try:
            result = await asyncio.wait_for(
                _in_daemon_thread(self._translate_sync, text, source, target), self.timeout)
        except TimeoutError:
            raise TranslationError(
                f"Google Translate did not answer within {self.timeout:g}s ({source}->"
                f"{target}); it needs internet access: use an LLM translator "
                f"(e.g. 'llm:local') or raise the timeout") from None
        except Exception as exc:  # deep-translator raises requests and its own errors  # noqa: BLE001
            raise TranslationError(
                f"Google Translate failed ({source}->{target}): {type(exc).__name__}: "
                f"{str(exc)[:200]}; it needs internet access: use an LLM translator "
                f"(e.g. 'llm:local') instead") from None
        if not result or not str(result).strip():
            raise TranslationError(f"Google Translate returned nothing ({source}->{target})")
        return str(result).strip()


def _in_daemon_thread(fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run `fn` in a daemon thread; the future resolves on the calling loop."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, exc: BaseException | None) -> None:
        if future.done():
            return  # the waiter gave up (timeout)
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)

    def work() -> None:
        try:
            outcome: tuple[Any, BaseException | None] = (fn(*args), None)
        except Exception as exc:  # handed to the awaiting coroutine  # noqa: BLE001
            outcome = (None, exc)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:
            pass  # the loop is closed: nobody waits any more

    threading.Thread(target=work, name="translate", daemon=True).start()
    return future


class LLMTranslator:
    """Translation by a chat model from models.toml (deterministic: temperature 0)."""

    def __init__(self, config: ModelConfig, *, max_tokens: int | None = None) -> None:
        self.config = config
        self.name = f"llm:{config.name}"
        self.max_tokens = max_tokens

    async def raw_reply(self, text: str, source: str, target: str) -> str:
        """The model's reply as sent (meta text, repeats and all); TranslationError if none."""
        prompt = TRANSLATE_PROMPT.format(source=LANGUAGE_NAMES.get(source, source),
                                         target=LANGUAGE_NAMES.get(target, target), text=text)
        tokens = self.max_tokens or max(64, min(1024, 3 * len(text)))
        reply = await get_client(self.config).chat(
            ChatRequest.user(prompt, temperature=0.0, max_tokens=tokens, seed=0))
        if not reply.ok:
            raise TranslationError(f"model '{self.config.name}' failed to translate "
                                   f"({source}->{target}): {reply.error}")
        return reply.text or ""

    async def translate(self, text: str, source: str, target: str) -> str:
        out = clean_reply(await self.raw_reply(text, source, target))
        if not out:
            raise TranslationError(f"model '{self.config.name}' returned an empty "
                                   f"translation ({source}->{target})")
        return out


def clean_reply(text: str) -> str:
    """The translation alone, without meta labels, notes, quotes or whole-text repeats
    (`degenerate.clean_translation`): what is left of the reply's junk gets flagged."""
    return clean_translation(text)


def make_translator(spec: str, *, models_path: Path | str,
                    timeout: float = DEFAULT_GOOGLE_TIMEOUT) -> Translator:
    """A translator from its spec: "google" or "llm:MODEL" (a name in models.toml)."""
    if spec == "google":
        return GoogleTranslator(timeout=timeout)
    if spec.startswith("llm:") and spec[4:].strip():
        return LLMTranslator(get_model(models_path, spec[4:].strip()))
    raise EvalcoreError(f"unknown translator {spec!r}: use 'google' or 'llm:MODEL' with a "
                        f"model from {models_path}")


async def back_translate(text: str, source: str, pivot: str, translator: Translator) -> str:
    """source -> pivot -> source. Raises TranslationError."""
    if pivot == source:
        raise TranslationError(f"pivot language {pivot!r} is the question's own language")
    middle = await translator.translate(text, source, pivot)
    return await translator.translate(middle, pivot, source)
