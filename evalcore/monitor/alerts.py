"""Alert messages and their delivery: one message per event and channel, retried with
backoff, the outcome recorded on the run (`store.alerts`).

A message names the suite (dataset), the model, each failed check with its value and its
threshold (for a regression check the allowed bound, beside the baseline's value), and
links to the run; checks that did not apply are left out. A gate that could not tell
(verdict "inconclusive") says so in words: which figure moved, within the noise of the
run's size, and about how many questions would tell. Webhooks get JSON in one of
three shapes (`plain`: the fields; `slack`: {"text"}; `feishu`: Feishu/Lark's rich-text
`post`), e-mail a plain-text mail with an HTML alternative over SMTP; names and model text
are escaped for each (`monitor.bodies`).
"""
from __future__ import annotations

import asyncio
import json
import os
import smtplib
from email.message import EmailMessage
from typing import Any, Awaitable, Callable, Mapping, Optional

import aiohttp
import msgspec

from evalcore import outbound
from evalcore.masking import mask_text
from evalcore.metrics.gate import Check
from evalcore.monitor.bodies import feishu_post, mail_html, slack_text
from evalcore.monitor.channels import label, masked_url, secret, smtp_server, webhook_url
from evalcore.providers.retry import backoff
from evalcore.report.gates import inconclusive_words
from evalcore.runner.outage import patiently
from evalcore.store.alerts import claim_delivery, finish_delivery, start_attempt

ATTEMPTS = 4
"""Tries per message: the first and three retries."""
BACKOFF_BASE_S = 1.0
"""Full-jitter exponential backoff (as the model client's): up to 1, 2, 4 s between tries."""
TIMEOUT_S = 10.0


class SendError(Exception):
    """One try failed; `retry` says whether another try may succeed."""

    def __init__(self, message: str, retry: bool = True) -> None:
        super().__init__(message)
        self.retry = retry


def app_link(run_id: Optional[int]) -> str:
    """Where a person opens the run: EVALCORE_APP_URL (default the local app)."""
    base = (os.environ.get("EVALCORE_APP_URL") or "http://localhost:8501").rstrip("/")
    return f"{base}/results?run={run_id}" if run_id is not None else base


def build_message(*, event: str, suite: str, model: str, run_id: Optional[int],
                  verdict: str, checks: list[Mapping[str, Any]],
                  baseline_id: Optional[int] = None, schedule_id: Optional[int] = None,
                  error: Optional[str] = None) -> dict[str, Any]:
    """The alert's fields and its text (what every shape carries)."""
    counted = [dict(c) for c in checks if c.get("counted", True)]
    unsure = [c for c in counted if c.get("inconclusive")]
    failed = [c for c in counted if not c.get("passed", False) and not c.get("inconclusive")]
    for check in failed:  # a verdict stored before checks carried their baseline
        if str(check.get("name", "")).startswith("regression:") and "baseline" not in check:
            check["baseline"], check["threshold"] = check.get("threshold"), None
    head = ("TEST alert from evalcore" if event == "test" else
            f"evalcore: {suite} on {model}: " + ("run FAILED" if event == "run_failed"
                                                  else f"gate {verdict.upper()}"))
    lines = [head]
    if run_id is not None:
        lines.append(f"run {run_id}" + (f" (schedule {schedule_id})" if schedule_id else "")
                     + (f", baseline run {baseline_id}" if baseline_id else ""))
    if error:
        lines.append(f"error: {error}")
    if unsure:
        lines.append("INCONCLUSIVE: the run is too small to tell whether it regressed "
                     "(neither passed nor failed):")
        lines += [f"- {inconclusive_words(msgspec.convert(c, Check))}" for c in unsure]
    for check in failed:
        value = "not measured" if check.get("value") is None else f"{check['value']:.4g}"
        bound, base = check.get("threshold"), check.get("baseline")
        ref = ", ".join(filter(None, (bound is not None and f"threshold {bound:.4g}",
                                      base is not None and f"baseline {base:.4g}"))) or "-"
        lines.append(f"- {check['name']}: {value} ({ref}) {check.get('detail', '')}")
    link = app_link(run_id)
    lines.append(link)
    return {"event": event, "suite": suite, "model": model, "run_id": run_id,
            "schedule_id": schedule_id, "verdict": verdict, "baseline_run_id": baseline_id,
            "failed_checks": failed, "inconclusive_checks": unsure, "link": link, "text": mask_text("\n".join(lines))}


