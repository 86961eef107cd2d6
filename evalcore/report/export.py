"""The CSV exports: the stability CSV in the method's layout, written as a stream, and
a run's raw calls (`write_calls_csv`), both with the same BOM and formula guard.

One line per question: number, question, reference answer, type, then per round k its
answer, score and reason, then answered and errored round counts, correct count and
success rate. Choices made:

- Streamed: calls are consumed one question at a time (`itertools.groupby` on item_idx),
  so a 100,000-call run never sits in memory; input must be ordered by item, then round
  (what `store.queries.iter_calls` yields). Rounds inside one item may come in any order.
- The question number is the one every page and the CLI show (Q1 is 1): the item's
  0-based `item_idx` + 1. The JSON's `stability_results` and the calls export keep the
  0-based `item_idx` key for joining rows back to the database.
- Score columns hold the 0/1 verdict the method counts (1 only when `correct` is true),
  so correct count = sum of the score columns. A round without a verdict (its call or
  its judge failed: `error`, `judge_error` or `errored` set, or `correct` None) follows
  the failure policy: `exclude` leaves its score empty (the reason says what failed),
  `as_wrong` (the seed's rule) scores it 0. A round with no call at all (not run)
  leaves its three cells empty. Both kinds count in the errored rounds column.
- Success rate is a number in [0, 1] (4 decimals), not a "80%" text, so spreadsheets
  can sort and average it: correct / answered rounds under `exclude` (empty when no
  round has a verdict), correct / n_rounds under `as_wrong`.
- UTF-8 with a BOM so Excel opens Chinese text correctly.
- Formula injection: a text cell starting with = + - @ tab or CR gets a leading
  apostrophe (OWASP "CSV injection"). Plain numbers such as "-3" or "+2.5" are left as
  they are: a bare number cannot run anything, and math references are often negative.
- No calls at all: only the header is written (an empty run still downloads a valid file).
"""
from __future__ import annotations

import csv
import io
import json
import re
from itertools import groupby, islice
from os import PathLike
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Mapping, Optional, TextIO, Union

from sqlalchemy.engine import Engine

from evalcore.dataset.numbering import item_positions
from evalcore.errors import EvalcoreError
from evalcore.metrics.stability import FAILURE_POLICIES, FailurePolicy
from evalcore.store import queries, run_items

