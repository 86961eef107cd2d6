"""Stored runs for the Results page and the CLI: the run list, one run's details and raw
calls, and two stability runs side by side.

Comparing two stability runs (`compare_stability`):

- Each side is the run's own `stability_report`, so every number here agrees with the
  run's JSON and CSV downloads.
- Questions are joined on the item when both runs used the same dataset (the item index
  in that dataset, which is one-to-one with the item id). Runs of different datasets are
  joined on the question text (Unicode NFKC, whitespace collapsed); a text that occurs
  several times is paired by occurrence (the 2nd copy in A with the 2nd copy in B), so
  a duplicated question can never be counted twice. Questions found in one run only
  are counted, never guessed.
- Per matched question, delta = rate B - rate A (positive: B is right more often).
- The paired test is scipy's Wilcoxon signed-rank test on (rate B, rate A), two-sided,
  `method="auto"` (exact or permutation p-value for small samples, normal
  approximation for large ones). Zero handling: `zero_method="wilcox"`, the classic
  rule and scipy's default: questions whose rate did not change say nothing about
  which run is better and are dropped; `n_changed` says how many pairs remained. With
  no changed question there is no test (`None`, with the reason).
- The two runs may have different N: rates stay comparable (both in [0, 1]); the
  distribution bins (right j of N times) are listed side by side for j = 0..max(N),
  `None` where a run has no such bin.

pandas and scipy are imported inside functions to keep `import evalcore` fast.
"""
from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any, TextIO

from sqlalchemy.engine import Engine

from evalcore.errors import RunError
from evalcore.runner.start import is_stale

if TYPE_CHECKING:
    import pandas as pd

TOP_CHANGED = 20
"""How many of the most changed questions a comparison lists."""
ZERO_METHOD = "wilcox"
"""Wilcoxon zero handling: unchanged questions are dropped (see the module doc)."""

RUN_COLUMNS = ("id", "kind", "status", "name", "model", "judge", "dataset", "rounds", "done",
               "total", "progress", "errors", "retries", "cancel_requested", "stale",
               "created_at", "started_at", "finished_at", "duration_s")
CALL_COLUMNS = ("item_idx", "item_id", "round", "stage", "model", "prompt", "answer",
                "extracted", "score", "correct", "reason", "latency_ms", "prompt_tokens",
                "completion_tokens", "tokens", "error", "attempts")
SUMMARY_FIELDS = ("mean", "std", "errored_rounds")


class CompareError(RunError):
    """Two runs cannot be compared (not stability runs, no results yet)."""


# ------------------------------------------------------------------ the run list


def _duration_s(run: Any, now: datetime) -> float | None:
    from evalcore.report.timing import elapsed_seconds

    return elapsed_seconds(run, now)


def runs_frame(runs: Iterable[Any], datasets: Mapping[int, str] | None = None,
               now: datetime | None = None, *, workers_busy: bool = False) -> pd.DataFrame:
    """One row per run (the store's Run rows) for the browser, in the order given.

    `datasets` maps dataset ids to names (ids are shown when missing); `stale` marks a
    queued/running run whose process is gone (a queued one is not while `workers_busy`:
    it waits its turn); `duration_s` runs to now for a live run.
    """
    import pandas as pd

    now = now or datetime.now(UTC)
    names = datasets or {}
    rows = []
    for run in runs:
        rows.append({
            "id": int(run.id), "kind": run.kind, "status": run.status, "name": run.name,
            "model": run.model, "judge": run.judge,
            "dataset": (names.get(run.dataset_id, str(run.dataset_id))
                        if run.dataset_id is not None else ""),
            "rounds": run.rounds, "done": run.done, "total": run.total,
            "progress": min(run.done / run.total, 1.0) if run.total else 0.0,
            "errors": run.errors, "retries": run.retries,
            "cancel_requested": bool(run.cancel_requested), "stale": is_stale(run, now, workers_busy=workers_busy),
            "created_at": run.created_at, "started_at": run.started_at,
            "finished_at": run.finished_at, "duration_s": _duration_s(run, now)})
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def filter_runs(frame: pd.DataFrame, *, kind: Sequence[str] = (), status: Sequence[str] = (),
                model: Sequence[str] = (), dataset: Sequence[str] = ()) -> pd.DataFrame:
    """The rows of `runs_frame` matching every non-empty filter (an empty filter keeps all)."""
    mask = frame["id"].notna()
    for column, wanted in (("kind", kind), ("status", status), ("model", model),
                           ("dataset", dataset)):
        if wanted:
            mask &= frame[column].isin(list(wanted))
    return frame[mask].reset_index(drop=True)


