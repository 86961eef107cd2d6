"""The private jieba part-of-speech tokenizer (`evalcore.perturb.tokens`) reads jieba's
default dictionary once per process: importing `jieba.posseg` reads its tags for jieba's
global tokenizer, and the private one copies that table instead of reading the 5 MB file
again (~0.25 s of CPU in every process that segments Chinese: attack workers, test
workers). Its prefix dictionary is the one ROUGE's words use
(tests/scorers/test_text_similarity.py checks that one)."""
from __future__ import annotations

import sys

import pytest

from evalcore.perturb import tokens


def test_the_tags_are_read_once_and_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a new process: `jieba.posseg` not imported yet. Fails on a second read."""
    import jieba

    monkeypatch.delitem(sys.modules, "jieba.posseg", raising=False)
    monkeypatch.delattr(jieba, "posseg", raising=False)  # the import sets it again
    # the prefix dictionary (jieba's cache) is not what this is about: not loaded here
    monkeypatch.setattr(jieba.Tokenizer, "initialize", lambda self, dictionary=None: None)
    reads: list[str] = []
    get_dict_file = jieba.Tokenizer.get_dict_file

    def counted(self):  # type: ignore[no-untyped-def]
        caller = sys._getframe(1).f_code
        if caller.co_name == "__init__" and "posseg" in caller.co_filename:
            reads.append(caller.co_filename)  # a POSTokenizer reading the tags
        return get_dict_file(self)

    monkeypatch.setattr(jieba.Tokenizer, "get_dict_file", counted)
    pos = tokens._pos_tokenizer.__wrapped__()
    shared = sys.modules["jieba.posseg"].dt
    assert len(reads) == 1  # the import's, for the global tokenizer
    assert pos.tokenizer is not jieba.dt  # still the private dictionary
    assert pos.word_tag_tab == shared.word_tag_tab and len(pos.word_tag_tab) > 300_000
    assert pos.word_tag_tab is not shared.word_tag_tab  # synonyms may add to that one
    assert pos.word_tag_tab["苹果"] == "n"
