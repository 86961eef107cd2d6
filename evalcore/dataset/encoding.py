"""Which text encoding a file is in, decided from the whole file, or a one-line refusal.

Order: a byte-order mark (UTF-16, UTF-8-sig), else UTF-8 when every byte of the file
is UTF-8, else a legacy encoding (GB18030/GBK, Big5, Shift-JIS, EUC-KR, Windows-1252,
-1250, -1251, -1253). A guess is never silent:

- a file that is UTF-8 except for a few bytes (a mostly UTF-8 file with one broken
  row) is refused naming the first line that is not UTF-8;
- a legacy encoding must decode EVERY byte of the file and read its non-ASCII lines
  as plausible text: most of its non-ASCII characters common (`_common`: GBK read as
  Big5 gives rare characters, read as EUC-KR Hangul mixed with Hanja, Russian read as
  Windows-1252 words of accented letters). Readings are ranked by that share; when the
  best two are about as good (and charset-normalizer, asked as a second opinion, does not
  find one clearly less chaotic) and read the file differently (Latin-1 'café naïve' is
  'café naďve' in Windows-1250) the file is refused, naming both with the first line
  where they differ. The user saves it as UTF-8; nothing is imported in the wrong letters;
- in a CJK encoding, one line in another (a Big5 line in a GBK file decodes as GB18030,
  into rare characters) is refused with its number: every line of the file is measured.

The file is read in chunks (never its whole text), once per encoding tried.
"""
from __future__ import annotations

import codecs
import io
import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import IO

from evalcore.error_text import shown
from evalcore.errors import DatasetError

Opener = Callable[[], IO[bytes]]
CHUNK_BYTES = 1 << 20
"""Bytes read at a time while checking the encoding of a file."""
LEGACY = ("gb18030", "big5", "shift_jis", "euc_kr", "cp1252", "cp1250", "cp1251", "cp1253")
"""Encodings tried, in this order, when a file is not UTF-8 (equal readings: the first)."""
MIN_EVIDENCE = 8
"""Fewest non-ASCII bytes a file must hold for its legacy encoding to be judged:
a UTF-8 file of ASCII rows whose last row is b'\\xff\\xfe,\\xff' is refused rather than
read as Windows-1251 'яю,я' or Windows-1250 '˙ţ,˙'."""
MIN_SHARE = 0.5
"""Smallest share of common characters (`_common`) in a plausible reading."""
CLEAR_LEAD = 0.1
"""How much larger the best reading's share of common letters must be than the next."""
MULTIBYTE = ("gb18030", "big5", "shift_jis", "euc_kr")
"""Encodings in which a line of another one can decode without error (checked line by line)."""
RARE_IN_LINE = 3
"""Rare characters a line must hold to be checked against the other encodings."""
OPINION_MARGIN = 0.1
"""How much less chaotic charset-normalizer must find one of two close readings to pick it."""
SAMPLE_LINES = 400
SAMPLE_LINE_BYTES = 4096
SAVE_AS_UTF8 = ("save the file as UTF-8 (in Excel: 'CSV UTF-8 (comma delimited)') and import "
                "it again")
_SIGMA_INSIDE = re.compile("ς(?=[\u0370-\u03ff])")
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


def _reads(lines: list[tuple[int, bytes]], encoding: str) -> tuple[list[str], float] | None:
    """The sample lines read in `encoding` ('' for a line that does not decode) and the
    reading's score: the share of `_common` characters, times the share of lines that
    decode (a GBK file with one broken row still reads best as GBK). None below MIN_SHARE."""
    texts, failed = [], 0
    for _, raw in lines:
        try:
            texts.append(raw.decode(encoding))
        except UnicodeDecodeError:
            if len(raw) >= SAMPLE_LINE_BYTES:  # cut inside a character: drop its last bytes
                texts.append(raw[:-4].decode(encoding, errors="ignore"))
            else:
                texts.append("")
                failed += 1
    score = _common_share(texts) * (1 - failed / max(len(lines), 1))
    return (texts, score) if score >= MIN_SHARE else None


def _script(char: str) -> str:
    """'latin', 'greek', 'cyrillic' or '' (not a European letter)."""
    code = ord(char)
    if char.isalpha() and (code < 0x80 or 0xC0 <= code < 0x250):
        return "latin"
    if 0x370 <= code < 0x400:
        return "greek"
    return "cyrillic" if 0x400 <= code < 0x530 else ""