SUMMARY_RUN_COLUMNS = ("id", "kind", "status", "name", "model", "judge", "dataset_id", "rounds",
                       "done", "total", "errors", "retries", "cancel_requested", "created_at",
                       "started_at", "finished_at", "heartbeat_at")
"""What the run list reads: never `config` (model snapshots, item id lists) or calls."""
PAGE_SIZE = 100


def _run_query(columns: Sequence[Any], *, kind: Sequence[str], status: Sequence[str],
               model: Sequence[str], dataset: Sequence[str]) -> Any:
    from sqlalchemy import select

    from evalcore.store.tables import Dataset, Run

    query = select(*columns).select_from(Run).outerjoin(Dataset, Dataset.id == Run.dataset_id)
    for column, wanted in ((Run.kind, kind), (Run.status, status), (Run.model, model),
                           (Dataset.name, dataset)):
        if wanted:
            query = query.where(column.in_(list(wanted)))  # type: ignore[union-attr]
    return query


def run_list(engine: Engine, *, kind: Sequence[str] = (), status: Sequence[str] = (),
             model: Sequence[str] = (), dataset: Sequence[str] = (), limit: int = PAGE_SIZE,
             offset: int = 0, now: datetime | None = None) -> tuple[pd.DataFrame, int]:
    """One page of the run list, newest first, filtered and paged in SQL, reading the
    summary columns only; returns (`runs_frame` rows, runs matching the filters)."""
    from types import SimpleNamespace

    from sqlalchemy import func

    from evalcore.store.db import reader
    from evalcore.store.tables import Dataset, Run

    filters = {"kind": kind, "status": status, "model": model, "dataset": dataset}
    columns = [getattr(Run, c) for c in SUMMARY_RUN_COLUMNS]
    query = (_run_query([*columns, Dataset.name.label("dataset_name")], **filters)
             .order_by(Run.id.desc()).limit(max(limit, 0)).offset(max(offset, 0)))  # type: ignore[union-attr]
    count = _run_query([func.count(Run.id)], **filters)
    with reader(engine).connect() as conn:
        rows = [SimpleNamespace(**row._mapping) for row in conn.execute(query)]
        total = int(conn.execute(count).scalar_one())
    names = {r.dataset_id: r.dataset_name for r in rows if r.dataset_name is not None}
    from evalcore.store.jobs import busy_workers

    busy = any(r.status == "queued" for r in rows) and bool(busy_workers(engine))
    return runs_frame(rows, names, now=now, workers_busy=busy), total


def run_filter_options(engine: Engine) -> dict[str, list[str]]:
    """The distinct kinds, statuses, models and dataset names of stored runs (for filters)."""
    from sqlalchemy import select

    from evalcore.store.db import reader
    from evalcore.store.tables import Dataset, Run

    queries = {"kind": select(Run.kind).distinct(), "status": select(Run.status).distinct(),
               "model": select(Run.model).distinct(),
               "dataset": select(Dataset.name).where(
                   Dataset.id.in_(select(Run.dataset_id).distinct()))}  # type: ignore[union-attr]
    with reader(engine).connect() as conn:
        return {key: sorted(str(v) for (v,) in conn.execute(q) if v is not None)
                for key, q in queries.items()}


def run_details(engine: Engine, run_id: int) -> dict[str, Any]:
    """What the details view shows: the run's settings (spec and model snapshots, which
    hold env var names, never keys), progress, timing (elapsed `duration_s`, and
    `active_s` without the pauses, `report.timing`), token usage and errors."""
    from evalcore.report.timing import active_seconds
    from evalcore.runner.start import waiting_text
    from evalcore.store import queries
    from evalcore.store.jobs import busy_workers

    run = queries.get_run(engine, run_id)
    now = datetime.now(UTC)
    dataset = None
    if run.dataset_id is not None:
        from evalcore.dataset import get_dataset

        try:
            dataset = get_dataset(engine, int(run.dataset_id)).name
        except Exception:  # noqa: BLE001 - a deleted dataset must not hide the run
            dataset = f"#{run.dataset_id} (deleted)"
    config = run.config or {}
    return {
        "id": run.id, "kind": run.kind, "status": run.status, "name": run.name,
        "model": run.model, "judge": run.judge, "rounds": run.rounds, "dataset": dataset,
        "created_by": run.created_by,
        "spec": queries.redact_secrets(config.get("spec", {})),
        "models": queries.redact_secrets(config.get("models", {})),
        "items": len(queries.run_item_ids(engine, run_id)),
        "progress": queries.progress(engine, run_id),
        "stale": is_stale(run, now, workers_busy=bool(busy_workers(engine))),
        "waiting": waiting_text(engine, run, now),
        "timing": {"created_at": run.created_at, "started_at": run.started_at,
                   "finished_at": run.finished_at, "heartbeat_at": run.heartbeat_at,
                   "duration_s": _duration_s(run, now),
                   "active_s": active_seconds(engine, run_id)},
        "usage": queries.call_stats(engine, run_id),
        "error": run.error,
    }


