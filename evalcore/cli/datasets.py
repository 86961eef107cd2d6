"""`python -m evalcore datasets ...`: import, list, show, delete datasets; list formats.

Only argparse is imported at start-up; evalcore.dataset (pandas, SQLAlchemy) loads in
the handlers.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import msgspec

from evalcore.service.database import get_engine
from evalcore.service.datasets import (delete_dataset, delete_dataset_and_runs, import_dataset,
                                       store_parsed)
from evalcore.cli.common import acting_user, print_json
from evalcore.config import load_settings
from evalcore.dataset import (
    dataset_info,
    get_dataset,
    list_datasets,
    list_formats,
    load_questions,
    parse_files,
    suggested_name,
)
from evalcore.errors import DatasetError


def register(subparsers: Any) -> None:
    """Add the `datasets` command and its sub-commands."""
    parser = subparsers.add_parser("datasets", help="import, list, show and delete datasets",
                                   description="Import, list, show and delete datasets.")
    sub = parser.add_subparsers(dest="datasets_command", required=True, metavar="ACTION")

    imp = sub.add_parser("import", help="import a CSV, JSONL, JSON or XLSX file (all or nothing)")
    imp.add_argument("path", nargs="+", help="file to import; several files of one benchmark "
                     "(CBBQ's ambiguous.csv and disambiguous.csv) make one dataset")
    imp.add_argument("--name", help="dataset name (default: the file name without extension)")
    imp.add_argument("--format", default="auto",
                     help="auto (recognise by columns), mapped, or a name from `datasets formats`")
    imp.add_argument("--mapping", help="column mapping as JSON text or a .json file, e.g. "
                     "'{\"question\": \"题目\", \"reference\": \"答案\", \"task_type\": \"math\"}'")
    imp.add_argument("--sheet", metavar="NAME",
                     help="the sheet of an XLSX workbook to import (needed when several "
                          "sheets hold data)")
    imp.add_argument("--allow-duplicate", action="store_true",
                     help="import even if the same file content was imported before")
    imp.add_argument("--json", action="store_true", help="print the result as JSON")
    imp.set_defaults(func=_import)

    lst = sub.add_parser("list", help="list stored datasets")
    lst.add_argument("--json", action="store_true", help="print a JSON list")
    lst.set_defaults(func=_list)

    show = sub.add_parser("show", help="show a dataset and its first questions")
    show.add_argument("name", help="dataset name or id")
    show.add_argument("--limit", type=int, default=5, help="how many questions (default 5)")
    show.add_argument("--json", action="store_true", help="print as JSON")
    show.set_defaults(func=_show)

    rm = sub.add_parser("delete", help="delete a dataset (refused while runs use it)")
    rm.add_argument("name", help="dataset name or id")
    rm.add_argument("--with-runs", action="store_true",
                    help="delete the runs that use it first (each audited as a run delete)")
    rm.set_defaults(func=_delete)

    fmt = sub.add_parser("formats", help="list the formats recognised by their columns")
    fmt.add_argument("--json", action="store_true", help="print as JSON")
    fmt.set_defaults(func=_formats)


def _engine() -> Any:
    return get_engine(load_settings().db_url)


def _mapping(text: str | None) -> Any:
    if not text:
        return None

    raw = Path(text).read_text(encoding="utf-8") if text.strip().endswith(".json") else text
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"--mapping is not valid JSON ({exc.msg}); give an object such as "
                           "{\"question\": \"col\", \"reference\": \"col\"}") from None


def _read(path: str) -> bytes:
    if not Path(path).is_file():
        raise DatasetError(f"{path}: file not found; check the path")
    return Path(path).read_bytes()


def _table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns))
    for row in rows:
        print("  ".join(str(row.get(c, "")).ljust(widths[c]) for c in columns))


def _import(args: argparse.Namespace) -> int:
    engine = _engine()
    if len(args.path) > 1:
        if args.mapping or args.sheet:
            raise DatasetError("--mapping and --sheet read one file; import several files by "
                               "their format (--format auto or a name from `datasets formats`)")

        parsed = parse_files([(Path(p).name, _read(p)) for p in args.path], format=args.format)
        dataset = store_parsed(acting_user(engine), engine, parsed,
                                       name=args.name or suggested_name(parsed),
                                       allow_duplicate=args.allow_duplicate)
    else:
        dataset = import_dataset(acting_user(engine), engine, args.path[0],
                                         name=args.name, format=args.format,
                                         mapping=_mapping(args.mapping),
                                         allow_duplicate=args.allow_duplicate, sheet=args.sheet)
    info = dataset_info(dataset)
    if args.json:
        print_json(info)
    else:
        print(f"imported '{info['name']}' (id {info['id']}): {info['items']} items, format "
              f"{info['format']}, task {info['task_type']}, language {info['language']}")
        if info["guessed_mapping"]:
            print(f"  columns guessed from their names: {info['guessed_mapping']}; to read "
                  "them another way, import with --mapping")
        for note in info["repairs"]:
            print(f"  repaired {note}")
        for note in info["warnings"]:
            print(f"  warning: {note}")
    return 0


def _list(args: argparse.Namespace) -> int:
    infos = [dataset_info(d) for d in list_datasets(_engine())]
    if args.json:
        print_json(infos)
    elif not infos:
        print("no datasets yet; import one with `python -m evalcore datasets import PATH`")
    else:
        _table(infos, ["id", "name", "format", "task_type", "language", "items", "created_at"])
    return 0


def _show(args: argparse.Namespace) -> int:
    engine = _engine()
    dataset = get_dataset(engine, args.name)
    questions = load_questions(engine, dataset.id, limit=max(args.limit, 0))
    if args.json:
        print_json({**dataset_info(dataset),
                     "questions": msgspec.to_builtins(questions)})
        return 0
    info = dataset_info(dataset)
    for key in ("id", "name", "format", "task_type", "language", "items", "source_file",
                "created_at", "attack_level"):
        if info.get(key) is not None:
            print(f"{key:12} {info[key]}")
    for q in questions:
        print(f"\n[{q.idx}] ({q.task_type}, {q.language}) {q.question}")
        for i, choice in enumerate(q.choices):
            print(f"    choice {i}: {choice}")
        print(f"    reference: {q.reference}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    engine = _engine()
    runs: list[int] = []
    if args.with_runs:
        dataset, runs = delete_dataset_and_runs(acting_user(engine), engine, args.name)
    else:
        dataset = delete_dataset(acting_user(engine), engine, args.name)
    print(f"deleted '{dataset.name}' (id {dataset.id}, {dataset.item_count} items)"
          + (f" and its run(s) {', '.join(f'#{r}' for r in runs)}" if runs else ""))
    return 0


def _formats(args: argparse.Namespace) -> int:
    rows = [{"name": f.name, "task_type": f.task_type,
             "required": list(f.required), "description": f.description}
            for f in list_formats()]
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        required = row["required"]
        shown = ", ".join(required) if len(required) <= 8 else (
            ", ".join(required[:6]) + f", ... ({len(required)} columns)")
        print(f"{row['name']:28} {row['task_type']:12} {shown}")
    print("\nthe language (zh/en) is detected from the questions, whatever the format")
    print("anything else: import with --mapping (question, reference, choices, task_type, "
          "language, meta)")
    return 0
