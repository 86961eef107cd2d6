"""Names and model text are data in every alert: a dataset named like a Slack mention and
link reaches Slack escaped, Feishu/Lark as plain rich-text elements, an e-mail's HTML part
escaped, and a plain webhook as the exact value."""
from __future__ import annotations

import asyncio
import email
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from evalcore.monitor import alerts, channels
from evalcore.monitor.bodies import mail_html, slack_text
from tests.fakes.receivers import SmtpReceiver, WebhookReceiver
from tests.monitor.conftest import needs

PHISHING = "<!channel> <http://x/login|Session expired, sign in>"
MENTION = '<at user_id="all">all</at> & <b>bold</b>'


def _message(suite: str = PHISHING, detail: str = MENTION) -> dict:
    return alerts.build_message(
        event="gate_failed", suite=suite, model="m<@U123>", run_id=7, verdict="fail",
        checks=[{"name": "spd_max", "value": 0.5, "threshold": 0.1, "passed": False,
                 "detail": detail}],
        error="model said <!here>")


def _deliver(engine, shape: str, allow_outbound) -> dict:
    with WebhookReceiver() as hook:
        allow_outbound(hook.port)
        result = asyncio.run(alerts.deliver(engine, f"run:7:{shape}",
                                            [channels.webhook(hook.url, shape=shape)],
                                            _message()))
    assert result[0]["status"] == "sent", result
    return hook.bodies[0]


def test_slack_gets_no_mention_and_no_link_markup(engine, allow_outbound):
    text = _deliver(engine, "slack", allow_outbound)["text"]
    for raw in ("<!channel>", "<http://x/login|", "<@U123>", "<!here>", "<at ", "<b>"):
        assert raw not in text
    assert "&lt;!channel&gt; &lt;http://x/login|Session expired, sign in&gt;" in text
    assert "&amp; &lt;b&gt;" in text
    assert "http://localhost:8501/results?run=7" in text  # the run's link, bare: linked


def test_feishu_gets_plain_text_elements_and_one_link(engine, allow_outbound):
    body = _deliver(engine, "feishu", allow_outbound)
    assert body["msg_type"] == "post" and "text" not in body["content"]
    post = body["content"]["post"]["zh_cn"]
    elements = [e for paragraph in post["content"] for e in paragraph]
    assert {e["tag"] for e in elements} == {"text", "a"}
    assert [e["href"] for e in elements if e["tag"] == "a"] == [
        "http://localhost:8501/results?run=7"]
    assert PHISHING in post["title"]  # shown as written: a text, not a mention
    assert any(MENTION in e["text"] for e in elements if e["tag"] == "text")


def test_a_plain_webhook_carries_the_values_as_data(engine, allow_outbound):
    body = _deliver(engine, "plain", allow_outbound)
    assert body["suite"] == PHISHING and body["model"] == "m<@U123>"
    assert body["failed_checks"][0]["detail"] == MENTION


def test_the_mails_html_part_is_escaped(engine, allow_outbound):
    needs("aiosmtpd", "requirements-dev.txt")
    with SmtpReceiver() as smtp:
        allow_outbound(smtp.port)
        chan = channels.email("oncall@example.org", host="127.0.0.1", port=smtp.port)
        result = asyncio.run(alerts.deliver(engine, "run:7:mail", [chan], _message()))
    assert result[0]["status"] == "sent", result
    mail = email.message_from_string(smtp.mails[0][2])
    parts = {p.get_content_type(): p.get_payload(decode=True).decode()
             for p in mail.walk() if not p.is_multipart()}
    assert PHISHING in parts["text/plain"]  # plain text is shown literally
    assert "<!channel>" not in parts["text/html"] and "<at " not in parts["text/html"]
    assert "&lt;!channel&gt; &lt;http://x/login|Session expired, sign in&gt;" in \
        parts["text/html"]
    assert _tags(parts["text/html"]) == ["html", "body", "p", "br", "br", "br", "p", "a"]


def _tags(page: str) -> list[str]:
    found: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append(tag)

    Tags().feed(page)
    return found


@given(st.text(max_size=60), st.text(max_size=60))
@hsettings(max_examples=200, deadline=None)
def test_any_name_stays_text_in_slack_and_html(suite, detail):
    message = _message(suite=suite, detail=detail)
    slack = slack_text(message["text"])
    assert "<" not in slack and ">" not in slack
    assert slack.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == \
        message["text"]
    tags = _tags(mail_html(message))
    assert tags[:3] == ["html", "body", "p"] and tags[-2:] == ["p", "a"]
    assert set(tags[3:-2]) <= {"br"}