# ------------------------------------------------------------------ raw calls


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


def _item_positions(engine: Engine, item_ids: Iterable[int]) -> dict[int, int]:
    from evalcore.dataset.numbering import item_positions

    return item_positions(engine, item_ids)


def iter_call_dicts(engine: Engine, run_id: int, *, errors_only: bool = False,
                    batch: int = 1000) -> Iterable[dict[str, Any]]:
    """Every stored call of a run as a dict of `CALL_COLUMNS`, in (item, round, stage)
    order, streamed `batch` calls at a time."""
    from evalcore.store import queries

    calls = (c for c in queries.iter_calls(engine, run_id, batch=batch)
             if not errors_only or c.error is not None)
    prompts = queries.run_prompts(engine, run_id)  # answer calls do not repeat the prompt
    while True:
        chunk = list(islice(calls, batch))
        if not chunk:
            return
        idx = _item_positions(engine, (c.item_id for c in chunk))
        for call in chunk:
            yield _call_dict(call, idx, prompts)


def calls_frame(engine: Engine, run_id: int, limit: int = 500, *,
                errors_only: bool = False) -> pd.DataFrame:
    """The first `limit` calls of a run (prompt, answer, score, reason, latency, tokens,
    error, attempts, and cost from the run's model prices; None without a price),
    optionally only those that ended in an error."""
    import pandas as pd

    from evalcore.store import queries

    from evalcore.metrics.cost import call_cost, prices_of

    run = queries.get_run(engine, run_id)  # RunError for an unknown run
    rows = list(islice(iter_call_dicts(engine, run_id, errors_only=errors_only,
                                       batch=max(min(limit, 1000), 1)), max(limit, 0)))
    frame = pd.DataFrame(rows, columns=list(CALL_COLUMNS))
    models = (run.config or {}).get("models") or {}
    frame["cost"] = [call_cost(r["prompt_tokens"], r["completion_tokens"],
                               *prices_of(models.get(r["model"] or run.model, {})))
                     for r in rows]
    return frame


def write_calls_csv(engine: Engine, run_id: int, out: TextIO) -> int:
    """Stream every call of a run as CSV (UTF-8 BOM first, for Excel); returns the rows.

    Text cells pass through `export.safe_cell`: prompts and answers come from datasets
    and models, and a cell starting with "=" must not run as a spreadsheet formula.
    """
    from evalcore.report.export import safe_cell
    from evalcore.store import queries

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


# ------------------------------------------------------------------ two stability runs


def question_key(text: str | None) -> str:
    """The text two datasets' copies of a question share (NFKC, whitespace collapsed)."""
    return " ".join(unicodedata.normalize("NFKC", text or "").split())


def _side(report: Mapping[str, Any], run: Any, dataset: str | None) -> dict[str, Any]:
    summary = report["summary"]
    return {"run_id": report["run_id"], "name": run.name, "status": report["status"],
            "model": report["model"], "judge": report["judge"], "dataset_id": run.dataset_id,
            "dataset": dataset, "repetition_count": report["repetition_count"],
            "questions": report["distribution"]["total_questions"],
            **{k: summary[k] for k in SUMMARY_FIELDS},
            "classes": dict(summary["classes"]), "risk": dict(summary["risk"]),
            "pass_hat_k": dict(summary["pass_hat_k"]), "pass_at_k": dict(summary["pass_at_k"]),
            "distribution": dict(report["distribution"]), **_repeats_side(summary)}