Lang = Literal["zh", "en"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_HEADERS = {
    "zh": ("题目编号", "问题", "标准答案", "类型", "第{k}轮_答案", "第{k}轮_评分", "第{k}轮_理由",
           "作答轮数", "出错轮数", "正确次数", "成功率"),
    "en": ("question_id", "question", "reference_answer", "type", "round_{k}_answer",
           "round_{k}_score", "round_{k}_reason", "answered_rounds", "errored_rounds",
           "correct_count", "success_rate"),
}


class ExportInputError(EvalcoreError, ValueError):
    """The calls handed to the exporter are not usable (unordered, bad round number)."""


def safe_cell(value: Any) -> Any:
    """Neutralise a text cell a spreadsheet would run as a formula; numbers pass unchanged."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    if _PLAIN_NUMBER.fullmatch(value):
        return value
    return "'" + value


def header(n_rounds: int, lang: Lang = "zh") -> list[str]:
    """Column names for a run of `n_rounds` rounds."""
    if lang not in _HEADERS:
        raise ExportInputError(f"lang must be 'zh' or 'en', got {lang!r}.")
    qid, question, ref, typ, ans, score, reason, answered, errored, count, rate = _HEADERS[lang]
    cols = [qid, question, ref, typ]
    for k in range(1, n_rounds + 1):
        cols += [ans.format(k=k), score.format(k=k), reason.format(k=k)]
    return cols + [answered, errored, count, rate]


def _field(row: Any, name: str, default: Any = None) -> Any:
    if isinstance(row, Mapping):
        return row.get(name, default)
    return getattr(row, name, default)


def _no_verdict(call: Any) -> bool:
    """The round's answer or judge call failed (or no verdict was stored)."""
    return (_field(call, "correct") is None or bool(_field(call, "errored"))
            or bool(_field(call, "error")) or bool(_field(call, "judge_error")))


def _question_line(item_idx: Any, calls: Iterator[Any], n_rounds: int,
                   failure_policy: FailurePolicy) -> list[Any]:
    rounds: list[Optional[tuple[Any, Optional[int], Any]]] = [None] * n_rounds
    first = None
    answered = correct = 0
    for call in calls:
        first = first if first is not None else call
        rnd = _field(call, "round")
        if not isinstance(rnd, int) or not 1 <= rnd <= n_rounds:
            raise ExportInputError(
                f"item {item_idx}: round {rnd!r} is outside 1..{n_rounds}; pass the run's "
                "round count as n_rounds.")
        if rounds[rnd - 1] is not None:
            raise ExportInputError(f"item {item_idx}: round {rnd} appears twice; pass only "
                                   "answer-stage calls, one per item and round.")
        verdict: Optional[int] = 1 if _field(call, "correct") is True else 0
        if _no_verdict(call):
            verdict = None if failure_policy == "exclude" else 0
        else:
            answered += 1
            correct += verdict
        rounds[rnd - 1] = (_field(call, "answer"), verdict, _field(call, "reason"))
    trials = answered if failure_policy == "exclude" else n_rounds
    number = item_idx + 1 if isinstance(item_idx, int) else item_idx
    line: list[Any] = [number, _field(first, "question"), _field(first, "reference"),
                       _field(first, "task_type")]
    for r in rounds:
        line += ["", "", ""] if r is None else [r[0], r[1], r[2]]
    line += [answered, n_rounds - answered, correct,
             round(correct / trials, 4) if trials else None]
    return [safe_cell("" if v is None else v) for v in line]


def _write(rows: Iterable[Any], n_rounds: int, out: TextIO, lang: Lang,
           failure_policy: FailurePolicy) -> int:
    if not isinstance(n_rounds, int) or n_rounds < 1:
        raise ExportInputError(f"n_rounds must be a positive integer, got {n_rounds!r}.")
    if failure_policy not in FAILURE_POLICIES:
        raise ExportInputError(f"failure_policy must be one of {', '.join(FAILURE_POLICIES)}, "
                               f"got {failure_policy!r}.")
    writer = csv.writer(out)
    writer.writerow(header(n_rounds, lang))
    written = 0
    previous = None
    for item_idx, calls in groupby(rows, key=lambda r: _field(r, "item_idx")):
        if previous is not None and not item_idx > previous:
            raise ExportInputError(
                f"calls are not ordered by item: item {item_idx} comes after item {previous}. "
                "Order them by item, then round (store.queries.iter_calls does).")
        previous = item_idx
        writer.writerow(_question_line(item_idx, calls, n_rounds, failure_policy))
        written += 1
    return written


def write_stability_csv(rows: Iterable[Any], n_rounds: int,
                        out: Union[TextIO, str, PathLike[str]], lang: Lang = "zh",
                        failure_policy: FailurePolicy = "exclude") -> int:
    """Write the stability CSV; returns the number of questions written.

    Args:
        rows: calls (dicts or objects with item_idx, question, reference, task_type,
            round, answer, correct, reason), ordered by item then round; consumed lazily.
        n_rounds: the run's rounds N; fixes the columns.
        out: a path (written UTF-8 with BOM) or an open text stream (the BOM is written
            to it; open files with newline="").
        lang: "zh" or "en" headers.
        failure_policy: "exclude" or "as_wrong": how a round without a verdict counts.
    """
    if isinstance(out, (str, PathLike)):
        with Path(out).open("w", encoding="utf-8-sig", newline="") as fh:
            return _write(rows, n_rounds, fh, lang, failure_policy)
    out.write("\ufeff")
    return _write(rows, n_rounds, out, lang, failure_policy)


def write_json_rows(head: Mapping[str, Any], key: str, rows: Iterable[Any],
                    out: TextIO) -> int:
    """`{**head, key: [row, ...]}` as JSON, one row at a time (UTF-8, Chinese left
    readable): a run's calls are never held in memory as a list or as one string.
    Returns the rows written."""
    def dump(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, default=str)

    out.write("{")
    for name, value in head.items():
        out.write(f"{dump(name)}: {dump(value)}, ")
    out.write(f"{dump(key)}: [")
    written = 0
    for row in rows:
        out.write(("," if written else "") + "\n  " + dump(row))
        written += 1
    out.write("\n]}\n")
    return written


def csv_bytes(rows: Iterable[Any], n_rounds: int, lang: Lang = "zh",
              failure_policy: FailurePolicy = "exclude") -> bytes:
    """The same CSV as bytes (UTF-8 with BOM) for a download button; holds the file in memory."""
    buffer = io.StringIO(newline="")
    write_stability_csv(rows, n_rounds, buffer, lang, failure_policy)
    return buffer.getvalue().encode("utf-8")


# ------------------------------------------------------------------ a run's raw calls

CALL_COLUMNS = ("item_idx", "item_id", "round", "stage", "model", "prompt", "answer",
                "extracted", "score", "correct", "reason", "latency_ms", "prompt_tokens",
                "completion_tokens", "tokens", "error", "attempts")


def _call_dict(call: Any, idx: Mapping[int, int],
               prompts: Mapping[int, str] | None = None) -> dict[str, Any]:
    prompt_t, completion_t = call.prompt_tokens, call.completion_tokens
    tokens = None if prompt_t is None and completion_t is None else (prompt_t or 0) + (completion_t or 0)
    return {"item_idx": idx.get(call.item_id), "item_id": call.item_id, "round": call.round,
            "stage": call.stage, "model": call.model,
            "prompt": call.prompt or (prompts or {}).get(call.item_id, ""),
            "answer": call.answer, "extracted": getattr(call, "extracted", None),
            "score": call.score, "correct": call.correct, "reason": call.reason,
            "latency_ms": call.latency_ms, "prompt_tokens": prompt_t,
            "completion_tokens": completion_t, "tokens": tokens, "error": call.error,
            "attempts": call.attempts}


def iter_call_dicts(engine: Engine, run_id: int, *, errors_only: bool = False,
                    batch: int = 1000) -> Iterable[dict[str, Any]]:
    """Every stored call of a run as a dict of `CALL_COLUMNS`, in (item, round, stage)
    order, streamed `batch` calls at a time."""
    calls = (c for c in queries.iter_calls(engine, run_id, batch=batch)
             if not errors_only or c.error is not None)
    prompts = run_items.run_prompts(engine, run_id)  # answer calls do not repeat the prompt
    while True:
        chunk = list(islice(calls, batch))
        if not chunk:
            return
        idx = item_positions(engine, (c.item_id for c in chunk))
        for call in chunk:
            yield _call_dict(call, idx, prompts)


def write_calls_csv(engine: Engine, run_id: int, out: TextIO) -> int:
    """Stream every call of a run as CSV (UTF-8 BOM first, for Excel); returns the rows.

    Text cells pass through `safe_cell`: prompts and answers come from datasets
    and models, and a cell starting with "=" must not run as a spreadsheet formula.
    """
    queries.get_run(engine, run_id)
    out.write("\ufeff")
    writer = csv.writer(out)
    writer.writerow(CALL_COLUMNS)
    written = 0
    for row in iter_call_dicts(engine, run_id):
        writer.writerow([safe_cell("" if row[c] is None else row[c]) for c in CALL_COLUMNS])
        written += 1
    return written


def calls_csv_bytes(engine: Engine, run_id: int) -> bytes:
    """`write_calls_csv` as bytes for a download button (holds the file in memory)."""
    buffer = io.StringIO(newline="")
    write_calls_csv(engine, run_id, buffer)
    return buffer.getvalue().encode("utf-8")
