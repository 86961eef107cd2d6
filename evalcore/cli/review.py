"""`review create|list|next|submit|skip|undo|adjudicate|stats`: the review queue a team
shares, through the same actions (roles, audit) as the page. The reviewer is the CLI's
user (EVALCORE_USER, or the signed-in identity in team mode)."""
from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from evalcore.service.reviews import (ITEMS, create_review_queue, list_queues, review_adjudicate,
                                      review_next, review_skip, review_stats, review_submit,
                                      review_undo)
from evalcore.service.users import require_read
from evalcore.cli.common import acting_user, bounded, engine_and_settings, print_json
from evalcore.errors import EvalcoreError


def _guidelines(path: str | None) -> str:
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalcoreError(f"cannot read the guidelines file {path}: {exc}; give a UTF-8 "
                            "text file") from None


def _options(pairs: list[str]) -> dict[int, str]:
    """--option N=TEXT, N the 0-based option index."""
    out: dict[int, str] = {}
    for pair in pairs or []:
        index, sep, text = pair.partition("=")
        if not sep or not re.fullmatch(r"\s*[0-9]+\s*", index):
            raise EvalcoreError(f"--option {pair!r}: write it as N=TEXT, N the 0-based "
                                "option number (e.g. --option 1='a bus')")
        out[int(index)] = text
    return out


