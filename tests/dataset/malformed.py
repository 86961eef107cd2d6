"""Malformed (and nearly malformed) dataset files, generated, never stored in the repo.

Each `Case` is a file name, a function making its bytes, and the outcome every import
path must give: `refused` (a regex the one-line error must match) or `imported` (how
many items, and the exact text of some questions). `docs/hardening.md` lists them.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    """One file and what importing it must do."""

    filename: str
    make: Callable[[], bytes] = field(repr=False)
    refused: str | None = None
    """Regex the error line must match (None: the file is imported)."""
    items: int = 0
    questions: dict[int, str] = field(default_factory=dict)
    """idx -> the exact stored question text."""
    warning: str | None = None
    """Text the import's warning must contain."""
    about: str = ""

    @property
    def id(self) -> str:
        return self.filename


def _qa(rows: list[tuple[str, str]], header: str = "question,answer") -> str:
    return header + "\n" + "".join(f"{q},{a}\n" for q, a in rows)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _garbage() -> bytes:
    return random.Random(7).randbytes(5000)


def _utf8_then_bad() -> bytes:
    body = "".join(f"naïve question {i},{i}\n" for i in range(5000))
    return ("question,answer\n" + body).encode() + b"\xff\xfe,\xff\n"


def _ascii_then_bad() -> bytes:
    body = "".join(f"question {i},{i}\n" for i in range(5000))
    return ("question,answer\n" + body).encode() + b"\xff\xfe,\xff\n"


def _unclosed_late() -> bytes:
    rows = [f"q{i},{i}" for i in range(2000)]
    rows[2] = '"q2 never closed,2'
    return ("question,answer\n" + "\n".join(rows) + "\n").encode()


def _jsonl(*records: str) -> bytes:
    return ("\n".join(records) + "\n").encode()


