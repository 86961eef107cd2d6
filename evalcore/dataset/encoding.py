"""Which text encoding a file is in, decided from the whole file, or a one-line refusal.

Order: a byte-order mark (UTF-16, UTF-8-sig), else UTF-8 when every byte of the file
is UTF-8, else a legacy encoding (GB18030/GBK, Big5, Shift-JIS, EUC-KR, Windows-1252,
-1250, -1251). A guess is never silent:

- a file that is UTF-8 except for a few bytes (a mostly UTF-8 file with one broken
  row) is refused naming the first line that is not UTF-8;
- a legacy encoding must decode EVERY byte of the file and read its non-ASCII lines
  as plausible text (charset_normalizer's mess ratio); when two encodings qualify and
  read the file differently (Latin-1 'café naïve' is 'café naďve' in Windows-1250) the
  file is refused, naming both with the first line where they differ. The user saves
  it as UTF-8; nothing is imported in the wrong letters.

The file is read in chunks (never its whole text), once per encoding tried.
"""
from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator
from typing import IO

from evalcore.error_text import shown
from evalcore.errors import DatasetError

Opener = Callable[[], IO[bytes]]
CHUNK_BYTES = 1 << 20
"""Bytes read at a time while checking the encoding of a file."""
LEGACY = ("gb18030", "big5", "shift_jis", "euc_kr", "cp1252", "cp1250", "cp1251")
"""Encodings tried, in this order, when a file is not UTF-8 (equal readings: the first)."""
PLAUSIBLE_MESS = 0.15
"""Largest mess ratio (charset_normalizer) of a plausible reading: Shift-JIS read as
GB18030 scores 0.175, real text 0 to 0.07."""
SAMPLE_LINES = 400
SAMPLE_LINE_BYTES = 4096
SAVE_AS_UTF8 = "save the file as UTF-8 (in Excel: 'CSV UTF-8 (comma delimited)') and import it again"
_ESCAPED = re.compile("[\udc80-\udcff]")
_WIDE = re.compile("[\u0080-\udc7f\udd00-\U0010ffff]")


def chunks(opener: Opener) -> Iterator[bytes]:
    """The file's bytes, CHUNK_BYTES at a time."""
    with opener() as fh:
        while chunk := fh.read(CHUNK_BYTES):
            yield chunk


def _hex(data: bytes) -> str:
    return " ".join(f"{b:02x}" for b in data[:8])


def first_error(opener: Opener, encoding: str) -> tuple[int, bytes] | None:
    """(line number, bad bytes) of the first bytes not valid in `encoding`; None when the
    whole file decodes."""
    decoder = codecs.getincrementaldecoder(encoding)()
    line = 1
    pending = b""
    try:
        for chunk in chunks(opener):
            pending = getattr(decoder, "buffer", b"") + chunk
            line += decoder.decode(chunk).count("\n")
        pending = getattr(decoder, "buffer", b"")
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        data = exc.object if isinstance(exc.object, bytes) else pending
        before = data[:exc.start].decode(encoding, errors="replace").count("\n")
        return line + before, data[exc.start:max(exc.end, exc.start + 1)]
    return None


