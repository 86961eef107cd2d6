"""Alerts: a fairness schedule whose model turns biased at its third run fails its gate and
exactly one webhook message reaches a local receiver, naming the failed checks with their
values and the baseline's; retries, at most once per event, shapes, SMTP (aiosmtpd)."""
from __future__ import annotations

import asyncio
import re
import string
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from sqlalchemy import update

from evalcore.auth.identity import Actor
from evalcore.monitor import alerts, channels
from evalcore.store.alerts import claim_delivery, deliveries
from evalcore.store.monitor_tables import Schedule
from evalcore.store.tables import utcnow
from tests.fakes.fault_server import FaultConfig, FaultServer
from tests.fakes.receivers import SmtpReceiver, WebhookReceiver
from tests.monitor.conftest import needs
from tests.report.test_fairness_report import biased, fair, suite  # noqa: F401
from tests.runner.conftest import add_model

GATE = {"absolute": {"spd_max": 0.1},
        "relative": {"max_regression": 0.10, "min_delta": 0.01}}
REVIEWER = Actor(email="", name="rita", role="reviewer")
EVALUATOR = Actor(email="", name="eve", role="evaluator")


def work(engine) -> None:  # noqa: ANN001
    """Make every due schedule's run, execute it, gate it (as a worker's clock would)."""
    from evalcore.providers.client import run_closing_clients
    from evalcore.runner.worker import Worker
    from evalcore.store.schedules import enqueue_checks, enqueue_due

    def drain() -> None:
        run_closing_clients(Worker(engine, jobs=2, poll_s=0.02).run(once=True))

    with engine.begin() as conn:  # due now
        conn.execute(update(Schedule).values(next_due_at=utcnow() - timedelta(seconds=1)))
    assert enqueue_due(engine)
    drain()  # creates the run, then executes it
    drain()
    enqueue_checks(engine)  # (the worker's clock may have queued it already)
    drain()  # gate and alerts


@pytest.fixture()
def fast_retries(monkeypatch):
    monkeypatch.setattr(alerts, "BACKOFF_BASE_S", 0.01)


def test_bias_in_the_third_run_fails_the_gate_and_sends_one_webhook(engine, settings, suite,  # noqa: F811
                                                                     fast_retries, allow_outbound):
    from evalcore.monitor.actions import add_schedule, set_baseline
    from evalcore.monitor.view import schedule_info
    from evalcore.store.schedules import get_schedule

    mode = {"biased": False}

    def model(prompt, schema):  # noqa: ANN001, ANN202
        return (biased if mode["biased"] else fair)(prompt, schema)

    with FaultServer(FaultConfig(responder=model)) as server, WebhookReceiver() as hook:
        allow_outbound(hook.port)
        add_model(settings, server)
        sched = add_schedule(EVALUATOR, engine, "fairness",
                             {"suite": suite, "model": "fake", "samples": 1},
                             models_path=settings.models_path, every_s=3600, gate=GATE,
                             channels=[channels.webhook(hook.url)])
        work(engine)
        info = schedule_info(engine, get_schedule(engine, sched.id))
        first = info["runs"][0]
        set_baseline(REVIEWER, engine, first)  # production
        work(engine)
        mode["biased"] = True  # the hosted model changed under the same name
        work(engine)
        info = schedule_info(engine, get_schedule(engine, sched.id))

    assert len(info["runs"]) == 3, info
    assert [r["verdict"] for r in info["last"]] == ["pass", "pass", "fail"]
    assert len(hook.bodies) == 1  # exactly one message, for the third run only
    body = hook.bodies[0]
    third = info["runs"][2]
    assert (body["event"], body["run_id"], body["suite"], body["model"]) == (
        "gate_failed", third, suite, "fake")
    assert body["baseline_run_id"] == first and body["link"].endswith(f"run={third}")
    failed = {c["name"]: c for c in body["failed_checks"]}
    assert failed["spd_max"]["value"] == pytest.approx(0.5)
    assert failed["spd_max"]["threshold"] == 0.1
    assert failed["regression:spd"]["baseline"] == pytest.approx(0.0)
    # the threshold is the allowed bound (baseline 0 + min_delta), not the baseline's value
    assert failed["regression:spd"]["threshold"] == pytest.approx(0.01)
    assert "regression:spd: 0.5 (threshold 0.01, baseline 0)" in body["text"]
    assert "spd_max: 0.5" in body["text"]
    assert [d["status"] for d in deliveries(engine, run_id=third)] == ["sent"]
    assert info["last"][2]["alerts"][0]["status"] == "sent"


