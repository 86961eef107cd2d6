"""A flaky OpenAI- and Ollama-compatible chat server for tests and benchmarks.

Faults (all optional): fixed latency, a concurrency cap answering 429 + Retry-After above
it, a rate of HTTP 500s, timeouts (sleeping past the client's timeout), connection resets
and malformed 200 bodies, drawn from a seeded RNG; or a `script` of faults applied to the
first requests in order, for exact tests. It counts requests and the most calls it served
at once.

In tests::

    with FaultServer(FaultConfig(latency=0.05, cap=2)) as server:
        config = ModelConfig(name="fake", base_url=server.openai_url, model="fake")

From a shell (for bench/)::

    python -m tests.fakes.fault_server --port 8808 --latency 0.2 --cap 5 --error-rate 0.02
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import collections
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Self

from aiohttp import web

log = logging.getLogger(__name__)

Responder = Callable[[str, dict | None], str]
"""(last user message, JSON schema or None) -> the answer text."""

FAULTS = ("ok", "429", "500", "401", "timeout", "reset", "malformed", "echo", "basic", "hang",
          "big", "bigstream", "html", "empty", "null", "filter", "404")
"""Script entries (or the `mode` of every request):

- "401" echoes the Bearer token back, as some providers do, to test redaction;
- "echo" answers 401 with the key (Bearer or a custom key header) after `echo_filler`
  characters of filler, or, when `echo_filler` < 0, after (request number % 401) of them,
  so a run of 401 calls tries every offset from 0 to 400 (a 300-character cut
  falls inside the key for some);
- "basic" the same, the key sent back in Basic form (`Basic base64(user:key)`, then
  `base64(key)` alone);
- "hang" (as "timeout") sleeps `hang` seconds before answering;
- "big" a 200 of `big_bytes` with a Content-Length, "bigstream" the same chunked
  (no length announced);
- "html" a 200 text/html page; "empty" content ""; "null" content null; "filter"
  content null with finish_reason content_filter; "404" model not found.
"""
FILLER_CYCLE = 401


def schema_example(schema: dict[str, Any]) -> Any:
    """A value that satisfies a simple JSON schema (objects, enums, scalars, arrays)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: schema_example(sub) for name, sub in props.items()}
    if kind == "array":
        return [schema_example(schema.get("items", {"type": "string"}))] * schema.get("minItems", 0)
    return {"string": "ok", "integer": 1, "number": 1.0, "boolean": True, "null": None}.get(
        kind, "ok"
    )


def default_responder(prompt: str, schema: dict | None) -> str:
    """`The answer is N.` where N is the sum of the integers in the prompt (42 if none).

    Deterministic and derived from the prompt, so scorers can be exercised: a math
    question "What is 2 + 3?" gets "The answer is 5.".
    """
    if schema is not None:
        return json.dumps(schema_example(schema))
    numbers = [int(n) for n in re.findall(r"-?\d+", prompt)]
    return f"The answer is {sum(numbers) if numbers else 42}."


@dataclass
class FaultConfig:
    """What the server does. Rates are probabilities per admitted request."""

    latency: float = 0.0
    """Seconds each answer takes."""
    cap: int = 0
    """Requests served at once; above it 429 + Retry-After (0 = no cap)."""
    retry_after: float = 0.05
    """Seconds sent in Retry-After (and retry-after-ms) with each 429."""
    error_rate: float = 0.0
    timeout_rate: float = 0.0
    reset_rate: float = 0.0
    malformed_rate: float = 0.0
    hang: float = 30.0
    """Seconds a "timeout" request sleeps (longer than the client's timeout)."""
    seed: int = 0
    script: list[str] = field(default_factory=list)
    """Faults for the first requests, in arrival order (each one of FAULTS)."""
    mode: str = "ok"
    """The fault of every request after the script when no rate picked one (one of FAULTS)."""
    echo_filler: int = -1
    """Filler characters before an echoed key; < 0 = cycle 0..400 with the request number."""
    big_bytes: int = 10 * 1024 * 1024
    """Size of a "big" / "bigstream" reply."""
    responder: Responder = default_responder


@dataclass
class FaultStats:
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    prompts: list[str] = field(default_factory=list)
    peers: list[str] = field(default_factory=list)
    """The client address of each request, in the order of `prompts` (which host asked)."""
    same_prompt: collections.Counter = field(default_factory=collections.Counter)
    """Calls in flight now per prompt text (a question's rounds share one)."""
    max_same_prompt: int = 0
    """The most calls with one prompt that were ever in flight together."""
    first_request_at: float | None = None
    """Wall-clock time (`time.time()`) the first chat request arrived: a client's start-up
    is measured from its exec to this moment (bench/stability_bench.py)."""