def _utf8_counts(opener: Opener) -> tuple[int, int]:
    """(valid non-ASCII characters, bytes that are not UTF-8) over the whole file."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    wide = bad = 0
    for chunk in chunks(opener):
        text = decoder.decode(chunk)
        if not text.isascii():
            bad += _ESCAPED.subn("", text)[1]
            wide += _WIDE.subn("", text)[1]
    return wide, bad + _ESCAPED.subn("", decoder.decode(b"", final=True))[1]


def _non_ascii_lines(opener: Opener) -> list[tuple[int, bytes]]:
    """Up to SAMPLE_LINES lines holding a non-ASCII byte, with their numbers (long lines
    cut to SAMPLE_LINE_BYTES): what tells one legacy encoding from another."""
    found: list[tuple[int, bytes]] = []
    line, piece_of_line = 1, b""
    with opener() as fh:
        while len(found) < SAMPLE_LINES:
            piece = fh.readline(SAMPLE_LINE_BYTES)
            if not piece:
                break
            if not piece_of_line and not piece.isascii():
                found.append((line, piece.rstrip(b"\r\n")))
            if piece.endswith(b"\n"):
                line, piece_of_line = line + 1, b""
            else:
                piece_of_line = b"x"
    return found


def _reads(lines: list[tuple[int, bytes]], encoding: str) -> list[str] | None:
    """The sample lines read in `encoding`, None when they do not decode or read as mess."""
    from charset_normalizer.md import mess_ratio

    try:
        texts = [raw.decode(encoding) for _, raw in lines]
    except UnicodeDecodeError:
        try:  # a line cut inside a character: drop its last bytes
            texts = [raw.decode(encoding) if len(raw) < SAMPLE_LINE_BYTES
                     else raw[:-4].decode(encoding, errors="ignore") for _, raw in lines]
        except UnicodeDecodeError:
            return None
    if mess_ratio("\n".join(texts), maximum_threshold=1.0) >= PLAUSIBLE_MESS:
        return None
    return texts


def detect_encoding(opener: Opener, filename: str) -> str:
    """The file's encoding (see the module docstring), or a DatasetError naming the line
    and what to do."""
    with opener() as fh:
        head = fh.read(4)
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        encoding = "utf-8-sig" if head.startswith(b"\xef\xbb\xbf") else "utf-16"
        error = first_error(opener, encoding)
        if error is not None:
            raise DatasetError(f"{filename} line {error[0]}: not valid {encoding} text (bytes "
                               f"{_hex(error[1])}), the encoding its byte-order mark announces; "
                               "fix or delete that line, or " + SAVE_AS_UTF8)
        return encoding
    error = first_error(opener, "utf-8")
    if error is None:
        return "utf-8"
    wide, bad = _utf8_counts(opener)
    if wide > bad:
        raise DatasetError(f"{filename} line {error[0]}: not valid UTF-8 (bytes "
                           f"{_hex(error[1])}) while the rest of the file is UTF-8; fix or "
                           "delete that line (lines numbered from 1, as in a text editor)")
    return _legacy(opener, filename, error)


def _legacy(opener: Opener, filename: str, utf8_error: tuple[int, bytes]) -> str:
    lines = _non_ascii_lines(opener)
    readings: list[tuple[str, list[str]]] = []
    broken: list[tuple[str, int]] = []
    for encoding in LEGACY:
        texts = _reads(lines, encoding)
        if texts is None or any(texts == seen for _, seen in readings):
            continue
        error = first_error(opener, encoding)
        if error is not None:
            broken.append((encoding, error[0]))
            continue
        readings.append((encoding, texts))
    if len(readings) == 1:
        return readings[0][0]
    if len(readings) > 1:
        (first, a), (second, b) = readings[:2]
        at = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        col = next((i for i, (x, y) in enumerate(zip(a[at], b[at])) if x != y), 0)
        start = max(col - 20, 0)
        raise DatasetError(
            f"{filename}: the text encoding is unclear: line {lines[at][0]} reads as "
            f"{shown(a[at][start:start + 50])} in {first} but as "
            f"{shown(b[at][start:start + 50])} in {second}; " + SAVE_AS_UTF8)
    if broken:
        encoding, line = broken[0]
        raise DatasetError(f"{filename} line {line}: not valid {encoding} text, the encoding "
                           "the rest of the file reads in; fix or delete that line, or "
                           + SAVE_AS_UTF8)
    raise DatasetError(f"{filename}: cannot tell the text encoding (line {utf8_error[0]} is "
                       f"not UTF-8: bytes {_hex(utf8_error[1])}, and no other encoding reads "
                       "the file as text); " + SAVE_AS_UTF8)


def decode_text(data: bytes, filename: str) -> tuple[str, str]:
    """`data` decoded with `detect_encoding`'s choice: (text, encoding)."""
    import io

    encoding = detect_encoding(lambda: io.BytesIO(data), filename)
    return data.decode(encoding), encoding
