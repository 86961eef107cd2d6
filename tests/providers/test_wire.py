"""Request bodies and reply parsing for the openai and ollama dialects."""

from __future__ import annotations

import json

import msgspec
import pytest

from evalcore.providers.base import ChatRequest, ModelConfig, is_refusal
from evalcore.providers.wire import (
    EmptyReplyError,
    RefusalError,
    MalformedReplyError,
    apply_defaults,
    build_request,
    error_text,
    parse_reply,
)

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
FORMAT = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA}}


def openai_cfg(**kw) -> ModelConfig:
    return ModelConfig(
        name="gpt", kind="openai", base_url="https://api.example.com/v1/", model="gpt-x", **kw
    )


def ollama_cfg(**kw) -> ModelConfig:
    return ModelConfig(
        name="llama", kind="ollama", base_url="http://127.0.0.1:11434", model="qwen2.5:0.5b", **kw
    )


def test_defaults_fill_only_none_fields():
    cfg = openai_cfg(temperature=0.3, top_p=0.9, max_tokens=77, seed=5)
    req = apply_defaults(cfg, ChatRequest.user("hi", temperature=1.0))
    assert (req.temperature, req.top_p, req.max_tokens, req.seed) == (1.0, 0.9, 77, 5)


def test_response_format_dropped_when_unsupported():
    req = ChatRequest.user("hi", response_format=FORMAT)
    assert apply_defaults(openai_cfg(supports_json_schema=False), req).response_format is None
    assert apply_defaults(openai_cfg(), req).response_format == FORMAT


def test_openai_request():
    cfg = openai_cfg(temperature=0.2, max_tokens=10)
    req = apply_defaults(cfg, ChatRequest.user("2+2?", system="be brief", response_format=FORMAT))
    wire = build_request(cfg, req, api_key="sk-secret")
    assert wire.url == "https://api.example.com/v1/chat/completions"
    assert wire.headers["Authorization"] == "Bearer sk-secret"
    assert wire.json["model"] == "gpt-x"
    assert wire.json["messages"][0] == {"role": "system", "content": "be brief"}
    assert wire.json["temperature"] == 0.2 and wire.json["max_tokens"] == 10
    assert wire.json["response_format"] == FORMAT
    assert "seed" not in wire.json and "top_p" not in wire.json


def test_openai_no_key_no_header_and_base_url_override():
    wire = build_request(openai_cfg(), ChatRequest.user("x"), base_url="http://127.0.0.1:9/v1")
    assert "Authorization" not in wire.headers
    assert wire.url == "http://127.0.0.1:9/v1/chat/completions"


def test_ollama_request():
    cfg = ollama_cfg(temperature=0.5, top_p=0.8, max_tokens=64, seed=7)
    req = apply_defaults(cfg, ChatRequest.user("hello", response_format=FORMAT))
    wire = build_request(cfg, req, api_key="ignored")
    assert wire.url == "http://127.0.0.1:11434/api/chat"
    assert "Authorization" not in wire.headers
    body = wire.json
    assert body["stream"] is False and body["model"] == "qwen2.5:0.5b"
    assert body["options"] == {"temperature": 0.5, "top_p": 0.8, "num_predict": 64, "seed": 7}
    assert body["format"] == SCHEMA
    json_object = build_request(cfg, ChatRequest.user("x", response_format={"type": "json_object"}))
    assert json_object.json["format"] == "json"


