"""Several files of one benchmark read as one dataset.

CBBQ ships each category as two files, `ambiguous.csv` and `disambiguous.csv`; its bias
score needs both contexts, so one suite is both files. Each file is parsed on its own (every
row checked, errors naming that file), then the questions are numbered on as one dataset.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

import msgspec

from evalcore.dataset.importer import parse_dataset
from evalcore.dataset.records import ParsedDataset
from evalcore.errors import DatasetError


def parse_files(files: Sequence[tuple[str, bytes]], format: str = "auto") -> ParsedDataset:
    """One dataset of every (file name, bytes) in `files`, read in the same `format`.

    Refused (naming the file) when the files are read as different formats or task
    types: a BBQ file and a CBBQ file are two suites, not one. With several files each
    question's meta names its file (`source_file`)."""
    if not files:
        raise DatasetError("no file given; choose one or more files")
    parts = [parse_dataset(data, name, format=format) for name, data in files]
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    for part in parts[1:]:
        if (part.format, part.task_type) != (first.format, first.task_type):
            raise DatasetError(f"{part.source_file}: read as {part.format} ({part.task_type}) "
                               f"but {first.source_file} as {first.format} "
                               f"({first.task_type}); import them as separate datasets")
    questions = []
    for part in parts:
        for q in part.questions:
            questions.append(msgspec.structs.replace(
                q, idx=len(questions), meta={**q.meta, "source_file": part.source_file}))
    languages = Counter(q.language for q in questions)
    digest = hashlib.sha256("\n".join(p.sha256 for p in parts).encode("ascii")).hexdigest()
    meta = {**first.meta, "source_files": [p.source_file for p in parts],
            "languages": dict(languages)}
    return ParsedDataset(format=first.format, task_type=first.task_type,
                         language=languages.most_common(1)[0][0], questions=questions,
                         source_file=" + ".join(p.source_file for p in parts),
                         sha256=digest, meta=meta)


def suggested_name(parsed: ParsedDataset) -> str:
    """A suite name: "cbbq-SES" when every item has one category, else the file stems."""
    categories = {str(q.meta.get("category") or "") for q in parsed.questions}
    if len(categories) == 1 and "" not in categories:
        return f"{parsed.format}-{categories.pop()}"
    stems = [name.rsplit(".", 1)[0] for name in parsed.meta.get("source_files")
             or [parsed.source_file]]
    return "+".join(stems)
