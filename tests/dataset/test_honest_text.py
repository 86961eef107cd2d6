"""Files imported as their author meant them, or refused in one line naming the row, the
line or the key: encodings chosen from the whole file, and what CSV and JSON readers
silently accepted (a lone CR, a trailing Ctrl-Z, a key given twice, NaN, Infinity)."""
from __future__ import annotations

import pytest

from evalcore.dataset import parse_dataset, read_table
from evalcore.errors import DatasetError

ROWS = [f"第{i}题：小红有几颗糖？计算一加一等于几,{i}" for i in range(20)]


def _csv(lines: list[str], encoding: str) -> bytes:
    return ("\n".join(lines) + "\n").encode(encoding)


def test_gb18030_with_four_byte_characters_is_read() -> None:
    """Uyghur, Tibetan, CJK extension B and emoji are 4-byte GB18030 sequences; a file
    full of them was refused as 'not valid cp1251 text'."""
    lines = ["问题,答案"] + [f"ئۇيغۇرچە سوئال {i} བོད་ཡིག 𠀀𪚥 😀,{i}" for i in range(10)]
    df = read_table(_csv(lines, "gb18030"), "uyghur.csv")
    assert df.attrs["encoding"] == "gb18030"
    assert df["问题"].tolist()[3] == "ئۇيغۇرچە سوئال 3 བོད་ཡིག 𠀀𪚥 😀"


@pytest.mark.parametrize("lines", [
    ["質問,答え"] + [f"ｶﾀｶﾅの問題ﾃｽﾄ{i},{i}" for i in range(10)],
    ["qq,a"] + [f"ｶﾀｶﾅ ﾃｽﾄ {i},{i}" for i in range(10)],
], ids=["with-kanji", "half-width-only"])
def test_shift_jis_with_half_width_katakana_is_read(lines: list[str]) -> None:
    """Refused as unclear, or (half-width only) stored as Windows-1251 '¶А¶Е ГЅД'."""
    df = read_table(_csv(lines, "shift_jis"), "kana.csv")
    assert df.attrs["encoding"] == "shift_jis"
    assert df.iloc[:, 0].tolist()[-1] == lines[-1].split(",")[0]


def test_a_big5_line_in_a_gbk_file_is_refused_with_its_number() -> None:
    """The whole file decodes as GB18030, the Big5 line into nonsense: it was stored."""
    data = (_csv(["问题,答案"] + ROWS[:9], "gbk") + _csv(["這是繁體中文的一行測試,9"], "big5")
            + _csv(ROWS[9:], "gbk"))
    with pytest.raises(DatasetError, match=r"^big5\.csv line 11: reads as big5 \('這是繁體中文"
                                           r"的一行測試,9'\), not as gb18030"):
        read_table(data, "big5.csv")


def test_a_late_big5_line_is_found_past_the_sample() -> None:
    """The encoding is guessed from the first 400 non-ASCII lines; the check reads all."""
    data = (_csv(["问题,答案"] + ROWS * 30, "gbk") + _csv(["這是繁體中文的一行測試,9"], "big5"))
    with pytest.raises(DatasetError, match=r"line 602: reads as big5"):
        read_table(data, "late.csv")


def test_a_lone_cr_in_an_unquoted_cell_is_refused_naming_the_row() -> None:
    """It split the row: 3 items from 2 rows."""
    with pytest.raises(DatasetError, match=r"^cr\.csv row 3: a lone carriage return \(CR, "
                                           r"\\r\) outside quotes"):
        read_table(b"question,answer\nq1,1\nq\r2,2\n", "cr.csv")
    quoted = read_table(b'question,answer\nq1,1\n"q\r2",2\n', "quoted.csv")
    assert quoted["question"].tolist() == ["q1", "q\r2"]
    old_mac = read_table(b"question,answer\rq1,1\rq2,2\r", "mac.csv")
    assert old_mac["question"].tolist() == ["q1", "q2"]


@pytest.mark.parametrize("tail", [b"\x1a", b"\n\x1a", b"\n\x1a\n"])
def test_a_trailing_ctrl_z_is_left_out_and_noted(tail: bytes) -> None:
    """It became an item '\\x1a'."""
    df = read_table(b"question,answer\nq1,1\nq2,2" + tail, "dos.csv")
    assert df.values.tolist() == [["q1", "1"], ["q2", "2"]]
    assert len(df.attrs["repairs"]) == 1 and "Ctrl-Z (0x1A)" in df.attrs["repairs"][0]


