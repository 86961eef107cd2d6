"""Original vs attacked text as HTML with the changes marked, for human review.

A reviewer must see exactly what an attack changed: an inserted "$" in a Chinese math
problem or a swapped synonym in an English question. The diff runs on tokens that
match how attacks work: one token per CJK character (Chinese has no spaces, and
character-level attacks insert single symbols), words, numbers, whitespace runs and
single punctuation marks elsewhere. A short replaced stretch that is still similar is
refined to a character diff, so "hello" -> "hel$lo" shows the "$", not two whole words.

Every piece of text goes through `html.escape` before it is wrapped in markup: questions
and attacked text are untrusted (datasets, LLM translations, reviewer edits), and the
pages render this HTML. "$" becomes "&#36;" and newlines "<br>" so the output is also
safe in Markdown (no LaTeX, no block breaks). Pure standard library (difflib).
"""
from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass
from typing import Literal

Tag = Literal["equal", "insert", "delete", "replace"]

_CJK = (r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
        r"\U00020000-\U0002fa1f")
_TOKEN = re.compile(rf"[{_CJK}]|(?:(?![{_CJK}])[^\W\d_])+|\d+(?:[.,]\d+)*|\s+|.", re.DOTALL)
_REFINE_RATIO = 0.5  # replaced stretches this similar get a character-level sub-diff
_REFINE_MAX = 64  # ... when short: a long rewrite reads better as one replacement

DIFF_CSS = """
.ec-diff{display:grid;grid-template-columns:1fr 1fr;gap:8px;font-size:0.95em}
.ec-diff>div{border:1px solid #ddd;border-radius:6px;padding:6px 10px;white-space:pre-wrap;
  word-break:break-word}
.ec-diff .ec-label{font-size:0.75em;color:#777;margin-bottom:2px}
.ec-diff del{background:#fdd;color:#a00;text-decoration:line-through}
.ec-diff ins{background:#dfd;color:#060;text-decoration:none;font-weight:600}
.ec-diff del.ec-rep{background:#fec;color:#a50;text-decoration:none}
.ec-diff ins.ec-rep{background:#fec;color:#a50}
"""
"""Styles for the classes below; pages include it once in a <style> element."""


@dataclass(frozen=True)
class DiffOp:
    """One stretch of the diff: `old` is the original's text, `new` the attacked text's."""

    tag: Tag
    old: str
    new: str


def tokenize(text: str) -> list[str]:
    """Tokens joining back to `text`: CJK characters, words, numbers, spaces, punctuation."""
    return _TOKEN.findall(text)


def _append(ops: list[DiffOp], tag: Tag, old: str, new: str) -> None:
    if not old and not new:
        return
    if ops and ops[-1].tag == tag:
        last = ops[-1]
        ops[-1] = DiffOp(tag, last.old + old, last.new + new)
    else:
        ops.append(DiffOp(tag, old, new))


def _diff(a: list[str], b: list[str], ops: list[DiffOp], refine: bool) -> None:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old, new = "".join(a[i1:i2]), "".join(b[j1:j2])
        if (refine and tag == "replace" and max(len(old), len(new)) <= _REFINE_MAX
                and difflib.SequenceMatcher(None, old, new).ratio() >= _REFINE_RATIO):
            _diff(list(old), list(new), ops, refine=False)
        else:
            _append(ops, tag, old, new)  # type: ignore[arg-type]


def diff_ops(original: str, attacked: str) -> list[DiffOp]:
    """The changes from `original` to `attacked`, adjacent stretches of one kind merged."""
    ops: list[DiffOp] = []
    _diff(tokenize(original or ""), tokenize(attacked or ""), ops, refine=True)
    return ops


def escape_text(text: str) -> str:
    """HTML-escape `text`, also "$" (Markdown math) and newlines (Markdown block breaks)."""
    return html.escape(text, quote=True).replace("$", "&#36;").replace("\n", "<br>")


def _mark(tag: str, text: str, rep: bool) -> str:
    if not text:
        return ""
    cls = ' class="ec-rep"' if rep else ""
    return f"<{tag}{cls}>{escape_text(text)}</{tag}>"


def original_html(ops: list[DiffOp]) -> str:
    """The original text with deleted and replaced stretches marked."""
    return "".join(escape_text(op.old) if op.tag == "equal"
                   else _mark("del", op.old, op.tag == "replace") for op in ops)


def attacked_html(ops: list[DiffOp]) -> str:
    """The attacked text with inserted and replacing stretches marked."""
    return "".join(escape_text(op.new) if op.tag == "equal"
                   else _mark("ins", op.new, op.tag == "replace") for op in ops)


def side_by_side_html(original: str, attacked: str, *,
                      labels: tuple[str, str] = ("original", "attacked")) -> str:
    """Two boxes, original left and attacked right, with the differences highlighted."""
    ops = diff_ops(original, attacked)
    left, right = (escape_text(label) for label in labels)
    return ('<div class="ec-diff">'
            f'<div><div class="ec-label">{left}</div>{original_html(ops)}</div>'
            f'<div><div class="ec-label">{right}</div>{attacked_html(ops)}</div>'
            "</div>")
