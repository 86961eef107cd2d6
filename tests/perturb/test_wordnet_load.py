"""WordNet loaded without NLTK's map of WordNet 3.0 onto itself (that it is skipped:
`tests/perturb/test_perturb_word.py::test_wordnet_loads_without_mapping_3_0_onto_itself`)
reads the same senses."""
from __future__ import annotations

from evalcore.perturb.lexicon import wordnet


def test_wordnet_reads_the_same_senses(wordnet_ready: None) -> None:
    """The map only serves multilingual data: English lookups, satellite adjectives
    included (the entries the map would have moved), are WordNet's own."""
    wn = wordnet()
    dog = wn.synsets("dog")[0]
    assert (dog.name(), dog.lexname(), dog.offset()) == ("dog.n.01", "noun.animal", 2084071)
    assert wn.lemma_from_key("dog%1:05:00::").name() == "dog"
    big = [s for s in wn.synsets("big", "a") if s.pos() == "s"]
    assert big and all(wn.synset_from_pos_and_offset("s", s.offset()) == s for s in big)
    assert len(set(wn.all_lemma_names())) == 147306