def _common(char: str, before: str, korean: bool) -> bool:
    """Whether a non-ASCII character (after the two characters `before`) is common.

    Common: kana, Hangul, a frequent Han character (GB2312 level 1 or Big5 level 1), CJK
    punctuation (Han and CJK punctuation do not count in Korean text, where they are
    rare), a European punctuation mark, a European letter unless it mixes scripts inside
    a word ('cafй'), follows two accented Latin letters ('âîïðîñ' is Russian read as
    Windows-1252) or is a capital inside a word ('ГоЛг'). Symbols (£ ® ¬ ...) are not.
    """
    code = ord(char)
    if 0x4E00 <= code <= 0x9FFF:
        if korean:
            return False
        for encoding, low, high in (("gb2312", 0xB0, 0xD7), ("big5", 0xA4, 0xC6)):
            try:
                if low <= char.encode(encoding)[0] <= high:
                    return True
            except UnicodeEncodeError:
                pass
        return False
    if 0xAC00 <= code <= 0xD7A3 or 0x3040 <= code <= 0x30FF:
        return True
    if 0x3000 <= code <= 0x303F or 0xFF01 <= code <= 0xFF5E:
        return not korean
    if 0x2010 <= code <= 0x206F or 0x25A0 <= code <= 0x25FF:  # — … “ ” • and □ ○ △
        return char != "\u201a"  # not the low quote that Shift-JIS read as cp1251 is full of
    if char in "ΰΐξ":  # Russian 'а', 'о' read as Windows-1253: rare in Greek
        return False
    if 0xFF61 <= code <= 0xFF9F:  # half-width katakana (single bytes in Shift-JIS)
        return not korean
    if code >= 0x530:
        return _four_byte_letter(char)
    kind = unicodedata.category(char) if code < 0x530 else ""
    if kind[:1] != "L":
        return kind[:1] == "P" and char not in "§¶"  # signs of Shift-JIS read as cp125x
    last = before[-1:]
    script, previous = _script(char), _script(last) if last else ""
    if previous and previous != script:
        return False
    if script == "latin" and len(before) == 2 and all(
            ord(c) >= 0x80 and _script(c) == "latin" for c in before):
        return False
    return not (kind == "Lu" and last.islower())


def _four_byte_letter(char: str) -> bool:
    """A letter, mark or emoji GBK cannot encode (Uyghur, Tibetan, rare Han, emoji):
    read as GB18030 it came from a 4-byte sequence, a pattern (lead byte, digit, lead
    byte, digit) text in another encoding does not make."""
    if unicodedata.category(char)[:1] not in ("L", "M") and unicodedata.category(char) != "So":
        return False
    try:
        char.encode("gbk")
    except UnicodeEncodeError:
        return True
    return False


def _common_share(texts: list[str]) -> float:
    """Share of the non-ASCII characters of `texts` that are `_common`."""
    korean = any(0xAC00 <= ord(c) <= 0xD7A3 for text in texts for c in text)
    common = total = 0
    for text in texts:
        for position, char in enumerate(text):
            if ord(char) > 0x7F:
                total += 1
                common += _common(char, text[max(position - 2, 0):position], korean)
        common -= len(_SIGMA_INSIDE.findall(text))  # a Greek final sigma inside a word:
        # Russian 'т' read as Windows-1253
    return common / max(total, 1)


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
    if sum(len(raw) - len(raw.decode("latin-1").encode("ascii", "ignore"))
           for _, raw in lines) < MIN_EVIDENCE:
        raise DatasetError(f"{filename} line {utf8_error[0]}: not valid UTF-8 (bytes "
                           f"{_hex(utf8_error[1])}), and the file holds too little other text "
                           "to tell its encoding; fix or delete that line, or " + SAVE_AS_UTF8)
    readings: list[tuple[str, list[str], float]] = []
    for encoding in LEGACY:
        read = _reads(lines, encoding)
        if read is not None and all(read[0] != seen for _, seen, _ in readings):
            readings.append((encoding, *read))
    if not readings:
        raise DatasetError(f"{filename}: cannot tell the text encoding (line {utf8_error[0]} "
                           f"is not UTF-8: bytes {_hex(utf8_error[1])}, and no other encoding "
                           "reads the file as text); " + SAVE_AS_UTF8)
    readings.sort(key=lambda reading: -reading[2])  # stable: LEGACY order among equals
    best, a, score = readings[0]
    error = first_error(opener, best)
    if error is not None:
        raise DatasetError(f"{filename} line {error[0]}: not valid {best} text (bytes "
                           f"{_hex(error[1])}), the encoding the rest of the file reads in; "
                           "fix or delete that line, or " + SAVE_AS_UTF8)
    rivals = [r for r in readings[1:] if score - r[2] < CLEAR_LEAD
              and first_error(opener, r[0]) is None]
    if rivals:
        second, b, _ = rivals[0]
        chosen = _second_opinion(b"\n".join(raw for _, raw in lines), [best, second])
        if chosen is None:
            raise _unclear(filename, lines, (best, a), (second, b))
        best = chosen
    if best in MULTIBYTE:
        _check_lines(opener, filename, best)
    return best


