"""A review queue's figures: progress, agreement, the disagreements for an adjudicator,
and what the reviews measure (the attack generator's precision by level, language and
swap source; a judge's accuracy against people). See docs/review.md.

An item's final verdict is its adjudication when it has one, else its reviewers' verdict
when it has all its reviews and they agree; an item whose reviewers disagree counts in
no figure until it is adjudicated.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime
from typing import Any

from evalcore.metrics.review import agreement, judge_accuracy, precision_by
from evalcore.perturb.sources import swap_sources
from evalcore.store import queries
from evalcore.store import review_queues as rq
from evalcore.store.db import Bind
from evalcore.store.review_cards import attack_groups, judge_verdicts

KEPT = {"approve": True, "reject": False, "right": True, "wrong": False}
"""Verdict -> kept in meaning (attack queues) or judge right (answer queues)."""


def final_verdicts(items: list[Any], verdicts: dict[int, dict[str, str]],
                   adjudicated: dict[int, Any]) -> dict[int, str]:
    """{item id: final verdict} of the items that have one (see the module doc)."""
    out: dict[int, str] = {}
    for item in items:
        mine = verdicts.get(int(item.id), {})
        if int(item.id) in adjudicated:
            out[int(item.id)] = adjudicated[int(item.id)].verdict
        elif len(mine) >= item.needed and len(set(mine.values())) == 1:
            out[int(item.id)] = next(iter(mine.values()))
    return out


def _verdicts(decisions: list[Any]) -> dict[int, dict[str, str]]:
    verdicts: dict[int, dict[str, str]] = defaultdict(dict)
    for d in decisions:
        verdicts[int(d.queue_item_id)][d.reviewer] = d.verdict
    return verdicts


def queue_stats(bind: Bind, queue_id: int, *, reviewer: str | None = None) -> dict[str, Any]:
    """Everything `review stats` prints and the page draws (`reviewer`: whose "mine")."""
    queue = rq.get_queue(bind, queue_id)
    items = rq.queue_items(bind, queue_id)
    decisions = rq.decisions(bind, queue_id)
    adjudicated = rq.adjudications(bind, queue_id)
    verdicts = _verdicts(decisions)
    final = final_verdicts(items, verdicts, adjudicated)
    disagreements = [{"item_id": i, "verdicts": dict(sorted(v.items())),
                      "adjudication": adjudicated[i].verdict if i in adjudicated else None}
                     for i, v in sorted(verdicts.items()) if len(set(v.values())) > 1]
    out: dict[str, Any] = {
        "queue_id": queue_id, "kind": queue.kind, "total": len(items), "decided": len(final),
        "reviews": len(decisions),
        "by_reviewer": dict(sorted(Counter(d.reviewer for d in decisions).items())),
        "mine": sum(1 for d in decisions if d.reviewer == reviewer) if reviewer else None,
        "my_last": next(({"item_id": int(d.queue_item_id), "verdict": d.verdict}
                         for d in reversed(decisions) if d.reviewer == reviewer), None),
        "per_hour": _per_hour([d.at for d in decisions]),
        "agreement": agreement(verdicts),
        "disagreements": disagreements,
        "unresolved": sum(1 for d in disagreements if d["adjudication"] is None),
        "precision": {}, "judge": None}
    if queue.kind == "attack":
        out["precision"] = _precision(bind, items, final)
    else:
        out["judge"] = _judge(bind, items, final)
    return out


def set_precision(bind: Bind, attack_set_id: int) -> dict[str, Any]:
    """The generator's precision over every queue of an attack set: each attacked item
    counted once, with its final verdict from the newest queue that has one."""
    by_attack_item: dict[int, tuple[Any, str]] = {}
    for queue in reversed(rq.list_queues(bind, attack_set_id=attack_set_id)):  # oldest first
        items = rq.queue_items(bind, int(queue.id))
        final = final_verdicts(items, _verdicts(rq.decisions(bind, int(queue.id))),
                               rq.adjudications(bind, int(queue.id)))
        for item in items:
            if int(item.id) in final:
                by_attack_item[int(item.attack_item_id)] = (item, final[int(item.id)])
    chosen = [item for item, _ in by_attack_item.values()]
    return _precision(bind, chosen, {int(i.id): v for i, v in by_attack_item.values()})


def run_reviews(bind: Bind, run_ids: list[int]) -> list[dict[str, Any]]:
    """What people's reviews say about the given runs, for the trust report: for a run
    over attack sets, how often each set's attacks kept the meaning; for a run with an
    answers queue, how often its judge was right. Only figures with a decided item."""
    rows: list[dict[str, Any]] = []
    for run_id in run_ids:
        config = queries.get_run(bind, run_id).config or {}
        sets = ((config.get("spec") or {}).get("extra") or {}).get("attack_set_ids") or []
        for set_id in sets:
            found = set_precision(bind, int(set_id)).get("overall")
            if found:
                rows.append({"run_id": run_id, "what": f"attack set {set_id}: attacked "
                             "questions kept in meaning", **found})
        for queue in rq.list_queues(bind, run_id=run_id):
            judge = queue_stats(bind, int(queue.id))["judge"]
            if judge:
                rows.append({"run_id": run_id, "what": f"judge right (review queue "
                             f"{queue.id})", **{k: judge[k] for k in
                                                ("kept", "n", "share", "low", "high")}})
    return rows


def _per_hour(times: list[datetime]) -> float | None:
    """Decisions per hour over the span they were made in (None below two)."""
    if len(times) < 2:
        return None
    span = (max(times) - min(times)).total_seconds()
    return None if span <= 0 else (len(times) - 1) * 3600 / span


def _precision(bind: Bind, items: list[Any], final: dict[int, str]) -> dict[str, Any]:
    decided = [i for i in items if int(i.id) in final]
    groups = attack_groups(bind, [int(i.attack_item_id) for i in decided])
    records = []
    for item in decided:
        info = groups.get(int(item.attack_item_id))
        if info is None:
            continue  # its attack set was deleted
        records.append((info, KEPT[final[int(item.id)]]))
    if not records:
        return {}
    return {"overall": precision_by([(["all"], k) for _, k in records]).get("all"),
            "level": precision_by([([g["level"]], k) for g, k in records]),
            "language": precision_by([([g["language"]], k) for g, k in records]),
            "source": precision_by([(swap_sources(g["level"], g["details"]), k)
                                    for g, k in records])}


def _judge(bind: Bind, items: list[Any], final: dict[int, str]) -> dict[str, Any] | None:
    decided = [i for i in items if int(i.id) in final]
    if not decided:
        return None
    judged = judge_verdicts(bind, [int(i.call_id) for i in decided])
    return judge_accuracy([(judged[int(i.call_id)], KEPT[final[int(i.id)]])
                           for i in decided if int(i.call_id) in judged])
