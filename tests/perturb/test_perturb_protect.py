"""What no word swap may touch or bring in: units after numbers, quoted titles, names,
maths/science terms, offensive words; and the paraphrase table keeps the lexicon's rules."""
from __future__ import annotations

import random

import pytest

from evalcore.perturb.lexicon import load_lexicon
from evalcore.perturb.tokens import segment


def protect_of(text: str, language: str) -> dict[str, str]:
    return {t.text: t.protect for t in segment(text, language) if t.kind == "word"}


def test_units_after_numbers_titles_names_and_terms_are_protected():
    text = "小明用45分读完《安徒生童话》，光明剧院的最小公倍数问题也算出了。"
    zh = protect_of(text, "zh")
    assert zh["分"] == "unit"
    assert zh.get("安徒生") == "title" or zh.get("安徒生童话") == "title"
    assert zh["光明"] == "entity"
    start = text.index("最小公倍数")
    pos, covered = 0, []
    for tok in segment(text, "zh"):  # however jieba cuts it, every piece is kept
        if pos < start + 5 and start < pos + len(tok.text):
            covered.append(tok.protect)
        pos += len(tok.text)
    assert covered and set(covered) == {"term"}
    en = protect_of('She walked 3 blocks to read "the old man" and measure the radius.', "en")
    assert en["blocks"] == "unit"
    assert en["old"] == "title" and en["man"] == "title"
    assert en["radius"] == "term"
    assert en["walked"] == "" and en["read"] == ""


def test_blocklist_refuses_offensive_candidates(zh_synonyms_ready):
    from evalcore.perturb.word import zh_candidates

    lex = load_lexicon()
    assert lex.blocked("嫖客", "zh") and lex.blocked("妓女们", "zh")
    assert lex.blocked("Whore", "en") and not lex.blocked("guest", "en")
    found = [c for c, _ in zh_candidates("客人", "n")]
    assert found and not any(lex.blocked(c, "zh") for c in found)  # 宾客 stays, 嫖客 goes


def test_term_candidates_and_blocked_words_never_come_from_the_dictionary(wordnet_ready):
    from evalcore.perturb.word import en_candidates

    lex = load_lexicon()
    for word, pos in [("girl", "NOUN"), ("toilet", "NOUN"), ("lid", "NOUN"),
                      ("slowly", "ADV"), ("class", "NOUN")]:
        found = [c for c, _ in en_candidates(word, pos)]
        assert not any(lex.blocked(c, "en") or c in ("miss", "eyelid", "slow", "classify")
                       for c in found), (word, found)


def test_paraphrase_tables_obey_the_meaning_rules():
    lex = load_lexicon()
    numerals = lex.zh_numeral_chars
    for word, cands in lex.zh_paraphrases.items():
        for cand in cands:
            assert not lex.flips_zh_meaning(word, cand), (word, cand)
            assert not (set(cand) - set(word)) & numerals, (word, cand)  # no number added
            assert not lex.blocked(cand, "zh") and not lex.is_zh_term(cand), (word, cand)
    for (lemma, pos), cands in lex.en_paraphrases.items():
        assert pos in ("NOUN", "VERB", "ADJ", "ADV")
        for cand in cands:
            assert not lex.is_antonym(lemma, cand) and not lex.blocked(cand, "en"), cand


def test_table_swaps_keep_inflection_and_the_article(wordnet_ready):
    from evalcore.perturb.swaps import word_attack
    from evalcore.perturb.word import en_table_candidates

    assert en_table_candidates("decided", "VERB") == (("chose", "table"),)
    assert en_table_candidates("teachers", "NOUN") == (("instructors", "table"),)
    tokens = segment("Yesterday an angry teacher decided to leave early.", "en")
    text, pairs, _ = word_attack(tokens, "en", random.Random(0), replacements=3)
    assert "an mad" not in text and ("angry", "mad") not in pairs  # "a mad", never "an mad"
    assert pairs and all(new in text for _, new in pairs)


def test_the_same_word_gets_the_same_replacement(zh_synonyms_ready):
    from evalcore.perturb.swaps import word_attack

    text = "如果甲每天做5个，如果乙每天做6个，如果丙每天做7个，一共要做几天？"
    for seed in range(5):
        out, pairs, _ = word_attack(segment(text, "zh"), "zh", random.Random(seed),
                                    replacements=6)
        assert len({new for old, new in pairs if old == "如果"}) <= 1, pairs
        assert len(dict(pairs)) == len(set(pairs))  # the export's dict loses nothing


@pytest.mark.parametrize("language,text", [
    ("zh", "商店里有45个苹果，卖出了20个，还剩多少个？"),
    ("en", "The students decided to buy 3 notebooks for the test."),
])
def test_numbers_and_their_units_survive_every_seed(language, text, zh_synonyms_ready,
                                                    wordnet_ready):
    from evalcore.perturb.swaps import word_attack

    for seed in range(10):
        out, pairs, _ = word_attack(segment(text, language), language, random.Random(seed))
        assert ("45个" in out and "20个" in out) if language == "zh" else "3 notebooks" in out


def test_audit_rejections_stay_out(zh_synonyms_ready):
    from evalcore.perturb.tokens import Token
    from evalcore.perturb.word import zh_candidates, zh_word_candidates

    assert "全校" not in dict(zh_candidates("学校", "n"))  # no quantifier brought in
    assert "校友" not in dict(zh_candidates("同学", "n"))  # reviewed and rejected
    assert "同窗" not in dict(zh_candidates("同学", "n"))  # literary: the blind audit
    best = zh_word_candidates(Token("同学", "word", "n"))
    assert len(best) <= 1  # only the closest dictionary synonym, never a runner-up
    table = zh_word_candidates(Token("如果", "word", "c", stop=True))
    assert {c for c, _ in table} == {"假如", "要是"}  # the table, stop word or not
