"""Local alert receivers for the monitoring tests: a webhook (aiohttp on 127.0.0.1) that
keeps every JSON body, and an SMTP server (aiosmtpd) that keeps every mail."""
from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web


class WebhookReceiver:
    """POST /hook: the first `fail_first` requests get HTTP 500, the rest 200 and their
    bodies kept in `bodies` (the messages that reached the receiver); each answered after
    `delay` seconds (a sender can be cut while it waits)."""

    def __init__(self, fail_first: int = 0, reply: str = "ok", delay: float = 0.0) -> None:
        self.fail_first = fail_first
        self.reply = reply
        self.delay = delay
        self.requests = 0
        self.bodies: list[Any] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def _hook(self, request: web.Request) -> web.Response:
        self.requests += 1
        body = await request.json()
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.requests <= self.fail_first:
            return web.Response(status=500, text="try again")
        self.bodies.append(body)
        return web.Response(text=self.reply, content_type="application/json"
                            if self.reply.startswith("{") else "text/plain")

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/hook", self._hook)

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def __enter__(self) -> "WebhookReceiver":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class InternalPages(WebhookReceiver):
    """An internal service an attacker would aim a webhook at: /redir?to=URL answers 302 to
    URL, /secret answers 403 with SECRET_TEXT (the text must never reach the user), /hook
    as the receiver's; `hits` counts requests per path."""

    SECRET_TEXT = "INTERNAL-ONLY admin console: db password is swordfish"

    def __init__(self) -> None:
        super().__init__()
        self.hits: dict[str, int] = {}

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_route("*", "/redir", self._redirect)
        app.router.add_route("*", "/secret", self._secret)

    async def _redirect(self, request: web.Request) -> web.Response:
        self.hits["/redir"] = self.hits.get("/redir", 0) + 1
        raise web.HTTPFound(request.query["to"], text=self.SECRET_TEXT)

    async def _secret(self, request: web.Request) -> web.Response:
        self.hits["/secret"] = self.hits.get("/secret", 0) + 1
        return web.Response(status=403, text=self.SECRET_TEXT)


class SmtpReceiver:
    """An aiosmtpd server on 127.0.0.1 keeping each mail as (sender, recipients, text)."""

    def __init__(self) -> None:
        self.mails: list[tuple[str, list[str], str]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.mails.append((envelope.mail_from, list(envelope.rcpt_tos),
                           envelope.content.decode("utf-8", "replace")))
        return "250 Message accepted for delivery"

    def __enter__(self) -> "SmtpReceiver":
        import socket

        from aiosmtpd.controller import Controller

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.controller.stop()