def test_parse_openai_reply():
    body = json.dumps(
        {
            "choices": [
                {"message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 2},
        }
    )
    parsed = parse_reply(openai_cfg(), body.encode())
    assert (parsed.text, parsed.prompt_tokens, parsed.completion_tokens, parsed.finish_reason) == (
        "42",
        11,
        2,
        "stop",
    )


def test_parse_ollama_reply():
    body = {
        "model": "m",
        "message": {"role": "assistant", "content": "你好"},
        "done": True,
        "done_reason": "length",
        "prompt_eval_count": 9,
        "eval_count": 4,
    }
    parsed = parse_reply(ollama_cfg(), json.dumps(body, ensure_ascii=False).encode())
    assert (parsed.text, parsed.prompt_tokens, parsed.completion_tokens, parsed.finish_reason) == (
        "你好",
        9,
        4,
        "length",
    )


@pytest.mark.parametrize(
    "body",
    [
        b"<html>502</html>",
        b'{"choices": [',
        b"[]",
        b'{"choices": []}',
        b'{"choices": [{"text": "x"}]}',
        b'{"id": 1}',
    ],
)
def test_malformed_openai(body):
    with pytest.raises(MalformedReplyError):
        parse_reply(openai_cfg(), body)


def test_malformed_ollama():
    with pytest.raises(MalformedReplyError):
        parse_reply(ollama_cfg(), b'{"done": true}')


@pytest.mark.parametrize("content", [None, "", "  \n"])
def test_null_or_empty_content_is_an_error_not_an_answer(content):
    body = json.dumps({"choices": [{"message": {"content": content}, "finish_reason": "stop"}]})
    with pytest.raises(EmptyReplyError, match="^empty reply"):
        parse_reply(openai_cfg(), body)
    with pytest.raises(EmptyReplyError, match="^empty reply"):
        parse_reply(ollama_cfg(), json.dumps({"message": {"content": content}, "done": True}))


def test_content_filter_is_a_provider_refusal():
    body = b'{"choices": [{"message": {"content": null}, "finish_reason": "content_filter"}]}'
    with pytest.raises(RefusalError) as caught:
        parse_reply(openai_cfg(), body)
    assert is_refusal(str(caught.value))
    assert not is_refusal("empty reply") and not is_refusal(None)


def test_custom_key_header_sends_the_bare_key():
    cfg = msgspec.structs.replace(openai_cfg(), api_key_header="api-key")
    wire = build_request(cfg, ChatRequest.user("hi"), api_key="k-123456789")
    assert wire.headers["api-key"] == "k-123456789" and "Authorization" not in wire.headers


def test_error_text_shapes():
    assert error_text(b'{"error": {"message": "Invalid key"}}') == "Invalid key"
    assert error_text(b'{"error": "model not found"}') == "model not found"
    assert error_text(b"plain failure") == "plain failure"
    assert len(error_text(b"x" * 5000)) <= 300


def test_local_request_carries_stop_cap_and_repeat_penalty():
    """The embedded model's calls end at a line end, at 32 tokens at most, with llama.cpp's
    repetition penalty: the demo's 256-token `；；；` loops took ~10 s a call."""
    from evalcore.providers.registry import default_local_config

    cfg = default_local_config()
    wire = build_request(cfg, apply_defaults(cfg, ChatRequest.user("hi")),
                         base_url="http://127.0.0.1:9")
    assert wire.json["max_tokens"] <= 32
    assert wire.json["stop"] == ["\n"]
    assert wire.json["repeat_penalty"] == pytest.approx(1.1)



def test_a_structured_request_is_not_cut_at_the_models_stop_sequences():
    """The judge asks for JSON; llama.cpp's grammar writes `{` then a line break, so the
    local model's stop `\n` ended every verdict at `{` (24 of 24 re-judgements failed on
    the Stability page). Stop sequences stay for free-text answers."""
    from evalcore.providers.registry import default_local_config
    from evalcore.scorers.judge import JUDGE_SCHEMA

    cfg = default_local_config()
    judged = msgspec.structs.replace(ChatRequest.user("grade"), response_format=JUDGE_SCHEMA)
    wire = build_request(cfg, apply_defaults(cfg, judged), base_url="http://127.0.0.1:9")
    assert "stop" not in wire.json and wire.json["response_format"] == JUDGE_SCHEMA
    body = build_request(ollama_cfg(stop=["\n"]), judged).json
    assert "stop" not in body.get("options", {}) and body["format"]["required"] == ["score", "reason"]
    plain = build_request(cfg, apply_defaults(cfg, ChatRequest.user("hi")),
                          base_url="http://127.0.0.1:9")
    assert plain.json["stop"] == ["\n"]

def test_repeat_penalty_not_sent_to_openai_but_to_ollama():
    """OpenAI rejects unknown parameters; Ollama reads both under options."""
    wire = build_request(openai_cfg(repeat_penalty=1.2, stop=["END"]), ChatRequest.user("x"))
    assert "repeat_penalty" not in wire.json and wire.json["stop"] == ["END"]
    body = build_request(ollama_cfg(repeat_penalty=1.2, stop=["END"]), ChatRequest.user("x")).json
    assert body["options"]["repeat_penalty"] == 1.2 and body["options"]["stop"] == ["END"]


def test_local_entry_in_models_toml_gets_the_short_answer_defaults(tmp_path):
    """A `[models.x] kind = "local"` entry without its own values answers short too;
    values it sets win."""
    from evalcore.providers.registry import load_models

    path = tmp_path / "models.toml"
    path.write_text('[models.a]\nkind = "local"\n[models.b]\nkind = "local"\nmax_tokens = 200\n'
                    'stop = []\n', encoding="utf-8")
    models = load_models(path)
    assert models["a"].max_tokens == 32 and models["a"].stop == ["\n"]
    assert models["a"].repeat_penalty == pytest.approx(1.1)
    assert models["b"].max_tokens == 200 and models["b"].stop == []
