"""Workbooks made in tests: ordinary ones (openpyxl) and a zip bomb built in a second.

The bomb is one sheet whose cell B2 holds `size` letters 'A'. Compressing gigabytes is
slow; instead one 16 MiB block is compressed once after a full flush (which resets the
compressor's window, so every such block compresses to the same bytes) and repeated.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

BLOCK = 1 << 24


def workbook(path: Path, sheets: dict[str, list[list[Any]]]) -> Path:
    """An .xlsx with one sheet per entry, rows appended as given."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def zip_bomb(path: Path, size: int = 2 << 30) -> Path:
    """A ~2 MB .xlsx whose sheet unpacks to `size` bytes (a multiple of 16 MiB), in one cell."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["question", "answer"])
    book.active.append(["q", "PLACEHOLDER"])
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(buffer)
    members = []
    for info in source.infolist():
        data = source.read(info.filename)
        if b"PLACEHOLDER" not in data:
            members.append((info.filename, _deflate([data]), zlib.crc32(data), len(data)))
            continue
        head, tail = data.split(b"PLACEHOLDER")
        block = b"A" * BLOCK
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        first = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
        repeated = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
        last = compressor.compress(tail) + compressor.flush(zlib.Z_FINISH)
        crc = zlib.crc32(head)
        block_crc_runs = size // BLOCK
        for _ in range(block_crc_runs):
            crc = zlib.crc32(block, crc)
        crc = zlib.crc32(tail, crc)
        body = first + repeated * block_crc_runs + last
        members.append((info.filename, body, crc, len(head) + size + len(tail)))
    path.write_bytes(_zip(members))
    return path


def _deflate(parts: list[bytes]) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return b"".join(compressor.compress(p) for p in parts) + compressor.flush()


def _zip(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip file of deflated members (sizes below 4 GiB: no zip64 needed)."""
    out, central = io.BytesIO(), io.BytesIO()
    for name, body, crc, size in members:
        offset = out.tell()
        encoded = name.encode()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(body),
                              size, len(encoded), 0) + encoded + body)
        central.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21,
                                  crc, len(body), size, len(encoded), 0, 0, 0, 0, 0, offset)
                      + encoded)
    start, directory = out.tell(), central.getvalue()
    out.write(directory)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                          len(directory), start, 0))
    return out.getvalue()