def webhook_body(shape: str, message: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON a webhook of `shape` receives."""
    if shape == "slack":
        return {"text": slack_text(str(message["text"]))}
    if shape == "feishu":
        return feishu_post(message)
    return dict(message)


def _feishu_code(text: str) -> int:
    """Feishu/Lark answer HTTP 200 with {"code": N} ({"StatusCode": N} before); N != 0 is
    a refusal (bad token, keyword filter, signature)."""
    try:
        data = json.loads(text)
    except ValueError:
        return 0
    if not isinstance(data, dict):
        return 0
    code = data.get("code", data.get("StatusCode", 0))
    return int(code) if isinstance(code, (int, float)) else 0


REPLY_BYTES = 65_536
"""Most of a webhook's reply read (only Feishu's {"code"} is looked at)."""


def undelivered(where: str) -> str:
    """The one text of a failed connection, whatever the cause (refused, reset, timed
    out, no route): different texts would tell an evaluator which internal ports are open."""
    return f"could not deliver to {where} (connection refused or failed)"


async def _post(channel: Mapping[str, Any], message: Mapping[str, Any]) -> None:
    """One POST under `evalcore.outbound`'s policy; a failure names the status code,
    never the reply's text (it may be an internal page's)."""
    url = webhook_url(channel)
    where = masked_url(url)
    body = webhook_body(str(channel.get("shape", "plain")), message)
    try:
        async with outbound.session() as s, s.post(
                url, json=body, allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=TIMEOUT_S)) as reply:
            if reply.status >= 500 or reply.status == 429:
                raise SendError(f"HTTP {reply.status} from {where}")
            if reply.status >= 300:
                raise SendError(f"HTTP {reply.status} from {where}", retry=False)
            text = (await reply.content.read(REPLY_BYTES)).decode("utf-8", "replace")
            code = _feishu_code(text) if channel.get("shape") == "feishu" else 0
            if code:
                raise SendError(f"Feishu/Lark refused the message (code {code})", retry=False)
    except (outbound.OutboundRefused, outbound.RedirectRefused) as exc:
        raise SendError(str(exc).replace(url, where), retry=False) from None
    except (TimeoutError, aiohttp.ClientError, OSError):
        raise SendError(undelivered(where)) from None


def _mail(channel: Mapping[str, Any], message: Mapping[str, Any]) -> None:
    mail = EmailMessage()
    mail["From"] = channel["sender"]
    mail["To"] = channel["to"]
    mail["Subject"] = str(message["text"]).splitlines()[0]
    mail.set_content(str(message["text"]))
    mail.add_alternative(mail_html(message), subtype="html")
    password = secret(channel["password_env"], "SMTP password") if channel.get("password_env") \
        else ""
    host, port = str(channel["host"]), int(channel["port"])
    ssl = channel.get("tls") == "ssl"
    # the server of the workers' environment is the operator's; one typed into a schedule
    # is an evaluator's, under the outbound policy like a webhook
    guarded = (host, port) != smtp_server(str(channel.get("tls", "none")))
    try:
        with outbound.smtp_class(ssl=ssl, guarded=guarded)(host, port, timeout=TIMEOUT_S) as smtp:
            if channel.get("tls") == "starttls":
                smtp.starttls()
            if channel.get("user"):
                smtp.login(str(channel["user"]), password)
            smtp.send_message(mail)
    except outbound.OutboundRefused as exc:
        raise SendError(f"SMTP {exc}", retry=False) from None
    except smtplib.SMTPResponseException as exc:
        raise SendError(f"SMTP {host}:{port} answered {exc.smtp_code}",
                        retry=400 <= exc.smtp_code < 500) from None
    except smtplib.SMTPRecipientsRefused:
        raise SendError(f"SMTP {host}:{port} refused {channel['to']}", retry=False) from None
    except (smtplib.SMTPException, OSError):
        raise SendError(undelivered(f"SMTP {host}:{port}")) from None


async def send_once(channel: Mapping[str, Any], message: Mapping[str, Any]) -> None:
    """One try at one channel (SendError on failure)."""
    if channel.get("type") == "email":
        await asyncio.to_thread(_mail, channel, message)
    else:
        await _post(channel, message)


async def send_with_retries(channel: Mapping[str, Any], message: Mapping[str, Any], *,
                            before_try: Optional[Callable[[int], Awaitable[bool]]] = None
                            ) -> tuple[Optional[bool], int, Optional[str]]:
    """(sent, tries, masked error): up to ATTEMPTS tries with full-jitter backoff.
    `before_try(n)` records try n before it goes out; when it answers False another
    worker sends instead, and `sent` is None."""
    error = None
    for attempt in range(1, ATTEMPTS + 1):
        if before_try is not None and not await before_try(attempt):
            return None, attempt - 1, None
        try:
            await send_once(channel, message)
            return True, attempt, None
        except SendError as exc:
            error = mask_text(str(exc))
            if not exc.retry or attempt == ATTEMPTS:
                return False, attempt, error
        except Exception as exc:  # noqa: BLE001 - a missing variable, a bad setting
            return False, attempt, mask_text(f"{type(exc).__name__}: {exc}")
        await asyncio.sleep(backoff(attempt, base=BACKOFF_BASE_S, cap=8 * BACKOFF_BASE_S))
    return False, ATTEMPTS, error


async def deliver(engine: Any, event_key: str, channels: list[Mapping[str, Any]],
                  message: Mapping[str, Any], *, run_id: Optional[int] = None,
                  schedule_id: Optional[int] = None) -> list[dict[str, Any]]:
    """Send `message` to each channel at most once for `event_key`; returns, per channel,
    {channel, status (sent / failed / already), attempts, error}. Each try is counted in
    the database before it goes out, and the end is stored even across a database
    outage (waited out), so an interrupted delivery reads as possibly delivered, never
    as not sent."""
    results = []
    for channel in channels:
        name = label(channel)
        delivery = await patiently(engine, f"alert {event_key} claimed its delivery",
                                   claim_delivery, engine, event_key, name, run_id=run_id,
                                   schedule_id=schedule_id)
        if delivery is None:
            results.append({"channel": name, "status": "already", "attempts": 0, "error": None})
            continue

        async def before_try(attempt: int, delivery: int = delivery) -> bool:
            return await patiently(engine, f"alert {event_key} counted its try", start_attempt,
                                   engine, delivery, attempt)

        ok, tries, error = await send_with_retries(channel, message, before_try=before_try)
        if ok is None:  # another worker counted the try first: it sends
            results.append({"channel": name, "status": "already", "attempts": 0, "error": None})
            continue
        await patiently(engine, f"alert {event_key} stored its delivery", finish_delivery,
                        engine, delivery, ok=ok, attempts=tries, error=error)
        results.append({"channel": name, "status": "sent" if ok else "failed",
                        "attempts": tries, "error": error})
    return results