def _create(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    queue_id = create_review_queue(
        acting_user(engine), engine, attack_set_id=args.attack_set, run_id=args.run,
        items=args.items, sample=args.sample, seed=args.seed or 0,
        double_share=args.double / 100, reserve_s=args.reserve_minutes * 60,
        guidelines=_guidelines(args.guidelines))
    if args.json:
        print_json({"queue_id": queue_id})
    else:
        print(f"review queue {queue_id} created; take its items with "
              f"`python -m evalcore review next {queue_id}`")
    return 0


def _list(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    require_read(acting_user(engine), engine, "review list")
    rows = [{"queue_id": q.id, "kind": q.kind, "attack_set_id": q.attack_set_id,
             "run_id": q.run_id, "items": q.item_count, "double_share": q.double_share,
             "created_by": q.created_by} for q in list_queues(engine)]
    if args.json:
        print_json(rows)
        return 0
    for r in rows:
        source = (f"attack set {r['attack_set_id']}" if r["kind"] == "attack"
                  else f"run {r['run_id']}")
        print(f"{r['queue_id']:>5}  {source:<16} {r['items']:>6} items  by {r['created_by']}")
    if not rows:
        print("no review queues; make one with `python -m evalcore review create`")
    return 0


def _next(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    card = review_next(acting_user(engine), engine, args.queue)
    if args.json:
        print_json(card or {"item_id": None})
    elif card is None:
        print(f"nothing left for you in queue {args.queue}")
    else:
        print(_card_text(card))
    return 0


def _card_text(card: dict[str, Any]) -> str:
    head = f"item {card['item_id']} ({card['position'] + 1} of {card['total']})"
    if card["kind"] == "attack":
        body = f"original: {card['original']}\nattacked: {card['attacked']}"
        verdicts = "approve|reject"
    else:
        body = (f"question: {card['question']}\nreference: {card['reference']}\n"
                f"answer: {card['answer']}\njudge: {card['judge_verdict']}")
        verdicts = "right|wrong"
    return (f"{head}\n{body}\ndecide with `python -m evalcore review submit "
            f"{card['queue_id']} {card['item_id']} --verdict {verdicts}`")


def _submit(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    edit = {k: v for k, v in (("question", args.question), ("options", _options(args.option)))
            if v}
    review_submit(acting_user(engine), engine, args.queue, args.item, args.verdict,
                          **edit)
    print(f"item {args.item}: {args.verdict}")
    return 0


def _skip(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    review_skip(acting_user(engine), engine, args.queue, args.item)
    print(f"item {args.item} skipped")
    return 0


def _undo(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    item = review_undo(acting_user(engine), engine, args.queue)
    print("nothing to undo" if item is None else f"item {item} is undecided and yours again")
    return 0


def _adjudicate(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    review_adjudicate(acting_user(engine), engine, args.queue, args.item, args.verdict,
                              args.note or "")
    print(f"item {args.item}: {args.verdict} (final)")
    return 0


def _stats(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    stats = review_stats(acting_user(engine), engine, args.queue)
    if args.json:
        print_json(stats)
        return 0
    agree = stats["agreement"]
    value = "-" if agree["value"] is None else f"{agree['value']:.3f}"
    print(f"queue {args.queue}: {stats['decided']} of {stats['total']} decided; "
          f"agreement {agree['method']} {value} over {agree['pairs']} items; "
          f"{stats['unresolved']} disagreement(s) to adjudicate")
    for name, groups in stats["precision"].items():
        if name == "overall":
            continue
        for group, p in groups.items():
            print(f"  {name} {group}: {p['kept']}/{p['n']} kept "
                  f"({p['share']:.0%}, 95% {p['low']:.0%}-{p['high']:.0%})")
    if stats["judge"]:
        j = stats["judge"]
        print(f"  judge right {j['kept']}/{j['n']} ({j['share']:.0%}, "
              f"95% {j['low']:.0%}-{j['high']:.0%})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `review` command."""
    r = sub.add_parser("review", help="review queues a team shares: reservations, double "
                                      "review, agreement, precision")
    rs = r.add_subparsers(dest="review_command", required=True, metavar="ACTION")
    create = rs.add_parser("create", help="a queue over an attack set or a run's judged "
                                          "answers (reviewers and admins)")
    source = create.add_mutually_exclusive_group(required=True)
    source.add_argument("--attack-set", type=int, metavar="ID")
    source.add_argument("--run", type=int, metavar="ID")
    create.add_argument("--items", choices=ITEMS, default="all",
                        help="an attack set's items to review (default all)")
    create.add_argument("--sample", type=bounded(1, kind=int), metavar="N",
                        help="review N items drawn at random (a run's: in each verdict's share)")
    create.add_argument("--seed", type=int, help="seed of the sample and of the double-review "
                                                 "picks (default 0)")
    create.add_argument("--double", type=bounded(0, 100), default=0.0, metavar="SHARE",
                        help="percent of items reviewed a second time, blind (default 0)")
    create.add_argument("--reserve-minutes", type=bounded(0.001), default=15.0, metavar="M",
                        help="how long a reviewer holds an item (default 15)")
    create.add_argument("--guidelines", metavar="FILE", help="text shown on every card")
    create.add_argument("--json", action="store_true")
    create.set_defaults(func=_create)
    listing = rs.add_parser("list", help="the review queues")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(func=_list)
    nxt = rs.add_parser("next", help="the item you hold, else the next one, reserved for you")
    nxt.add_argument("queue", type=int)
    nxt.add_argument("--json", action="store_true")
    nxt.set_defaults(func=_next)
    submit = rs.add_parser("submit", help="your verdict on an item")
    submit.add_argument("queue", type=int)
    submit.add_argument("item", type=int)
    submit.add_argument("--verdict", required=True,
                        choices=("approve", "reject", "right", "wrong"),
                        help="approve|reject an attacked question; right|wrong a judge verdict")
    submit.add_argument("--question", metavar="TEXT", help="the attacked question, edited")
    submit.add_argument("--option", action="append", metavar="N=TEXT",
                        help="option N (0-based), edited; repeat for more")
    submit.set_defaults(func=_submit)
    skip = rs.add_parser("skip", help="pass an item on to the others")
    skip.add_argument("queue", type=int)
    skip.add_argument("item", type=int)
    skip.set_defaults(func=_skip)
    undo = rs.add_parser("undo", help="take back your latest decision in the queue")
    undo.add_argument("queue", type=int)
    undo.set_defaults(func=_undo)
    adj = rs.add_parser("adjudicate", help="the final verdict on an item (reviewers and admins)")
    adj.add_argument("queue", type=int)
    adj.add_argument("item", type=int)
    adj.add_argument("--verdict", required=True, choices=("approve", "reject", "right", "wrong"))
    adj.add_argument("--note", default="")
    adj.set_defaults(func=_adjudicate)
    stats = rs.add_parser("stats", help="progress, agreement, disagreements, precision, the "
                                        "judge's accuracy (any role)")
    stats.add_argument("queue", type=int)
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(func=_stats)
