"""`attack` (make an attack set) and `attacks ...` (list, show, import, review, export, delete)."""
from __future__ import annotations

import argparse
import sys

from evalcore.service.attacks import (approve_unflagged, attack_set_job, delete_attack_set,
                                      edit_attack_item, queue_attack, queue_attack_import,
                                      set_review)
from evalcore.service.jobs import get_job, requeue_job, run_job_here
from evalcore.cli.common import acting_user, engine_and_settings, print_json
from evalcore.dataset.numbering import question_label
from evalcore.dataset.readers import load_source
from evalcore.errors import EvalcoreError
from evalcore.perturb.export import write_attack_set_csv
from evalcore.perturb.params import parse_params
from evalcore.perturb.review import (
    attack_item_info,
    attack_set_info,
    get_attack_item,
    list_attack_items,
    option_diffs,
    question_numbers,
    review_log,
    review_progress,
    swaps_line,
)
from evalcore.perturb.sets import AttackSetError, get_attack_set, list_attack_sets


def _reviewer(args: argparse.Namespace) -> str | None:
    """--reviewer (single-user mode); in team mode the actor's identity is recorded instead."""
    return args.reviewer


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("attack", help="attack a dataset (char, word or sentence level) into a "
                                      "new attack set for review")
    p.add_argument("--dataset", required=True, help="dataset name or id (see `datasets list`)")
    p.add_argument("--level", required=True, choices=("char", "word", "sentence"))
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0): same seed, "
                                                        "same attack")
    p.add_argument("--translator", help="sentence level: llm:MODEL or google")
    p.add_argument("--name", help="attack set name (default DATASET-LEVEL-sSEED)")
    p.add_argument("--limit", type=int, help="only the first K items")
    p.add_argument("--params", metavar="JSON",
                   help='the level\'s parameters, e.g. \'{"ops": ["insert", "swap"]}\' '
                        "(docs/attacks.md; checked before anything is queued)")
    p.add_argument("--no-similarity", action="store_true",
                   help="skip the e5 similarity of original and attacked question (no "
                        "low_similarity flags; the other checks still run)")
    p.add_argument("--any-register", action="store_true",
                   help="word level: allow swaps that move formality (want -> desire, "
                        "car -> automobile); by default the register is kept")
    p.add_argument("--no-fluency", action="store_true",
                   help="word level: skip scoring each English swap in its sentence with the "
                        "embedded model (faster; swaps that read badly are no longer dropped)")
    p.add_argument("--swap-judge", metavar="MODEL",
                   help="word level: a model of the models file judges every swap in its "
                        "text (meaning kept, natural), English and Chinese, in place of the "
                        "embedded check")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_attack)

    p = sub.add_parser("attacks", help="attack sets: list, resume, show, import, approve, reject, "
                                       "edit, export, delete")
    cmds = p.add_subparsers(dest="attacks_command", required=True, metavar="ACTION")

    q = cmds.add_parser("list", help="list attack sets")
    q.add_argument("--dataset", help="only sets of this source dataset")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_list)

    q = cmds.add_parser("resume", help="finish generating a set whose generation stopped")
    q.add_argument("id", help="attack set id or name")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_resume)

    q = cmds.add_parser("show", help="lineage, review progress and items of a set")
    q.add_argument("id", help="attack set id or name")
    q.add_argument("--status", choices=("pending", "approved", "rejected"))
    q.add_argument("--flag", help="only items with this flag (e.g. number_changed)")
    flagged = q.add_mutually_exclusive_group()
    flagged.add_argument("--flagged", dest="flagged", action="store_const", const=True)
    flagged.add_argument("--unflagged", dest="flagged", action="store_const", const=False)
    q.add_argument("--limit", type=int, default=10, help="items to show (default 10)")
    q.add_argument("--log", action="store_true",
                   help="also the review log: every action, who and when, newest first")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_show)

    q = cmds.add_parser("import", help="import one of the method's attacked CSVs")
    q.add_argument("path")
    q.add_argument("--name", help="attack set name (default: file stem)")
    q.add_argument("--level", choices=("char", "word", "sentence"),
                   help="when the file name does not say it")
    q.add_argument("--source-dataset", help="the clean dataset the file was attacked from "
                                            "(default: found by its questions, else created)")
    q.add_argument("--no-check", action="store_true", help="skip the safeguard checks")
    q.add_argument("--no-similarity", action="store_true",
                   help="skip the embedding similarity (the slow part of the checks)")
    q.add_argument("--allow-duplicate", action="store_true")
    q.add_argument("--json", action="store_true")
    q.set_defaults(func=_import)

    q = cmds.add_parser("approve", help="approve items: all unflagged pending ones, or by id")
    q.add_argument("id", help="attack set id or name")
    q.add_argument("--unflagged", action="store_true", help="every pending item without flags")
    q.add_argument("--item", type=int, action="append", default=[],
                   help="an attack item id (repeat); approves flagged items too")
    q.add_argument("--reviewer", help="your name (default EVALCORE_USER, else your system user; team mode: your identity)")
    q.set_defaults(func=_approve)

    q = cmds.add_parser("reject", help="reject attack items by id")
    q.add_argument("id", help="attack set id or name")
    q.add_argument("--item", type=int, action="append", required=True)
    q.add_argument("--note", help="why")
    q.add_argument("--reviewer", help="your name (default EVALCORE_USER, else your system user; team mode: your identity)")
    q.set_defaults(func=_reject)

    q = cmds.add_parser("edit", help="edit an attack item's attacked question and/or options "
                                     "(re-checked; labels and answer key never change)")
    q.add_argument("id", help="attack set id or name")
    q.add_argument("--item", type=int, required=True, help="the attack item id")
    q.add_argument("--question", help="the new attacked question (default: as stored)")
    q.add_argument("--option", action="append", default=[], metavar="N=TEXT",
                   help="the new attacked text of option N (0-based; A is 0), repeatable")
    q.add_argument("--approve", action="store_true", help="approve it in the same step")
    q.add_argument("--note", help="why")
    q.add_argument("--reviewer", help="your name (default EVALCORE_USER, else your system user; team mode: your identity)")
    q.set_defaults(func=_edit)

    q = cmds.add_parser("export", help="write a set as CSV (original columns + attack columns)")
    q.add_argument("id", help="attack set id or name")
    q.add_argument("--csv", required=True, help="output path")
    q.add_argument("--status", choices=("pending", "approved", "rejected"))
    q.set_defaults(func=_export)

    q = cmds.add_parser("delete", help="delete a set and its derived dataset (not if run)")
    q.add_argument("id", help="attack set id or name")
    q.set_defaults(func=_delete)


