"""The one place secrets are masked: every text bound for the store, a page, a log, an
export or the terminal passes through `mask_text` (or `mask_value` for nested data).

Masked, in this order:

1. every configured secret (API keys read through `ModelConfig.api_key()` register
   themselves; values of environment variables named `*_API_KEY`, `*_TOKEN`,
   `*SECRET*`, `*PASSWORD`), **and any run of 8+ characters taken from one**, so a key
   cut by a provider's own truncation or split across lines is still caught; the same
   for the key's base64 form at each of the three alignments (what an echoed
   `Authorization: Basic base64(user:key)` carries);
2. the same secrets in other spellings (`_mask_spelled`): spaced, dashed, split across
   lines, joined by zero-width characters, in another case, fullwidth, as `\\uXXXX`,
   `\\xXX`, `%XX` or `&#N;` escapes, reversed, rot13 or hex: the text and the secret are
   both reduced to a skeleton (escapes decoded, NFKC, lower case, separators dropped) and
   runs of NORM_RUN skeleton characters (HEX_RUN for hex) are masked where they came from;
3. credential patterns of any scheme, configured or not: `Bearer|Basic|Token|Digest
   <token>`, `api-key:` / `x-api-key:` / `authorization:` headers, `key=`/`token=`-like
   URL parameters, `user:password@` in URLs, `sk-...` style keys.

Callers mask the whole text first and truncate afterwards: masking after a cut lets the
part of a key before the cut escape.
"""
from __future__ import annotations

import base64
import codecs
import os
import re
import threading
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

REDACTED = "***"
MIN_RUN = 8
"""Shortest piece of a secret that is masked wherever it appears."""

_SECRET_ENV = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD)", re.IGNORECASE)
_TOKEN = r"[A-Za-z0-9._~+/=-]{8,}"
_SCHEME = re.compile(r"\b(Bearer|Basic|Token|Digest)(\s+)(" + _TOKEN + ")", re.IGNORECASE)
_HEADER = re.compile(
    r"\b((?:x-)?api[-_]?key|x-goog-api-key|authorization|proxy-authorization|access[-_]token"
    r"|auth[-_]token)(\"?\s*[:=]\s*[\"']?)(?!Bearer\b|Basic\b|Token\b|Digest\b)"
    r"([^\s\"',;&]{4,})", re.IGNORECASE)
_QUERY = re.compile(
    r"([?&;](?:api[-_]?key|key|token|access[-_]?token|auth|sig|signature|secret|password|"
    r"passwd|pwd|client[-_]secret|code)=)([^&\s\"'#]+)", re.IGNORECASE)
_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s@:]*:[^/\s@]+@", re.IGNORECASE)
_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk)-(?:[a-z]+-)?[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{30,}")

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str) -> None:
    """Mask `value` (and pieces of it) from now on in this process."""
    if value and len(value) >= MIN_RUN and value not in _registered:
        with _lock:
            _registered.add(value)


_env_cache: dict[str, Any] = {"size": -1, "names": ()}


def env_secrets(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Values of environment variables whose names say they hold a secret.

    For `os.environ` the matching names are re-listed only when the number of variables
    changes (this runs for every stored answer); their values are read each time.
    """
    if env is None:
        if _env_cache["size"] != len(os.environ):
            _env_cache["names"] = tuple(k for k in os.environ if _SECRET_ENV.search(k))
            _env_cache["size"] = len(os.environ)
        values = (os.environ.get(name, "") for name in _env_cache["names"])
        return frozenset(v for v in values if len(v) >= MIN_RUN)
    return frozenset(v for k, v in env.items() if len(v) >= MIN_RUN and _SECRET_ENV.search(k))


def known_secrets() -> frozenset[str]:
    """Registered secrets plus the environment's."""
    return env_secrets() | frozenset(_registered) if _registered else env_secrets()


def _base64_forms(secret: str) -> list[str]:
    """The base64 text `secret` becomes inside a longer encoded string, at each alignment:
    the characters that depend on its neighbours are dropped, the rest are fixed."""
    raw = secret.encode("utf-8")
    forms = []
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw).decode("ascii").rstrip("=")
        start = (pad * 4 + 2) // 3  # first char fully inside the secret
        end = ((pad + len(raw)) * 4) // 3  # chars after this mix in what follows
        forms.append(encoded[start:end])
    return [form for form in forms if len(form) >= MIN_RUN]


_ANCHOR = 4
"""Every MIN_RUN-long piece of a secret holds one of its 4-character pieces that start at
a multiple of 4: those are searched for, and only around a hit are pieces compared."""