class FaultApp:
    """The aiohttp application and its state (shared by both dialects)."""

    def __init__(self, config: FaultConfig) -> None:
        self.config = config
        self.stats = FaultStats()
        self._rng = random.Random(config.seed)
        self._script = collections.deque(config.script)
        self._lock = threading.Lock()
        self.app = web.Application()
        self.app.router.add_post("/v1/chat/completions", self.openai)
        self.app.router.add_post("/chat/completions", self.openai)
        self.app.router.add_post("/api/chat", self.ollama)
        self.app.router.add_get("/health", self.health)
        self.app.router.add_get("/stats", self.stats_json)
        self.app.router.add_post("/reset", self.reset_json)

    def reconfigure(self, **changes: Any) -> None:
        """Change faults while running (new script / seed restart their sequences)."""
        with self._lock:
            self.config = replace(self.config, **changes)
            if "script" in changes:
                self._script = collections.deque(self.config.script)
            if "seed" in changes:
                self._rng = random.Random(self.config.seed)

    def reset_stats(self) -> None:
        with self._lock:
            self.stats = FaultStats(in_flight=self.stats.in_flight)

    async def stats_json(self, request: web.Request) -> web.Response:
        """Counters for benchmarks run against the server in another process."""
        s = self.stats
        return web.json_response({"requests": s.requests, "max_in_flight": s.max_in_flight,
                                  "outcomes": dict(s.outcomes),
                                  "first_request_at": s.first_request_at})

    async def reset_json(self, request: web.Request) -> web.Response:
        """Counters back to zero, so one server can time many client processes in turn."""
        self.reset_stats()
        return web.json_response({"status": "ok"})

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    def _pick_fault(self) -> str:
        with self._lock:
            if self._script:
                return self._script.popleft()
            cfg, roll = self.config, self._rng.random()
        for name, rate in (
            ("500", cfg.error_rate),
            ("timeout", cfg.timeout_rate),
            ("reset", cfg.reset_rate),
            ("malformed", cfg.malformed_rate),
        ):
            if roll < rate:
                return name
            roll -= rate
        return cfg.mode

    async def _serve(self, request: web.Request, dialect: str) -> web.StreamResponse:
        if self.stats.first_request_at is None:
            self.stats.first_request_at = time.time()
        body = await request.json()
        messages = body.get("messages") or [{"content": ""}]
        prompt = next(
            (m.get("content", "") for m in reversed(messages) if m.get("role", "user") == "user"),
            "",
        )
        cfg = self.config
        with self._lock:
            self.stats.requests += 1
            self.stats.prompts.append(prompt)
            self.stats.peers.append(request.remote or "")
            over_cap = cfg.cap and self.stats.in_flight >= cfg.cap
        fault = "429" if over_cap else self._pick_fault()
        if fault == "429":
            with self._lock:
                self.stats.outcomes["429"] += 1
            return web.json_response(
                {"error": {"message": "rate limited: too many concurrent requests"}},
                status=429,
                headers={
                    "Retry-After": f"{cfg.retry_after:g}",
                    "retry-after-ms": str(int(cfg.retry_after * 1000)),
                },
            )
        with self._lock:
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
            self.stats.outcomes[fault] += 1
            self.stats.same_prompt[prompt] += 1
            self.stats.max_same_prompt = max(self.stats.max_same_prompt,
                                             self.stats.same_prompt[prompt])
        try:
            return await self._answer(request, body, prompt, fault, dialect)
        finally:
            with self._lock:
                self.stats.in_flight -= 1
                self.stats.same_prompt[prompt] -= 1

    async def _answer(
        self, request: web.Request, body: dict, prompt: str, fault: str, dialect: str
    ) -> web.StreamResponse:
        cfg = self.config
        if cfg.latency:
            await asyncio.sleep(cfg.latency)
        if fault in ("timeout", "hang"):
            await asyncio.sleep(cfg.hang)
        special = await self._misbehave(request, fault)
        if special is not None:
            return special
        if fault == "reset":
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError()  # nothing more to send on a dead connection
        if fault == "500":
            return web.json_response({"error": {"message": "injected server error"}}, status=500)
        if fault == "401":
            token = request.headers.get("Authorization", "").removeprefix("Bearer ")
            return web.json_response(
                {"error": {"message": f"Incorrect API key provided: {token}"}}, status=401
            )
        if fault == "malformed":
            return web.Response(text='{"choices": [', content_type="application/json")
        schema = _schema_of(body, dialect)
        answer = cfg.responder(prompt, schema)
        prompt_tokens, completion_tokens = len(prompt.split()), len(answer.split())
        if dialect == "ollama":
            return web.json_response(
                {
                    "model": body.get("model", "fake"),
                    "created_at": "2025-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": answer},
                    "done": True,
                    "done_reason": "stop",
                    "prompt_eval_count": prompt_tokens,
                    "eval_count": completion_tokens,
                }
            )
        return web.json_response(
            {
                "id": f"chatcmpl-{self.stats.requests}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": answer},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    def _filler(self) -> str:
        count = self.config.echo_filler
        if count < 0:
            count = (self.stats.requests - 1) % FILLER_CYCLE
        return ("lorem ipsum " * (count // 12 + 1))[:count]

    async def _misbehave(self, request: web.Request, fault: str) -> web.StreamResponse | None:
        """The responses of the hardening faults (see FAULTS); None for the others."""
        if fault in ("echo", "basic"):
            auth = request.headers.get("Authorization", "")
            key = auth.split(" ", 1)[1] if " " in auth else request.headers.get("api-key", "")
            if fault == "basic":
                both = base64.b64encode(f"evalcore:{key}".encode()).decode()
                alone = base64.b64encode(key.encode()).decode()
                key = f"Basic {both} (token {alone})"
            message = f"{self._filler()}Incorrect API key provided: {key}"
            return web.json_response({"error": {"message": message}}, status=401)
        if fault == "404":
            return web.json_response(
                {"error": {"message": "The model does not exist", "code": "model_not_found"}},
                status=404)
        if fault == "html":
            return web.Response(text="<html><body><h1>Welcome to nginx!</h1></body></html>",
                                content_type="text/html")
        if fault in ("big", "bigstream"):
            return await self._big(request, fault == "bigstream")
        if fault in ("empty", "null", "filter"):
            content = "" if fault == "empty" else None
            finish = "content_filter" if fault == "filter" else "stop"
            return web.json_response({"choices": [{"index": 0, "finish_reason": finish,
                                                    "message": {"role": "assistant",
                                                                "content": content}}]})
        return None

    async def _big(self, request: web.Request, chunked: bool) -> web.StreamResponse:
        """A valid reply of `big_bytes`, sent in 64 KiB pieces (never built whole)."""
        size = self.config.big_bytes
        head = b'{"choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "'
        tail = b'"}}]}'
        fill = max(0, size - len(head) - len(tail))
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        if not chunked:
            resp.content_length = len(head) + fill + len(tail)
        await resp.prepare(request)
        await resp.write(head)
        piece = b"x" * 65_536
        while fill > 0:
            await resp.write(piece[:fill])
            fill -= len(piece)
        await resp.write(tail)
        await resp.write_eof()
        return resp

    async def openai(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "openai")

    async def ollama(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "ollama")


def _schema_of(body: dict, dialect: str) -> dict | None:
    if dialect == "ollama":
        fmt = body.get("format")
        return fmt if isinstance(fmt, dict) else ({"type": "object"} if fmt == "json" else None)
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
    if fmt.get("type") == "json_object":
        return {"type": "object"}
    return None


class FaultServer:
    """Runs a FaultApp on 127.0.0.1 (or `host`) in a background thread; use as a context
    manager."""

    def __init__(self, config: FaultConfig | None = None, port: int = 0,
                 host: str = "127.0.0.1") -> None:
        self.fault = FaultApp(config or FaultConfig())
        self.port = port
        self.host = host
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """Root URL, e.g. `http://127.0.0.1:PORT` (the Ollama base_url)."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        """`{url}/v1`, the OpenAI-style base_url."""
        return f"{self.url}/v1"

    @property
    def stats(self) -> FaultStats:
        return self.fault.stats

    def reconfigure(self, **changes: Any) -> None:
        self.fault.reconfigure(**changes)

    def reset_stats(self) -> None:
        self.fault.reset_stats()

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            # handler_cancellation: a client that gave up (timeout) frees its server slot
            self._runner = web.AppRunner(
                self.fault.app, access_log=None, shutdown_timeout=0.5, handler_cancellation=True
            )
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, self.host, self.port)
            loop.run_until_complete(site.start())
            self.port = self._runner.addresses[0][1]
        except OSError as exc:  # surface bind errors to the starting thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    def start(self) -> FaultServer:
        self._thread = threading.Thread(target=self._run, name="fault-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.fault_server",
        description="Flaky OpenAI/Ollama-compatible chat server.",
    )
    parser.add_argument("--port", type=int, default=8808)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--cap", type=int, default=0)
    parser.add_argument("--retry-after", type=float, default=0.05)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--timeout-rate", type=float, default=0.0)
    parser.add_argument("--reset-rate", type=float, default=0.0)
    parser.add_argument("--malformed-rate", type=float, default=0.0)
    parser.add_argument("--hang", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", choices=FAULTS, default="ok",
                        help="what every request gets (see FAULTS)")
    parser.add_argument("--echo-filler", type=int, default=-1)
    parser.add_argument("--big-bytes", type=int, default=10 * 1024 * 1024)
    args = parser.parse_args(argv)
    config = FaultConfig(
        latency=args.latency,
        cap=args.cap,
        retry_after=args.retry_after,
        error_rate=args.error_rate,
        timeout_rate=args.timeout_rate,
        reset_rate=args.reset_rate,
        malformed_rate=args.malformed_rate,
        hang=args.hang,
        seed=args.seed,
        mode=args.mode,
        echo_filler=args.echo_filler,
        big_bytes=args.big_bytes,
    )
    fault = FaultApp(config)
    logging.basicConfig(level=logging.INFO)
    log.info(
        "fault server on http://127.0.0.1:%d (openai base_url .../v1, ollama /api/chat)", args.port
    )
    web.run_app(
        fault.app,
        host="127.0.0.1",
        port=args.port,
        access_log=None,
        print=None,
        handler_cancellation=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