@pytest.mark.parametrize(("name", "data", "message"), [
    ("dup.json", b'[{"question": "q", "answer": "1"}, {"question": "a", "question": "b"}]',
     r"^dup\.json item 2: the key 'question' appears twice in one object"),
    ("dup.jsonl", b'{"question": "q", "answer": {"x": 1, "x": 2}}\n',
     r"^dup\.jsonl line 1: key 'answer': the key 'x' appears twice"),
    ("nan.jsonl", b'{"question": "q", "answer": "1"}\n{"question": NaN, "answer": "1"}\n',
     r"^nan\.jsonl line 2: key 'question': NaN is not a JSON value"),
    ("inf.json", b'[{"question": "q", "answer": Infinity}]',
     r"^inf\.json item 1: key 'answer': Infinity is not a JSON value"),
    ("huge.json", b'[{"question": "q", "answer": 1e5000}]',
     r"^huge\.json item 1: key 'answer': the number 1e5000 is too large"),
    ("bom.json", b'[{"question": "q", "\\ufeffquestion": "r"}]',
     r"^bom\.json item 1: two keys are the column 'question'"),
])
def test_json_values_a_user_does_not_mean_are_refused(name: str, data: bytes,
                                                      message: str) -> None:
    """A key given twice kept the last; NaN became the question 'NaN', 1e5000 and
    Infinity the reference 'Infinity'."""
    with pytest.raises(DatasetError, match=message):
        parse_dataset(data, name)


@pytest.mark.parametrize("name", ["evil\u202etxt.csv", "tab\there.csv", "bell\x07.csv",
                                  "zero\u200bwidth.csv"])
def test_a_file_name_with_control_characters_is_refused(name: str, run, tmp_path) -> None:
    """The name became the dataset's, shown reordered (RTL override) or with hidden text."""
    with pytest.raises(DatasetError, match=r"^the file name .* holds the invisible character "
                                           r"U\+[0-9A-F]{4} .* rename the file"):
        parse_dataset(b"question,answer\nq,1\n", name)
    path = tmp_path / name
    path.write_bytes(b"question,answer\nq,1\n")
    code, out, err = run("import", str(path))
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "rename the file" in err


def test_an_emoji_file_name_is_kept() -> None:
    parsed = parse_dataset(b"question,answer\nq,1\n", "quiz \U0001f469\u200d\U0001f52c.csv")
    assert parsed.source_file == "quiz \U0001f469\u200d\U0001f52c.csv"


def test_charset_normalizer_breaks_only_clear_ties() -> None:
    """The second opinion picks a reading it finds clearly less chaotic, else none (the
    file is then refused as unclear, as latin1_cafe.csv is)."""
    from evalcore.dataset.encoding import _second_opinion

    russian = "Сколько будет два плюс два? Привет, как дела у тебя сегодня".encode("cp1251")
    assert _second_opinion(russian, ["cp1252", "cp1251"]) == "cp1251"
    french = "café naïve? Où est la bibliothèque? À bientôt, garçon. Déjà vu".encode("latin-1")
    assert _second_opinion(french, ["cp1252", "cp1250"]) is None


def test_a_file_of_only_a_ctrl_z_is_empty() -> None:
    with pytest.raises(DatasetError, match=r"^z\.csv: the file is empty$"):
        read_table(b"\x1a", "z.csv")


@pytest.mark.parametrize("name", ["big.json", "big.jsonl"])
def test_a_json_file_over_the_import_cap_is_refused_before_it_is_read(
        name: str, monkeypatch, tmp_path) -> None:
    """JSON is read whole; without a cap a file of any size was held, then parsed."""
    monkeypatch.setenv("EVALCORE_MAX_IMPORT_BYTES", "2048")
    record = '{"question": "%s", "answer": "1"}' % ("q" * 100)
    text = ("[" + ",".join([record] * 30) + "]") if name.endswith(".json") else \
        "\n".join([record] * 30)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"^{name.replace('.', '[.]')}: the file is "
                                           r"3,\d{3} bytes, more than the 2,048 a JSON or "
                                           r"JSONL file may hold"):
        parse_dataset(path)