CASES: list[Case] = [
    # --- text encodings
    Case("latin1_cafe.csv",
         lambda: _qa([("café naïve?", "1"), ("Où est la bibliothèque?", "2"),
                      ("À bientôt, garçon", "3"), ("Déjà vu", "4")]).encode("latin-1"),
         refused=r"latin1_cafe\.csv: the text encoding is unclear: line 2 reads as "
                 r"'café naïve\?,1' in cp1252 but as 'café naďve\?,1' in cp1250",
         about="Latin-1 letters that Windows-1250 reads differently (was stored as naďve)"),
    Case("latin1_same.csv",
         lambda: _qa([("élan vital", "1"), ("Grüße aus Köln", "2"), ("Bücher für Schüler", "3"),
                      ("Ça va en Österreich?", "4")]).encode("latin-1"),
         items=4, questions={0: "élan vital", 1: "Grüße aus Köln", 3: "Ça va en Österreich?"},
         about="Latin-1 that every Western encoding reads alike"),
    Case("utf8_bad_last_row.csv", _utf8_then_bad,
         refused=r"utf8_bad_last_row\.csv line 5,?002: not valid UTF-8 \(bytes ff\) while the "
                 r"rest of the file is UTF-8",
         about="5,000 UTF-8 rows, then \\xff\\xfe,\\xff (was imported as a 5,001st item '˙ţ')"),
    Case("ascii_bad_last_row.csv", _ascii_then_bad,
         refused=r"ascii_bad_last_row\.csv line 5002: not valid UTF-8 \(bytes ff\), and the "
                 r"file holds too little other text to tell its encoding",
         about="5,000 ASCII rows, then \\xff\\xfe,\\xff"),
    Case("gbk.csv", lambda: _qa([("小红有18颗糖，分给3个同学，每人几颗？", "6")]).encode("gbk"),
         items=1, questions={0: "小红有18颗糖，分给3个同学，每人几颗？"}, about="GBK (Excel on Chinese Windows)"),
    Case("gbk_bad_row.csv",
         lambda: (_qa([("小红有几颗糖？", "6")] * 50).encode("gbk") + b"\x81 bad,1\n"
                  + _qa([("一周有几天？", "7")], header="").encode("gbk")),
         refused=r"gbk_bad_row\.csv line 52: not valid gb18030 text \(bytes 81\), the encoding "
                 r"the rest of the file reads in",
         about="GBK with one row that is not GBK (was read as another encoding)"),
    Case("big5.csv", lambda: _qa([("這是繁體中文的問題嗎", "是"), ("小紅有幾顆糖？", "6")]).encode("big5"),
         items=2, questions={0: "這是繁體中文的問題嗎"}, about="Big5"),
    Case("shift_jis.csv", lambda: _qa([("日本語の質問です", "はい")]).encode("shift_jis"),
         items=1, questions={0: "日本語の質問です"}, about="Shift-JIS"),
    Case("cp1251.csv", lambda: _qa([("Сколько будет два плюс два?", "4")]).encode("cp1251"),
         items=1, questions={0: "Сколько будет два плюс два?"}, about="Windows-1251"),
    Case("utf16_bom.csv", lambda: _qa([("How many days in a week?", "7")]).encode("utf-16"),
         items=1, questions={0: "How many days in a week?"}, about="UTF-16 with BOM"),
    Case("utf16_no_bom.csv", lambda: _qa([("How many days?", "7")]).encode("utf-16-le"),
         refused=r"utf16_no_bom\.csv: column name 1 \('q\\x00u\\x00e.*'\) holds a NUL "
                 r"character .*UTF-16 saved without a byte-order mark",
         about="UTF-16 without BOM: every other byte is NUL"),
    Case("utf8_bom_bad.csv", lambda: b"\xef\xbb\xbfquestion,answer\nq,1\n\xff,2\n",
         refused=r"utf8_bom_bad\.csv line 3: not valid utf-8-sig text \(bytes ff\)",
         about="UTF-8 BOM, then a byte that is not UTF-8"),
    Case("utf16_odd_byte.csv", lambda: _qa([("q", "1")]).encode("utf-16") + b"\x41",
         refused=r"utf16_odd_byte\.csv line 3: not valid utf-16 text",
         about="UTF-16 cut in the middle of a character"),
    Case("garbage.csv", _garbage, refused=r"garbage\.csv",
         about="5,000 random bytes"),
    Case("png.csv", lambda: b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
         refused=r"png\.csv", about="an image renamed .csv"),
    Case("empty.csv", lambda: b"", refused=r"empty\.csv: the file is empty"),
    Case("bom_only.csv", lambda: b"\xef\xbb\xbf", refused=r"bom_only\.csv: the file is empty"),
    Case("whitespace.csv", lambda: b"  \n\n \t\n", refused=r"whitespace\.csv: the file is empty"),
    Case("header_only.csv", lambda: b"question,answer\n\n\n",
         refused=r"header_only\.csv: no data rows found"),
    # --- quotes and line structure
    Case("unclosed_quote.csv", lambda: b'question,answer\n"What is 1+1?,2\nq2,3',
         refused=r"unclosed_quote\.csv line 2: a quote opened on this line is never closed, so "
                 r"the rest of the file \(2 lines\) would be one cell",
         about="was one item holding the rest of the file"),
    Case("unclosed_quote_late.csv", _unclosed_late,
         refused=r"unclosed_quote_late\.csv line 4: a quote opened on this line is never "
                 r"closed, so the rest of the file \(1,998 lines\)"),
    Case("quote_swallows_rows.csv", lambda: b'question,answer\n"q1,1\nq2,2\nq3,3",9\nq4,4\n',
         items=2, questions={1: "q4"},
         warning="row 2 (lines 2-4): the cell in column 'question' runs over 3 lines, 2 of "
                 "them looking like rows of this file (first: 'q2,2')",
         about="a quote closed three lines late: imported with a warning naming row 2"),
    Case("long_multiline_cell.csv",
         lambda: ('question,answer\n"' + "\n".join(f"paragraph {i} of a long text" for i in range(30))
                  + '",1\nq2,2\n').encode(),
         items=2, questions={1: "q2"},
         warning="the file has 32 lines but 3 rows: cells span lines, the first at row 2 "
                 "(line 2)",
         about="a 30-line cell: far fewer rows than lines, imported with a warning"),
    Case("multiline_cell.csv", lambda: b'question,answer\n"Line one\nline two",1\nq2,2\n',
         items=2, questions={0: "Line one\nline two"}, about="a quoted cell with a line break"),
    Case("multiline_last_no_newline.csv", lambda: b'question,answer\nq1,1\n"a\nb",2',
         items=2, questions={1: "a\nb"}),
    Case("cr_only.csv", lambda: b"question,answer\rq1,1\rq2,2\r", items=2,
         questions={1: "q2"}, about="old Mac line ends"),
    Case("crlf.csv", lambda: b"question,answer\r\nq1,1\r\nq2,2\r\n", items=2,
         questions={0: "q1"}),
    Case("ragged.csv", lambda: b"question,answer\nq1,1\nq2,2,extra\n", items=2,
         questions={1: "q2"}, about="an unquoted comma in the last column (repaired)"),
    Case("semicolon.csv", lambda: b"question;answer\nq; one,1\n", items=1,
         questions={0: "q"}),
    Case("tabs.tsv", lambda: b"question\tanswer\nq1\t1\n", items=1, questions={0: "q1"}),
    Case("dup_columns.csv", lambda: b"question,question,answer\na,b,c\n",
         refused=r"dup_columns\.csv: column names repeat: \['question'\]"),
    Case("no_header.csv", lambda: b",\n1,2\n",
         refused=r"no_header\.csv: the first row has no column names"),
    # --- sizes
    Case("ten_thousand_columns.csv",
         lambda: (",".join(f"column_{i}" for i in range(10000)) + "\n"
                  + ",".join("x" for _ in range(10000)) + "\n").encode(),
         refused=r"columns \['column_0', .*'column_9'\] and 9,990 more match no known format",
         about="was an 89 KB 'one-line' error"),
    Case("megabyte_header.csv", lambda: ("h" * 1_000_000 + ",other\nq,1\n").encode(),
         refused=r"columns \['h{60}'\.\.\. \(1,000,000 characters\), 'other'\] match no known",
         about="a 1 MB column name (was a 1 MB error line)"),
    Case("three_mb_line.csv", lambda: b"question,answer\n" + b"x" * 3_000_000 + b",1\n",
         refused=r"three_mb_line\.csv line 2: a cell starting on this line is larger than "
                 r"1,048,576 characters \(EVALCORE_MAX_FIELD_BYTES",
         about="one 3 MB cell (the 50 MB file is measured in test_malformed_files)"),
    Case("five_mb_one_line.csv", lambda: b"q," * 2_500_000,
         refused=r"five_mb_one_line\.csv line 1: longer than 4,194,304 characters",
         about="5 MB on one line, 2.5 million cells"),
    Case("wide_chinese_cell.csv",
         lambda: ("question,answer\n" + "题" * 600_000 + ",1\n").encode(),
         refused=r"wide_chinese_cell\.csv row 2, column 'question': the cell is 1,800,000 "
                 r"bytes, more than the 1,048,576",
         about="600,000 characters = 1.8 MB of UTF-8"),
    Case("long_bad_answer.csv",
         lambda: ("id,question,segmented_text,equation,answer\n1,q,q,x=1," + "z" * 900_000
                  + "\n").encode(),
         refused=r"row 2, column 'answer': 'z{60}'\.\.\. \(900,000 characters\) is not a number",
         about="a 900 KB cell quoted in an error"),
    # --- NUL and surrogates
    Case("nul.csv", lambda: b"question,answer\nq\x00x,1\n",
         refused=r"nul\.csv row 2, column 'question': the cell holds a NUL character \(code 0\) "
                 r"at character 2"),
    Case("nul.jsonl", lambda: _jsonl('{"question": "a\\u0000b", "answer": "1"}'),
         refused=r"nul\.jsonl line 1, column 'question': the cell holds a NUL character"),
    Case("nul_key.json", lambda: b'[{"question\\u0000": "a", "answer": "1"}]',
         refused=r"nul_key\.json: column name 1 \('question\\x00'\) holds a NUL"),
    Case("lone_surrogate.jsonl",
         lambda: _jsonl('{"question": "ok", "answer": "1"}',
                        '{"question": "\\ud800 lone", "answer": "1"}'),
         refused=r"lone_surrogate\.jsonl line 2, column 'question': the cell holds the "
                 r"invalid character U\+D800 at character 1",
         about="was a 69-line UnicodeEncodeError traceback from the insert"),
    Case("lone_surrogate_nested.json",
         lambda: b'[{"question": "q", "answer": "1", "extra": {"k": ["\\udfff"]}}]',
         refused=r"lone_surrogate_nested\.json item 1, column 'extra': the cell holds the "
                 r"invalid character U\+DFFF"),
    Case("surrogate_pair.jsonl", lambda: _jsonl('{"question": "smile \\ud83d\\ude00", '
                                                '"answer": "1"}'),
         items=1, questions={0: "smile \U0001F600"}, about="a valid escaped pair"),
    # --- JSON structure
    Case("deep.json", lambda: _nested(200_000).encode(),
         refused=r"deep\.json: JSON nested more than 100 levels deep",
         about="was a 51-line RecursionError traceback"),
    Case("deep_answer.jsonl",
         lambda: _jsonl('{"question": "q", "answer": ' + _nested(100_000) + "}"),
         refused=r"deep_answer\.jsonl line 1: JSON nested more than 100 levels deep"),
    Case("deep_150.json",
         lambda: ('[{"question": "q", "answer": "1", "x": ' + _nested(150) + "}]").encode(),
         refused=r"deep_150\.json: JSON nested more than 100 levels deep",
         about="deep enough to overflow later (a page, a DB driver), not while reading"),
    Case("nested_50.json",
         lambda: ('[{"question": "q", "answer": "1", "x": ' + _nested(50) + "}]").encode(),
         items=1, questions={0: "q"}),
    Case("list_lines.jsonl", lambda: _jsonl('["q", "a"]'),
         refused=r"list_lines\.jsonl line 1: expected a JSON object"),
    Case("invalid.jsonl", lambda: _jsonl('{"question": "q", "answer": "1"}', "{oops"),
         refused=r"invalid\.jsonl line 2: not valid JSON \(Expecting property name"),
    Case("string.json", lambda: b'"just text"',
         refused=r"string\.json: expected a JSON list of objects"),
    Case("data_not_list.json", lambda: b'{"data": 5}',
         refused=r"data_not_list\.json: expected a JSON list of objects"),
    Case("empty_list.json", lambda: b"[]", refused=r"empty_list\.json: no data rows found"),
    Case("huge_int.json",
         lambda: ('[{"question": "q", "answer": ' + "9" * 5000 + "}]").encode(),
         refused=r"huge_int\.json: cannot read a value .*write long numbers as text"),
    Case("nan.json", lambda: b'[{"question": "q", "answer": "1", "x": NaN}]',
         refused=r"nan\.json item 1: key 'x': NaN is not a JSON value; write null"),
    Case("line_separator.jsonl",
         lambda: _jsonl(json.dumps({"question": "a\u2028b", "answer": "1"},
                                   ensure_ascii=False)),
         items=1, questions={0: "a\u2028b"}, about="U+2028 inside a string is not a line end"),
    Case("crlf_lines.jsonl", lambda: b'{"question": "q1", "answer": "1"}\r\n'
                               b'{"question": "q2", "answer": "2"}\r\n',
         items=2, questions={1: "q2"}),
    # --- file types
    Case("old.xls", lambda: b"\xd0\xcf\x11\xe0" + bytes(100),
         refused=r"old\.xls: old \.xls workbooks are not supported"),
    Case("fake.xlsx", lambda: b"question,answer\nq,1\n",
         refused=r"fake\.xlsx: cannot read the workbook"),
    Case("notes.pdf", lambda: b"%PDF-1.4", refused=r"notes\.pdf: unsupported file type \.pdf"),
    Case("div0.xlsx", lambda: _xlsx(b'<c r="B2" t="e"><f>1/0</f><v>#DIV/0!</v></c>'),
         refused=r"div0\.xlsx, sheet 'Sheet', cell B2: holds the error '#DIV/0!'",
         about="an error cell (crashed with TypeError, exit 1)"),
    Case("no_result.xlsx", lambda: _xlsx(b'<c r="B2"><f>1+1</f></c>'),
         refused=r"no_result\.xlsx, sheet 'Sheet': cell B2 holds a formula with no saved",
         about="a formula never calculated (was imported as an empty cell)"),
    Case("dtd.xlsx", lambda: _xlsx(b'<c r="B2"><v>1</v></c>', doctype=True),
         refused=r"dtd\.xlsx: .*declares a DOCTYPE",
         about="a DOCTYPE (entities) in a sheet (was a 3-line message)"),
    # --- honest text
    Case("gbk_big5_line.csv",
         lambda: (_qa([("小红有几颗糖？计算一加一等于几", "6")] * 9).encode("gbk")
                  + "這是繁體中文的一行測試,9\n".encode("big5")),
         refused=r"gbk_big5_line\.csv line 11: reads as big5 \('這是繁體中文的一行測試,9'\), "
                 r"not as gb18030",
         about="GBK with one Big5 line (was stored as mojibake)"),
    Case("gb18030_4byte.csv",
         lambda: _qa([(f"ئۇيغۇرچە سوئال {i} བོད་ཡིག 😀", str(i)) for i in range(5)]
                     ).encode("gb18030"),
         items=5, questions={1: "ئۇيغۇرچە سوئال 1 བོད་ཡིག 😀"},
         about="GB18030 4-byte characters (refused as 'not valid cp1251 text', or read as "
               "Windows-1251)"),
    Case("sjis_halfwidth.csv",
         lambda: _qa([(f"ｶﾀｶﾅの問題ﾃｽﾄ{i}", str(i)) for i in range(5)]).encode("shift_jis"),
         items=5, questions={0: "ｶﾀｶﾅの問題ﾃｽﾄ0"}, about="Shift-JIS with half-width katakana"),
    Case("lone_cr.csv", lambda: b"question,answer\nq1,1\nq\r2,2\n",
         refused=r"lone_cr\.csv row 3: a lone carriage return \(CR, \\r\) outside quotes",
         about="a CR inside an unquoted cell (split the row: 3 items from 2 rows)"),
    Case("ctrl_z.csv", lambda: b"question,answer\nq1,1\nq2,2\n\x1a", items=2,
         questions={1: "q2"}, about="a DOS end-of-file mark (became an item)"),
    Case("dup_keys.json", lambda: b'[{"question": "a", "question": "b", "answer": "1"}]',
         refused=r"dup_keys\.json item 1: the key 'question' appears twice in one object",
         about="a key given twice (the last was kept)"),
    Case("infinity.jsonl", lambda: b'{"question": "q", "answer": Infinity}\n',
         refused=r"infinity\.jsonl line 1: key 'answer': Infinity is not a JSON value",
         about="became the reference 'Infinity'"),
    Case("huge_float.json", lambda: b'[{"question": "q", "answer": 1e5000}]',
         refused=r"huge_float\.json item 1: key 'answer': the number 1e5000 is too large",
         about="became the reference 'Infinity'"),
]


def _xlsx(cell: bytes, doctype: bool = False) -> bytes:
    """A one-row workbook whose B2 is `cell` (XML openpyxl cannot write)."""
    import io
    import zipfile

    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["question", "answer"])
    book.active.append(["q", "PLACEHOLDER"])
    buffer = io.BytesIO()
    book.save(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'<c r="B2" t="inlineStr"><is><t>PLACEHOLDER</t></is></c>',
                                    cell)
                if doctype:
                    data = data.replace(b"<worksheet", b"<!DOCTYPE w [<!ENTITY a 'a'>]><worksheet")
            dst.writestr(info, data)
    return out.getvalue()