def _unclear(filename: str, lines: list[tuple[int, bytes]], first: tuple[str, list[str]],
             second: tuple[str, list[str]]) -> DatasetError:
    """The refusal naming the first line two readings of the file differ on."""
    (best, a), (other, b) = first, second
    at = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
    col = next((i for i, (x, y) in enumerate(zip(a[at], b[at])) if x != y), 0)
    start = max(col - 20, 0)
    return DatasetError(
        f"{filename}: the text encoding is unclear: line {lines[at][0]} reads as "
        f"{shown(a[at][start:start + 50])} in {best} but as "
        f"{shown(b[at][start:start + 50])} in {other}; " + SAVE_AS_UTF8)


def _second_opinion(sample: bytes, rivals: list[str]) -> str | None:
    """charset-normalizer's choice between two readings our own measure finds about as
    good: the one it finds clearly less chaotic (by OPINION_MARGIN), else None."""
    from charset_normalizer import from_bytes

    chaos = {codecs.lookup(m.encoding).name: m.chaos
             for m in from_bytes(sample, cp_isolation=rivals)}
    known = sorted((chaos.get(codecs.lookup(r).name, 1.0), r) for r in rivals)
    if known[0][0] + OPINION_MARGIN <= known[1][0]:
        return known[0][1]
    return None


def _check_lines(opener: Opener, filename: str, encoding: str) -> None:
    """Refuse a line (anywhere in the file) that reads as rare characters in `encoding`
    but as common text in another: a GBK file with one Big5 line decodes whole as GB18030,
    that line as nonsense. Read in blocks of whole lines (LF is never part of a CJK
    character); only lines holding RARE_IN_LINE rare characters are looked at closely."""
    line, carry = 1, b""
    for chunk in chunks(opener):
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        if not cut and len(data) < 4 * CHUNK_BYTES:
            carry = data
            continue
        cut = cut or len(data)
        _check_block(data[:cut], line, filename, encoding)
        line, carry = line + data.count(b"\n", 0, cut), data[cut:]
    if carry:
        _check_block(carry, line, filename, encoding)


def _check_block(block: bytes, first: int, filename: str, encoding: str) -> None:
    text = block.decode(encoding, errors="replace")
    rare: dict[int, int] = {}
    offset = position = 0
    for found in _rare_pattern().finditer(text):
        offset += text.count("\n", position, found.start())
        position = found.start()
        rare[offset] = rare.get(offset, 0) + 1
    suspects = [at for at, count in rare.items() if count >= RARE_IN_LINE]
    if not suspects:
        return
    lines = block.split(b"\n")
    for at in suspects:
        raw = lines[at]
        mine = raw.decode(encoding, errors="replace").rstrip("\r")
        here = _common_share([mine])
        for other in LEGACY:
            try:
                reading = raw.decode(other).rstrip("\r")
            except UnicodeDecodeError:
                continue
            if other != encoding and _common_share([reading]) - here >= CLEAR_LEAD * 3:
                raise DatasetError(
                    f"{filename} line {first + at}: reads as {other} ({shown(reading[:40])}), "
                    f"not as {encoding} like the rest of the file (where it would be "
                    f"{shown(mine[:40])}); save that line in {encoding}, or " + SAVE_AS_UTF8)


@lru_cache(maxsize=1)
def _rare_pattern() -> re.Pattern[str]:
    """Han characters that are not frequent (`_common`) and private-use characters (what
    GB18030 makes of bytes no text holds): found in C over a whole block."""
    rare = "".join(chr(c) for c in range(0x4E00, 0xA000) if not _common(chr(c), "", False))
    return re.compile(f"[{rare}\ue000-\uf8ff]")


def decode_text(data: bytes, filename: str) -> tuple[str, str]:
    """`data` decoded with `detect_encoding`'s choice: (text, encoding)."""
    encoding = detect_encoding(lambda: io.BytesIO(data), filename)
    return data.decode(encoding), encoding