def _message() -> dict:
    return alerts.build_message(
        event="gate_failed", suite="occ", model="m", run_id=7, verdict="fail", baseline_id=3,
        checks=[{"name": "spd_max", "value": 0.5, "threshold": 0.1, "passed": False},
                {"name": "regression:spd", "value": 0.5, "threshold": 0.0, "passed": False},
                {"name": "eod_max", "value": 0.0, "threshold": 0.1, "passed": True}])


def test_retries_with_backoff_and_never_twice_per_event(engine, fast_retries, allow_outbound):
    with WebhookReceiver(fail_first=2) as hook:
        allow_outbound(hook.port)
        chans = [channels.webhook(hook.url, shape="slack")]
        first = asyncio.run(alerts.deliver(engine, "run:7:gate_failed", chans, _message(),
                                           run_id=7))
        again = asyncio.run(alerts.deliver(engine, "run:7:gate_failed", chans, _message(),
                                           run_id=7))
    assert first[0]["status"] == "sent" and first[0]["attempts"] == 3
    assert again[0]["status"] == "already"
    assert hook.requests == 3 and len(hook.bodies) == 1
    assert set(hook.bodies[0]) == {"text"} and "regression:spd" in hook.bodies[0]["text"]
    assert "eod_max" not in hook.bodies[0]["text"]  # passed checks are not alerted


def test_a_delivery_claimed_by_a_dead_worker_before_any_try_is_sent(engine, allow_outbound):
    """The delivery row was claimed and the worker died before its first try: nothing went
    out, so the takeover sends it (it used to be marked failed, "not sent", attempts 0)."""
    with WebhookReceiver() as hook:
        allow_outbound(hook.port)
        chans = [channels.webhook(hook.url)]
        assert claim_delivery(engine, "run:8:gate_failed", channels.label(chans[0]), run_id=8)
        result = asyncio.run(alerts.deliver(engine, "run:8:gate_failed", chans, _message(),
                                            run_id=8))
    assert result[0]["status"] == "sent" and len(hook.bodies) == 1
    assert [(d["status"], d["attempts"]) for d in deliveries(engine, run_id=8)] == [("sent", 1)]


def test_a_send_cut_by_a_crash_is_possibly_delivered_and_not_sent_again(engine,
                                                                        allow_outbound):
    """A worker killed while its POST was in flight (here: its task cancelled while the
    receiver holds the reply) had counted that try first: the takeover reports the alert
    as possibly delivered with the try, and does not send a second message."""
    async def cut() -> None:
        sending = asyncio.create_task(alerts.deliver(engine, "run:8:gate_failed", chans,
                                                     _message(), run_id=8))
        while hook.requests == 0:
            await asyncio.sleep(0.01)
        sending.cancel()  # the process dies: nothing after this line of its runs
        await asyncio.gather(sending, return_exceptions=True)

    with WebhookReceiver(delay=5.0) as hook:
        allow_outbound(hook.port)
        chans = [channels.webhook(hook.url)]
        asyncio.run(cut())
        again = asyncio.run(alerts.deliver(engine, "run:8:gate_failed", chans, _message(),
                                           run_id=8))
    assert again[0]["status"] == "already" and hook.requests == 1
    [row] = deliveries(engine, run_id=8)
    assert (row["status"], row["attempts"]) == ("possibly delivered", 1)
    assert "not sent again" in row["error"] and "try 1" in row["error"]


def test_failure_recorded_with_reason_after_the_retries(engine, fast_retries, allow_outbound):
    with WebhookReceiver(fail_first=99) as hook:
        allow_outbound(hook.port)
        chans = [channels.webhook(hook.url)]
        result = asyncio.run(alerts.deliver(engine, "run:9:gate_failed", chans, _message(),
                                            run_id=9))
    assert result[0]["status"] == "failed" and result[0]["attempts"] == alerts.ATTEMPTS
    recorded = deliveries(engine, run_id=9)[0]
    assert recorded["status"] == "failed" and "HTTP 500" in recorded["error"]


def test_feishu_shape_and_its_refusal(engine, fast_retries, allow_outbound):
    with WebhookReceiver(reply='{"code": 19001, "msg": "bad token"}') as hook:
        allow_outbound(hook.port)
        chans = [channels.webhook(hook.url, shape="feishu")]
        result = asyncio.run(alerts.deliver(engine, "run:10:gate_failed", chans, _message()))
    post = hook.bodies[0]["content"]["post"]["zh_cn"]
    assert hook.bodies[0]["msg_type"] == "post"
    assert "spd_max" in str(post["content"]) and post["title"].startswith("evalcore: occ on m")
    assert result[0]["status"] == "failed" and "refused" in result[0]["error"]
    assert result[0]["attempts"] == 1  # a refusal is not retried


