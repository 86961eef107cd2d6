"""An alert's text as each destination must receive it: a dataset name, a model name, a
check's detail or a run's error is data, never markup, wherever it lands.

A suite named `<!channel> <http://x/login|Session expired, sign in>` would otherwise
mention everyone in a Slack channel and show a phishing link there; in Feishu/Lark a
`<at user_id="all">` would do the same; in an HTML mail a `<a href>`.

- Slack (mrkdwn): `&`, `<` and `>` become `&amp;`, `&lt;` and `&gt;`, the escapes Slack
  documents, so no `<!channel>`, `<@U123>` or `<url|label>` survives; bare URLs (the run's
  link) are still linked by Slack itself.
- Feishu/Lark: a rich-text `post` whose paragraphs are `text` elements, which Feishu shows
  as written (no `<at>` is read in them); the run's link is an `a` element.
- E-mail: the plain text as is (a mail client shows text/plain literally) and an HTML
  alternative with every character escaped, the link an `<a>` whose address is escaped.
- Plain webhooks: JSON, whose encoder escapes what JSON needs; the fields are the values.
"""
from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

_SLACK = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def slack_text(text: str) -> str:
    """`text` for a Slack message's mrkdwn `text` field, shown as written."""
    return text.translate(_SLACK)


def _lines(message: Mapping[str, Any]) -> list[str]:
    """The text's lines without the link line (each destination links it its own way)."""
    lines = str(message["text"]).splitlines()
    if lines and lines[-1] == message.get("link"):
        lines = lines[:-1]
    return lines


def feishu_post(message: Mapping[str, Any]) -> dict[str, Any]:
    """Feishu/Lark's rich-text body: the first line as the title, one `text` paragraph per
    other line, the run's link as an `a` element."""
    lines = _lines(message)
    paragraphs: list[list[dict[str, str]]] = [[{"tag": "text", "text": line}]
                                              for line in lines[1:]]
    link = str(message.get("link") or "")
    if link:
        paragraphs.append([{"tag": "a", "text": link, "href": link}])
    return {"msg_type": "post", "content": {"post": {"zh_cn": {
        "title": lines[0] if lines else "", "content": paragraphs}}}}


def mail_html(message: Mapping[str, Any]) -> str:
    """The HTML alternative of an alert mail: the text escaped, line by line, and the link."""
    body = "<br>\n".join(html.escape(line) for line in _lines(message))
    link = html.escape(str(message.get("link") or ""), quote=True)
    anchor = f'<p><a href="{link}">{link}</a></p>' if link else ""
    return f"<html><body><p>{body}</p>{anchor}</body></html>"