@lru_cache(maxsize=32)
def _index(secrets: frozenset[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """(every MIN_RUN-character piece, the anchors) of every secret and its base64 forms."""
    pieces: set[str] = set()
    anchors: set[str] = set()
    for secret in secrets:
        for form in (secret, *_base64_forms(secret)):
            pieces.update(form[i:i + MIN_RUN] for i in range(len(form) - MIN_RUN + 1))
            anchors.update(form[i:i + _ANCHOR] for i in range(0, len(form) - _ANCHOR + 1, _ANCHOR))
    return frozenset(pieces), tuple(sorted(anchors))


def _spans(text: str, pieces: frozenset[str], anchors: tuple[str, ...]
           ) -> list[tuple[int, int]]:
    """Where in `text` a MIN_RUN-long piece of a secret form starts and ends."""
    spans: list[tuple[int, int]] = []
    for anchor in anchors:
        at = text.find(anchor)
        while at != -1:
            for start in range(max(0, at - _ANCHOR + 1), at + 1):
                if text[start:start + MIN_RUN] in pieces:
                    spans.append((start, start + MIN_RUN))
            at = text.find(anchor, at + 1)
    return spans


def _redact(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each of `spans` (merged where they touch) replaced by REDACTED."""
    spans.sort()
    out, last, start, end = [], 0, *spans[0]
    for s, e in spans[1:]:
        if s <= end:
            end = max(end, e)
            continue
        out += [text[last:start], REDACTED]
        last, start, end = end, s, e
    out += [text[last:start], REDACTED, text[end:]]
    return "".join(out)


def _mask_known(text: str, index: tuple[frozenset[str], tuple[str, ...]]) -> str:
    spans = _spans(text, *index)
    return _redact(text, spans) if spans else text


NORM_RUN = 12
"""Shortest run of a secret's skeleton masked in another spelling: longer than MIN_RUN, as
a skeleton drops spaces and case and so meets ordinary text more often."""
HEX_RUN = 16
"""Shortest run of a secret's hex masked (8 bytes): hex runs of digits meet numbers."""
_GRAM = 4
_STEP = NORM_RUN - _GRAM + 1
"""The skeleton is probed every _STEP characters for a _GRAM-long piece of a secret's
forms: every NORM_RUN-long (or HEX_RUN-long) run holds one probe; only around a probe that
hits are runs compared. One probe per _STEP characters costs less than a search per
anchor, and does not grow with the number of secrets."""

_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|%([0-9a-fA-F]{2})"
                     r"|&#[xX]([0-9a-fA-F]{1,6});|&#([0-9]{1,7});")
_SEPARATOR_CHARS = frozenset("-_\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061"
                             "\u2062\u2063\u2064\ufeff\uff0d\uff3f")
"""Dropped besides whitespace: dashes, underscores, soft hyphens and zero-width characters."""
_SEPARATORS = re.compile("[" + re.escape("".join(sorted(_SEPARATOR_CHARS))) + "]+")
_COMPAT = re.compile("[\u00aa\u00b2\u00b3\u00b9\u00ba\u2070-\u209f\u2100-\u215f"
                     "\u2460-\u24ff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a"
                     "\U0001d400-\U0001d7ff\U0001f130-\U0001f189]")
"""Letters and digits NFKC makes plain (fullwidth, circled, mathematical, super- and
subscript): NFKC runs only when one is present, as on CJK text (fullwidth punctuation,
not listed) it costs more than all the rest."""


def _unescape(match: re.Match[str]) -> str:
    for base, group in ((16, 1), (16, 2), (16, 3), (16, 4), (10, 5)):
        if match.group(group) is not None:
            code = int(match.group(group), base)
            return chr(code) if code < 0x110000 else ""
    return match.group(0)


def skeleton(text: str) -> str:
    """`text` reduced as `_mask_spelled` compares it: escapes decoded, compatibility forms
    (fullwidth ...) made plain, lower case, whitespace and SEPARATORS dropped."""
    if "\\" in text or "%" in text or "&#" in text:
        text = _ESCAPE.sub(_unescape, text)
    if not text.isascii() and _COMPAT.search(text):
        text = unicodedata.normalize("NFKC", text)
    text = "".join(text.lower().split())
    if text.isascii():  # str.replace is much cheaper than a regex on the usual reply
        return text.replace("-", "").replace("_", "") if "-" in text or "_" in text else text
    return _SEPARATORS.sub("", text)


def _skeleton_map(text: str) -> tuple[str, list[tuple[int, int]]]:
    """`skeleton(text)` built character by character, with the span of `text` each of its
    characters came from (slower: run only once the fast skeleton held a secret)."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    at, size = 0, len(text)
    while at < size:
        ch, end = text[at], at + 1
        if ch in "\\%&":
            escape = _ESCAPE.match(text, at)
            if escape:
                ch, end = _unescape(escape), escape.end()
        if not ch.isascii() and _COMPAT.match(ch):
            ch = unicodedata.normalize("NFKC", ch)
        for out in ch.lower():
            if not out.isspace() and out not in _SEPARATOR_CHARS:
                chars.append(out)
                spans.append((at, end))
        at = end
    return "".join(chars), spans


def _spelled_forms(secret: str) -> tuple[list[str], list[str]]:
    """(skeleton forms: the secret's, reversed, rot13 of either; hex forms) of one secret."""
    plain = skeleton(secret)
    forms = [plain, plain[::-1], codecs.encode(plain, "rot13"), codecs.encode(plain[::-1], "rot13")]
    raw = secret.encode("utf-8")
    return [f for f in forms if len(f) >= NORM_RUN], [h for h in (raw.hex(), raw[::-1].hex())
                                                     if len(h) >= HEX_RUN]


_Spelled = tuple[frozenset[str], tuple[tuple[frozenset[str], int], ...]]


@lru_cache(maxsize=32)
def _spelled_index(secrets: frozenset[str]) -> _Spelled:
    """(every _GRAM-long piece of every form, ((runs of a form kind, their length), ...))."""
    skeletons: list[str] = []
    hexes: list[str] = []
    for secret in secrets:
        forms, hex_forms = _spelled_forms(secret)
        skeletons += forms
        hexes += hex_forms
    grams = {f[i:i + _GRAM] for f in skeletons + hexes for i in range(len(f) - _GRAM + 1)}
    runs = tuple((frozenset(f[i:i + run] for f in forms for i in range(len(f) - run + 1)), run)
                 for forms, run in ((skeletons, NORM_RUN), (hexes, HEX_RUN)))
    return frozenset(grams), runs


def _probe(text: str, index: _Spelled) -> list[tuple[int, int]]:
    """Spans of `text` (a skeleton) that are runs of a secret's forms."""
    grams, runs = index
    hits = [i for i in range(0, len(text) - _GRAM + 1, _STEP) if text[i:i + _GRAM] in grams]
    spans = []
    for at in hits:
        for pieces, run in runs:
            for start in range(max(0, at - run + _GRAM), at + 1):
                if text[start:start + run] in pieces:
                    spans.append((start, start + run))
    return spans


def _mask_spelled(text: str, index: _Spelled) -> str:
    """`text` with every secret masked in the spellings `skeleton` reduces to its own."""
    if not index[0] or not _probe(skeleton(text), index):
        return text
    slow, origin = _skeleton_map(text)
    spans = [(origin[s][0], origin[e - 1][1]) for s, e in _probe(slow, index)]
    return _redact(text, spans) if spans else text


def _scheme(match: re.Match[str]) -> str:
    token = match.group(3)
    if not (any(c.isdigit() for c in token) or len(token) >= 20 or token.endswith("=")):
        return match.group(0)  # "Basic arithmetic": a word, not a credential
    return f"{match.group(1)}{match.group(2)}{REDACTED}"


def mask_text(text: str, secrets: Iterable[str] | None = None) -> str:
    """`text` with secrets and credential patterns replaced by `***` (see the module doc).

    Args:
        text: any text; the whole of it (truncate afterwards, never before).
        secrets: the secret values to mask; default `known_secrets()`.
    """
    if not text:
        return text
    found = known_secrets() if secrets is None else frozenset(s for s in secrets if s)
    if found:
        text = _mask_known(text, _index(found))
        text = _mask_spelled(text, _spelled_index(found))
    low = text.lower()  # a pattern runs only when a plain search finds its trigger
    if not _ANY_TRIGGER.search(low):  # most texts (a model's reply) hold none: one scan
        return text
    for pattern, replace, triggers in _PATTERNS:
        if any(trigger in low for trigger in triggers):
            text = pattern.sub(replace, text)
            low = text.lower()
    return text


_PATTERNS: tuple[tuple[re.Pattern[str], Any, tuple[str, ...]], ...] = (
    (_USERINFO, r"\1" + REDACTED + "@", ("://",)),
    (_SCHEME, _scheme, ("bearer", "basic", "token", "digest")),
    (_HEADER, lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}",
     ("apikey", "api-key", "api_key", "authorization", "token")),
    (_QUERY, lambda m: f"{m.group(1)}{REDACTED}", ("=",)),
    (_KEY_LIKE, REDACTED, ("sk-", "pk-", "rk-", "aiza")),
)
"""(pattern, replacement, lowercase substrings one of which a match must contain)."""
_ANY_TRIGGER = re.compile("|".join(re.escape(t) for _, _, triggers in _PATTERNS
                                   for t in triggers))


def mask_value(value: Any, secrets: Iterable[str] | None = None) -> Any:
    """`mask_text` applied to every string inside dicts, lists and tuples."""
    if isinstance(value, str):
        return mask_text(value, secrets)
    if isinstance(value, Mapping):
        return {k: mask_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [mask_value(v, secrets) for v in value]
    return value
