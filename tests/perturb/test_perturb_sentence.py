"""Sentence attack: back-translation through a fake server, the real local model, and
Google Translate's failure path (offline: it must fail fast with a clear message)."""
from __future__ import annotations

import asyncio
import socket
import threading

import msgspec
import pytest

from evalcore.dataset.records import Question
from evalcore.perturb import (
    GoogleTranslator,
    LLMTranslator,
    TranslationError,
    attack_question,
    attack_questions,
    make_translator,
)
from evalcore.providers.base import ModelConfig
from tests.fakes.fault_server import FaultConfig, FaultServer

ZH = ["一个工厂要生产3000个零件，前6天生产了750个，剩下的要在15天内完成，平均每天生产多少个？",
      "修一段长324米的路，前8小时共修了240米，剩下的每小时修21米，还要几小时才能修完？",
      "鸡蛋有120个，鸭蛋比鸡蛋多(1/6)，请问两种蛋共有几个？"]


def run(questions, level="sentence", **kw):
    """attack_questions on a fresh loop, closing that loop's model clients after."""
    from evalcore.providers.client import run_closing_clients

    return run_closing_clients(attack_questions(questions, level, **kw))


def fake_translate(prompt: str, schema: dict | None) -> str:
    """"Translate" deterministically: into English wraps the text, back unwraps and rewords."""
    text = prompt.split("\n\n", 1)[1]
    if "into English" in prompt:
        return f"Translation: [EN] {text}"
    return text.removeprefix("[EN] ").replace("完成", "完结").replace("请问", "问")


def _config(server: FaultServer, **kw) -> ModelConfig:
    fields = {"concurrency": 4, "timeout": 5.0, "max_retry_wait": 1.0, **kw}
    return ModelConfig(name="fake", kind="openai", base_url=server.openai_url, model="fake",
                       **fields)


def test_back_translation_through_fake_server():
    with FaultServer(FaultConfig(responder=fake_translate)) as server:
        translator = LLMTranslator(_config(server))
        questions = [Question(idx=i, question=t, task_type="math") for i, t in enumerate(ZH)]
        progress: list[tuple[int, int]] = []
        results = run(questions, translator=translator,
                                               on_progress=lambda d, t: progress.append((d, t)))
        assert server.stats.requests == 2 * len(ZH)
    assert [r.attacked for r in results] == [fake_translate("into Chinese\n\n[EN] " + t, None)
                                             for t in ZH]
    assert results[0].attacked.endswith("内完结，平均每天生产多少个？")
    assert results[1].flags == ["unchanged"]  # nothing to reword: flagged, not hidden
    assert results[0].flags == [] and results[0].similarity > 0.9
    assert results[0].details["pivot"] == "en" and results[0].details["translator"] == "llm:fake"
    assert progress[-1] == (3, 3) and len(progress) == 3


def test_failed_translation_gives_original_and_flag():
    with FaultServer(FaultConfig(responder=fake_translate, script=["500"])) as server:
        translator = LLMTranslator(_config(server, max_attempts=1))
        questions = [Question(idx=i, question=t) for i, t in enumerate(ZH[:2])]
        results = run(questions, translator=translator,
                      params={"similarity": False})
    failed = [r for r in results if "translation_failed" in r.flags]
    assert len(failed) == 1
    assert failed[0].attacked in ZH[:2] and failed[0].attack_num == 0
    assert "HTTP 500" in failed[0].details["error"]


def test_sync_sentence_attack_and_missing_translator():
    from evalcore.errors import EvalcoreError

    with FaultServer(FaultConfig(responder=fake_translate)) as server:
        result = attack_question(Question(idx=0, question=ZH[0]), "sentence",
                                 translator=LLMTranslator(_config(server)),
                                 params={"similarity": False})
    assert "完结" in result.attacked
    with pytest.raises(EvalcoreError, match="needs a translator"):
        attack_question(Question(idx=0, question=ZH[0]), "sentence")


class _Blackhole:
    """A TCP server that accepts connections and never answers (an unreachable service)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        try:
            while True:
                conn, _ = self.sock.accept()
                self.conns.append(conn)
        except OSError:
            return

    def close(self) -> None:
        for conn in self.conns:
            conn.close()
        self.sock.close()


def test_google_times_out_with_clear_message():
    hole = _Blackhole()
    try:
        translator = GoogleTranslator(timeout=0.5, base_url=f"http://127.0.0.1:{hole.port}/m")
        with pytest.raises(TranslationError, match=r"did not answer within 0.5s.*llm:local"):
            asyncio.run(translator.translate("你好", "zh", "en"))
    finally:
        hole.close()


def test_google_unreachable_fails_with_clear_message():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there: connection refused
    translator = GoogleTranslator(timeout=5, base_url=f"http://127.0.0.1:{port}/m")
    with pytest.raises(TranslationError, match="Google Translate failed.*internet"):
        asyncio.run(translator.translate("你好", "zh", "en"))


def test_google_failure_flags_items_not_raises():
    hole = _Blackhole()
    try:
        translator = GoogleTranslator(timeout=0.3, base_url=f"http://127.0.0.1:{hole.port}/m")
        results = run([Question(idx=0, question=ZH[0])], translator=translator,
                      params={"similarity": False})
    finally:
        hole.close()
    assert results[0].attacked == ZH[0]
    assert set(results[0].flags) == {"translation_failed", "unchanged"}


def test_make_translator_specs(tmp_path):
    from evalcore.errors import EvalcoreError, ModelConfigError

    assert isinstance(make_translator("google", models_path=tmp_path / "m.toml"),
                      GoogleTranslator)
    llm = make_translator("llm:local", models_path=tmp_path / "m.toml")
    assert isinstance(llm, LLMTranslator) and llm.name == "llm:local"
    with pytest.raises(ModelConfigError, match="nope"):
        make_translator("llm:nope", models_path=tmp_path / "m.toml")
    with pytest.raises(EvalcoreError, match="google"):
        make_translator("deepl", models_path=tmp_path / "m.toml")


@pytest.mark.integration
def test_real_google_offline_fails_fast():
    """On this machine (no internet) the real service fails; with internet it translates."""
    translator = GoogleTranslator(timeout=5)
    try:
        out = asyncio.run(translator.translate("你好", "zh", "en"))
    except TranslationError as exc:
        assert "Google Translate" in str(exc) and "llm:local" in str(exc)
    else:
        assert out.strip()


@pytest.mark.integration
def test_back_translation_with_real_local_model():
    from evalcore.providers.local import stop_local
    from evalcore.providers.registry import default_local_config

    config = msgspec.structs.replace(default_local_config(), name="local-perturb", n_ctx=1024,
                                     threads=1, timeout=60.0)
    translator = LLMTranslator(config, max_tokens=24)
    questions = [Question(idx=0, question="Tom has 3 apples and buys 4 more. How many now?"),
                 Question(idx=1, question="鸡蛋有120个，鸭蛋比鸡蛋多20个，鸭蛋有几个？")]
    try:
        results = run(questions, translator=translator)
    finally:
        stop_local()
    assert len(results) == 2
    for question, result in zip(questions, results):
        assert result.level == "sentence" and result.details["translator"] == "llm:local-perturb"
        if "translation_failed" in result.flags:
            assert result.attacked == question.question
        else:
            assert result.attacked.strip() and result.attack_num == 1
            assert result.similarity is not None
        # a 135M model rarely keeps every number: whatever it did is flagged, never hidden
        from evalcore.perturb import numbers

        if numbers(result.attacked) != numbers(question.question):
            assert "number_changed" in result.flags