def test_secret_webhook_url_is_read_from_its_variable_and_masked(engine, monkeypatch,
                                                               allow_outbound):
    with WebhookReceiver() as hook:
        allow_outbound(hook.port)
        secret_url = hook.url + "?token=T0PSECRET-abcdef123456"
        monkeypatch.setenv("TEAM_HOOK_URL", secret_url)
        chan = channels.webhook(url_env="TEAM_HOOK_URL")
        asyncio.run(alerts.deliver(engine, "run:11:gate_failed", [chan], _message()))
    assert len(hook.bodies) == 1
    assert channels.label(chan).startswith("webhook plain $TEAM_HOOK_URL")
    raw = channels.webhook(secret_url)
    assert "T0PSECRET" not in channels.label(raw) and "***" in channels.label(raw)


def test_a_secret_hook_masks_its_token_but_not_its_host(monkeypatch):
    """Reading a hook URL from its variable masks the token from then on, never the
    scheme and host: a model on that host keeps its base_url in a run's snapshot (the
    whole URL once masked every URL on the host, and runs of this process failed)."""
    from evalcore.masking import mask_text

    monkeypatch.setenv("TEAM_HOOK_URL2", "http://10.9.8.7:9173/hooks/T0PSECRET-zyxw98765")
    channels.secret_url("TEAM_HOOK_URL2", "webhook")
    assert mask_text("base_url http://10.9.8.7:9173/v1") == "base_url http://10.9.8.7:9173/v1"
    assert "T0PSECRET-zyxw98765" not in mask_text("sent to /hooks/T0PSECRET-zyxw98765")


def test_smtp_mail_reaches_a_local_server(engine, monkeypatch, allow_outbound):
    needs("aiosmtpd", "requirements-dev.txt")
    with SmtpReceiver() as smtp:
        allow_outbound(smtp.port)
        chan = channels.email("oncall@example.org", host="127.0.0.1", port=smtp.port,
                              sender="evalcore@example.org")
        result = asyncio.run(alerts.deliver(engine, "run:12:gate_failed", [chan], _message(),
                                            run_id=12))
    assert result[0]["status"] == "sent"
    assert len(smtp.mails) == 1
    sender, to, text = smtp.mails[0]
    assert (sender, to) == ("evalcore@example.org", ["oncall@example.org"])
    assert re.search(r"Subject: evalcore: occ on m: gate FAIL", text)
    assert "spd_max: 0.5 (threshold 0.1)" in text and "regression:spd: 0.5 (baseline 0)" in text
    assert deliveries(engine, run_id=12)[0]["channel"].startswith("email oncall@example.org")


def test_smtp_down_is_recorded_with_the_reason(engine, fast_retries, monkeypatch,
                                               allow_outbound):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there
    allow_outbound(port)
    monkeypatch.setenv("SMTP_PASSWORD", "hunter2-very-secret")
    chan = channels.email("oncall@example.org", host="127.0.0.1", port=port, user="bot",
                          password_env="SMTP_PASSWORD")
    result = asyncio.run(alerts.deliver(engine, "run:13:gate_failed", [chan], _message(),
                                        run_id=13))
    assert result[0]["status"] == "failed"
    assert result[0]["error"] == f"could not deliver to SMTP 127.0.0.1:{port} (connection " \
        "refused or failed)"
    assert "hunter2" not in str(deliveries(engine, run_id=13))


def test_test_alert_from_the_cli_reaches_each_channel(engine, settings, fast_retries,
                                                      allow_outbound):
    from tests.conftest import cli_here
    from tests.fakes.stored_runs import seed_dataset
    from tests.pages.helpers import add_fake_model

    add_fake_model(settings)
    seed_dataset(engine, "sums", ["What is 1 plus 1?"])
    with WebhookReceiver() as hook:
        allow_outbound(hook.port)
        assert cli_here(settings, "schedules", "add", "stability", "--every", "1d", "--dataset",
                   "sums", "--model", "fake", "--webhook", hook.url).returncode == 0
        sent = cli_here(settings, "schedules", "test-alert", "1")
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.startswith("sent    webhook plain http://127.0.0.1")
    assert [b["event"] for b in hook.bodies] == ["test"]
    assert deliveries(engine, schedule_id=1)[0]["status"] == "sent"


@given(token=st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=8,
                     max_size=40),
       host=st.from_regex(r"[a-z]{1,10}\.example\.org", fullmatch=True))
@hsettings(max_examples=100, deadline=None)
def test_channel_labels_never_show_a_webhook_token(token, host):
    for url in (f"https://{host}/services/{token}", f"https://{host}/hook?token={token}",
                f"https://user:{token}@{host}/x"):
        assert token not in channels.label(channels.webhook(url))