def _attack(args: argparse.Namespace) -> int:

    params = parse_params(args.params)
    engine, _ = engine_and_settings()
    if args.no_similarity:
        params["similarity"] = False
    if (args.any_register or args.no_fluency or args.swap_judge) and args.level != "word":
        raise EvalcoreError("--any-register, --no-fluency and --swap-judge are word-level "
                            "options; use them with --level word")
    if args.swap_judge:
        params["swap_judge"] = args.swap_judge
    if args.any_register:
        params["keep_register"] = False
    if args.no_fluency:
        params["fluency"] = False
    job_id = queue_attack(acting_user(engine), engine, dataset=args.dataset,
                                  level=args.level, seed=args.seed, params=params or None,
                                  translator=args.translator, name=args.name, limit=args.limit)
    return _generate(engine, job_id, args.json)


def _resume(args: argparse.Namespace) -> int:
    """Generation is a job: queue the set's job again (or make one) and execute it here."""
    engine, _ = engine_and_settings()
    attack_set = get_attack_set(engine, args.id)
    job_id = attack_set_job(engine, int(attack_set.id))
    requeue_job(acting_user(engine), engine, job_id)
    return _generate(engine, job_id, args.json)


def _execute(engine, job_id: int, desc: str, unit: str) -> str:  # noqa: ANN001
    """Execute a job here with a tqdm bar on stderr; returns its status. Ctrl-C and
    SIGTERM close the bar and propagate."""
    from tqdm import tqdm

    bar = tqdm(desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, disable=None)

    def update(done: int, total: int) -> None:
        bar.total, bar.n = total, done
        bar.refresh()

    try:
        return run_job_here(engine, job_id, on_progress=update)
    finally:
        bar.close()