def _repeats_side(summary: Mapping[str, Any]) -> dict[str, Any]:
    """mG-Pass@N (the largest k), mean semantic entropy and judge noise (None: no
    re-judging pass) of one side, with mG-Pass at every k."""
    mg = dict(summary.get("mg_pass_at_k") or {})
    noise = summary.get("judge_noise") or {}
    return {"mg_pass_at_k": mg, "mg_pass_at_n": mg[list(mg)[-1]] if mg else None,
            "semantic_entropy_mean": summary.get("semantic_entropy_mean"),
            "judge_noise": noise.get("judge_share_of_spread"),
            **{k: summary.get(k) for k in ("circular_accuracy", "template_spread",
                                           "worst_template")}}


def _keyed(report: Mapping[str, Any], by: str) -> dict[Any, tuple[int, Mapping[str, Any]]]:
    """{join key: (item idx, result)}; by 'item' the key is the item idx, by 'question'
    it is (normalised text, occurrence number)."""
    out: dict[Any, tuple[int, Mapping[str, Any]]] = {}
    seen: dict[str, int] = {}
    for idx, res in sorted(report["stability_results"].items(), key=lambda kv: int(kv[0])):
        if by == "item":
            out[int(idx)] = (int(idx), res)
        else:
            text = question_key(res.get("question"))
            seen[text] = seen.get(text, 0) + 1
            out[(text, seen[text])] = (int(idx), res)
    return out


def paired_test(rates_a: Sequence[float], rates_b: Sequence[float]) -> dict[str, Any]:
    """Wilcoxon signed-rank test of B against A on paired per-question rates: the same
    test as robustness (`metrics.robustness.paired_rate_test`), unchanged pairs dropped."""
    from evalcore.metrics.robustness import exact_rate, paired_rate_test

    diffs = [exact_rate(b) - exact_rate(a) for a, b in zip(rates_a, rates_b)]
    changed = sum(1 for d in diffs if d != 0)
    out: dict[str, Any] = {"name": "wilcoxon signed-rank", "alternative": "two-sided",
                           "zero_method": ZERO_METHOD, "method": None, "n_pairs": len(diffs),
                           "n_changed": changed, "n_better_b": sum(1 for d in diffs if d > 0),
                           "n_better_a": sum(1 for d in diffs if d < 0),
                           "mean_delta": float(sum(diffs) / len(diffs)) if diffs else None,
                           "statistic": None, "p_value": None, "reason": None}
    if not diffs:
        out["reason"] = "no question is in both runs"
    elif changed == 0:
        out["reason"] = "no question's success rate changed"
    else:
        result = paired_rate_test(list(rates_b), list(rates_a))
        out.update(statistic=result.statistic, p_value=result.p_value, method=result.method)
    return out


def _distribution_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    n_a, n_b = a["repetition_count"], b["repetition_count"]
    pa, pb = a["distribution"]["distribution_percent"], b["distribution"]["distribution_percent"]
    return [{"correct": j,
             "percent_a": float(pa.get(str(j), 0.0)) if j <= n_a else None,
             "percent_b": float(pb.get(str(j), 0.0)) if j <= n_b else None}
            for j in range(max(n_a, n_b), -1, -1)]


def _pass_k_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for k in range(1, max(a["repetition_count"], b["repetition_count"]) + 1):
        rows.append({"k": k, **{f"{key}_{side}": (float(s[key][str(k)])
                                                  if str(k) in s[key] else None)
                                for side, s in (("a", a), ("b", b))
                                for key in ("pass_hat_k", "pass_at_k")}})
    return rows


def _load(engine: Engine, run_id: int) -> tuple[Any, dict[str, Any], str | None]:
    from evalcore.errors import EvalcoreError
    from evalcore.report.stability import stability_report
    from evalcore.store import queries

    run = queries.get_run(engine, run_id)
    if run.kind != "stability":
        raise CompareError(f"run {run_id} is a {run.kind} run; compare works on two stability "
                           "runs (list them with `python -m evalcore runs list --kind stability`)")
    try:
        report = stability_report(engine, run_id)
    except EvalcoreError as exc:
        raise CompareError(f"run {run_id} has no results to compare yet: {exc}") from exc
    dataset = None
    if run.dataset_id is not None:
        from evalcore.dataset import get_dataset

        try:
            dataset = get_dataset(engine, int(run.dataset_id)).name
        except EvalcoreError:
            dataset = None
    return run, report, dataset


