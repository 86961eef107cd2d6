"""WordNet loads without NLTK's map of WordNet 3.0 onto itself (2 s of CPU in every process
that attacks or segments English: each worker of an attack job, each CLI attack, the app),
and reads the same senses."""
from __future__ import annotations

from evalcore.perturb.lexicon import wordnet


def test_wordnet_is_loaded_without_an_offset_map(wordnet_ready: None) -> None:
    wn = wordnet()
    assert wn.get_version() == "3.0"
    assert wn.map30 is None  # NLTK's own loader builds a 128,352-entry map here


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