def _generate(engine, job_id: int, as_json: bool) -> int:  # noqa: ANN001
    """Execute the generation job here with a progress bar, then print the set."""
    job = get_job(engine, job_id)
    try:
        status = _execute(engine, job_id, f"attack set {job.attack_set_id}", "item")
    except BaseException:  # Ctrl-C, SIGTERM: what is stored stays
        print(f"generation of attack set {job.attack_set_id} stopped; the stored batches are "
              f"kept: `attacks resume {job.attack_set_id}` continues", file=sys.stderr)
        raise
    job = get_job(engine, job_id)
    if status != "done":
        print(f"error: generation of attack set {job.attack_set_id} {job.status}"
              f"{': ' + job.error if job.error else ''}; the stored batches are kept: "
              f"`attacks resume {job.attack_set_id}` continues", file=sys.stderr)
        return 2
    attack_set = get_attack_set(engine, int(job.attack_set_id))
    info = attack_set_info(engine, attack_set)
    review = info["review"]
    if as_json:
        print_json({"id": info["id"], "name": info["name"], "level": info["level"],
                    "items": info["items"], "flagged": review["flagged"],
                    "flags": review["flags"], "dataset_id": info["dataset_id"]})
        return 0
    print(f"attack set {info['id']} '{info['name']}': {info['items']} items, "
          f"{review['flagged']} flagged")
    for flag, count in review["flags"].items():
        print(f"  {flag}: {count}")
    print(f"review it on the Attacks page, or `attacks approve {info['id']} --unflagged`")
    return 0