def compare_stability(engine: Engine, run_a: int, run_b: int,
                      top: int = TOP_CHANGED) -> dict[str, Any]:
    """Two stability runs side by side (see the module doc for the join and the test).

    Keys: `a`, `b` (summaries: mean, std, classes, risk, pass^k, pass@k, distribution,
    mG-Pass, semantic entropy, judge noise), `delta` (B - A of mean, std, mG-Pass@N,
    semantic entropy and judge noise), `distribution` and `pass_k` (rows side by side),
    `join` (how questions were matched and how many), `questions` (every matched pair),
    `changed` (the `top` pairs with the largest |delta|), `test` (the paired test).
    """
    run_a_row, report_a, name_a = _load(engine, run_a)
    run_b_row, report_b, name_b = _load(engine, run_b)
    a, b = _side(report_a, run_a_row, name_a), _side(report_b, run_b_row, name_b)
    same = run_a_row.dataset_id is not None and run_a_row.dataset_id == run_b_row.dataset_id
    by = "item" if same else "question"
    keyed_a, keyed_b = _keyed(report_a, by), _keyed(report_b, by)
    matched = [k for k in keyed_a if k in keyed_b]
    item_ids = (_dataset_item_ids(engine, run_a_row.dataset_id, matched) if same else {})
    pairs = []
    for key in matched:
        (idx_a, ra), (idx_b, rb) = keyed_a[key], keyed_b[key]
        if ra["success_rate"] is None or rb["success_rate"] is None:
            continue  # no verdict in one run (failure policy `exclude`): nothing to compare
        rate_a, rate_b = float(ra["success_rate"]), float(rb["success_rate"])
        pairs.append({"item_id": item_ids.get(idx_a), "item_a": idx_a, "item_b": idx_b,
                      "question": ra.get("question"), "standard_answer": ra.get("standard_answer"),
                      "correct_a": int(ra["correct_count"]), "correct_b": int(rb["correct_count"]),
                      "rate_a": rate_a, "rate_b": rate_b, "delta": rate_b - rate_a})
    changed = sorted((p for p in pairs if p["delta"] != 0),
                     key=lambda p: (-abs(p["delta"]), p["item_a"]))[:max(top, 0)]
    return {
        "a": a, "b": b,
        "delta": {k: None if a[k] is None or b[k] is None else b[k] - a[k]
                  for k in ("mean", "std", "mg_pass_at_n", "semantic_entropy_mean",
                            "judge_noise", "circular_accuracy", "template_spread")},
        "distribution": _distribution_rows(a, b),
        "pass_k": _pass_k_rows(a, b),
        "join": {"by": by, "matched": len(pairs), "only_a": len(keyed_a) - len(pairs),
                 "only_b": len(keyed_b) - len(pairs)},
        "questions": pairs,
        "changed": changed,
        "test": paired_test([p["rate_a"] for p in pairs], [p["rate_b"] for p in pairs]),
    }


def _dataset_item_ids(engine: Engine, dataset_id: int, positions: Sequence[int]) -> dict[int, int]:
    """{item idx: item id} of a dataset's items at `positions`."""
    from sqlalchemy import select

    from evalcore.store.db import reader
    from evalcore.store.tables import Item

    query = select(Item.idx, Item.id).where(Item.dataset_id == dataset_id)
    wanted = set(positions)
    with reader(engine).connect() as conn:
        return {int(pos): int(i) for pos, i in conn.execute(query) if pos in wanted}


def questions_frame(comparison: Mapping[str, Any], changed_only: bool = False) -> pd.DataFrame:
    """The matched questions (or only the most changed ones) as a table."""
    import pandas as pd

    rows = comparison["changed" if changed_only else "questions"]
    return pd.DataFrame(rows, columns=["item_id", "item_a", "item_b", "question",
                                       "standard_answer", "correct_a", "correct_b", "rate_a",
                                       "rate_b", "delta"])


def counts_frame(comparison: Mapping[str, Any]) -> pd.DataFrame:
    """Questions per stability class and risk level in both runs: block, name, a, b, and
    the percentages of each run's questions (the runs may hold different counts)."""
    import pandas as pd

    from evalcore.metrics.stability import CLASSES, RISK_LEVELS

    a, b = comparison["a"], comparison["b"]
    rows = []
    for block, names in (("classes", CLASSES), ("risk", RISK_LEVELS)):
        for name in names:
            ca, cb = int(a[block].get(name, 0)), int(b[block].get(name, 0))
            rows.append({"block": block, "name": name, "a": ca, "b": cb,
                         "percent_a": 100.0 * ca / a["questions"] if a["questions"] else 0.0,
                         "percent_b": 100.0 * cb / b["questions"] if b["questions"] else 0.0})
    return pd.DataFrame(rows, columns=["block", "name", "a", "b", "percent_a", "percent_b"])