def _list(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    infos = [attack_set_info(engine, s) for s in list_attack_sets(engine, args.dataset)]
    if args.json:
        print_json(infos)
        return 0
    if not infos:
        print("no attack sets yet (`attack --dataset NAME --level word`)")
    for i in infos:
        r = i["review"]
        print(f"{i['id']:>4}  {i['name']}  [{i['level']}, {i['origin']}] from "
              f"{i['source_dataset']}: {i['items']} items, approved {r['approved']}, "
              f"rejected {r['rejected']}, pending {r['pending']} ({r['flagged']} flagged)")
    return 0


def _show(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    attack_set = get_attack_set(engine, args.id)
    info = attack_set_info(engine, attack_set)
    found = list_attack_items(engine, int(attack_set.id), status=args.status, flag=args.flag,
                              flagged=args.flagged, limit=args.limit)
    numbers = question_numbers(engine, found)
    options = option_diffs(engine, found)
    items = [{**attack_item_info(i, numbers.get(int(i.id))),
              "options": [{"index": n, "original": a, "attacked": b}
                          for n, a, b in options.get(int(i.id), [])]} for i in found]
    log = review_log(engine, int(attack_set.id)) if args.log else None
    if args.json:
        print_json({**info, "attack_items": items, **({"review_log": log} if args.log else {})})
        return 0
    r = info["review"]
    print(f"attack set {info['id']} '{info['name']}': {info['level']} level, {info['origin']}, "
          f"seed {info['seed']}, from dataset '{info['source_dataset']}'")
    print(f"review: {r['approved']} approved, {r['rejected']} rejected, {r['pending']} pending "
          f"of {r['total']}; flags {r['flags'] or 'none'}")
    stored = {i.id: i.pairs for i in found}  # with where each pair is
    for i in items:
        flags = ",".join(i["flags"]) or "-"
        sim = "-" if i["similarity"] is None else f"{i['similarity']:.3f}"
        label = question_label(None if i["number"] is None else i["number"] - 1)
        swaps = f" ({swaps_line(stored[i['id']])})" if i["pairs"] else ""
        print(f"- {label} (attack item {i['id']}) [{i['status']}] flags {flags} "
              f"similarity {sim} changes {i['attack_num']}{swaps}")
        print(f"    original: {i['original']}")
        print(f"    attacked: {i['attacked']}")
        for o in i["options"]:  # a word attack that reached the options
            print(f"    option {o['index']}: {o['original']} -> {o['attacked']}")
    if log is not None:
        print(f"review log ({len(log)} actions, newest first):")
        for e in log:
            note = f" ({e['note']})" if e["note"] else ""
            print(f"  {e['reviewed_at']} item {e['id']}: {e['previous_status']} -> "
                  f"{e['status']}{' [edited]' if e['edited'] else ''} by {e['reviewer']}{note}")
    return 0


def _import(args: argparse.Namespace) -> int:
    """Importing is a job too: the file is checked, queued and imported here."""
    engine, _ = engine_and_settings()
    data, filename = load_source(args.path)
    job_id = queue_attack_import(acting_user(engine), engine, data, filename=filename,
                                         name=args.name, level=args.level,
                                         source_dataset=args.source_dataset,
                                         check=not args.no_check,
                                         similarity=not args.no_similarity,
                                         allow_duplicate=args.allow_duplicate)
    status = _execute(engine, job_id, f"checking {filename}", "row")
    job = get_job(engine, job_id)
    if status != "done":
        print(f"error: import of {filename} {job.status}"
              f"{': ' + job.error if job.error else ''}; nothing was stored", file=sys.stderr)
        return 2
    attack_set = get_attack_set(engine, int(job.result["attack_set_id"]))
    info = attack_set_info(engine, attack_set)
    if args.json:
        print_json(info)
        return 0
    print(f"imported attack set {info['id']} '{info['name']}' ({info['level']} level): "
          f"{info['items']} items, {info['review']['flagged']} flagged; clean dataset "
          f"'{info['source_dataset']}' ({info['params']['clean_link']})")
    return 0


def _approve(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    actor = acting_user(engine)
    attack_set = get_attack_set(engine, args.id)
    if not args.unflagged and not args.item:
        raise AttackSetError("say what to approve: --unflagged (every pending item without "
                             "flags) or --item ID (repeatable)")
    count = 0
    if args.unflagged:
        count += approve_unflagged(actor, engine, int(attack_set.id),
                                           reviewer=_reviewer(args))
    for item_id in args.item:
        _check_in_set(engine, item_id, int(attack_set.id))
        set_review(actor, engine, item_id, "approved", reviewer=_reviewer(args))
        count += 1
    r = review_progress(engine, int(attack_set.id))
    print(f"approved {count} item(s); set {attack_set.id}: {r['approved']} approved, "
          f"{r['pending']} pending ({r['flagged_pending']} flagged), {r['rejected']} rejected")
    return 0


def _check_in_set(engine, item_id: int, set_id: int) -> None:
    if get_attack_item(engine, item_id).attack_set_id != set_id:
        raise AttackSetError(f"attack item {item_id} is not in attack set {set_id}")


def _reject(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    actor = acting_user(engine)
    attack_set = get_attack_set(engine, args.id)
    for item_id in args.item:
        _check_in_set(engine, item_id, int(attack_set.id))
        set_review(actor, engine, item_id, "rejected", reviewer=_reviewer(args),
                           note=args.note)
    print(f"rejected {len(args.item)} item(s) of set {attack_set.id}")
    return 0


def _options(values: list[str]) -> dict[int, str] | None:
    """--option N=TEXT values as {N: TEXT}; a usage error names the bad one."""
    out: dict[int, str] = {}
    for value in values:
        index, sep, text = value.partition("=")
        if not sep or not index.strip().isdigit():
            raise AttackSetError(f"--option {value!r}: write N=TEXT with N the option's "
                                 "0-based index (A is 0)")
        out[int(index)] = text
    return out or None


def _edit(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    attack_set = get_attack_set(engine, args.id)
    _check_in_set(engine, args.item, int(attack_set.id))
    options = _options(args.option)
    if args.question is None and options is None:
        raise AttackSetError("say what to edit: --question TEXT and/or --option N=TEXT")
    current = get_attack_item(engine, args.item)
    item = edit_attack_item(
        acting_user(engine), engine, args.item,
        current.attacked if args.question is None else args.question,
        reviewer=_reviewer(args), approve=args.approve, note=args.note, options=options)
    sim = "-" if item.similarity is None else f"{item.similarity:.3f}"
    print(f"edited attack item {item.id}: {swaps_line(item.pairs)}; similarity {sim}, "
          f"flags {', '.join(item.flags) or 'none'}; now {item.status}")
    return 0


def _export(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    attack_set = get_attack_set(engine, args.id)
    count = write_attack_set_csv(engine, int(attack_set.id), args.csv, status=args.status)
    print(f"wrote {count} rows to {args.csv}")
    return 0


def _delete(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    gone = delete_attack_set(acting_user(engine), engine, args.id)
    print(f"deleted attack set {gone.id} '{gone.name}' and its derived dataset")
    return 0
