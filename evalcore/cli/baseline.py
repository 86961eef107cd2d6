"""`baseline set RUN` / `baseline show SUITE MODEL`: the stored baseline run of a dataset
(or suite) and model, which `gate`, `trend` and the schedules compare with by default."""
from __future__ import annotations

import argparse

from evalcore.service.baselines import baseline_info
from evalcore.service.monitoring import set_baseline
from evalcore.service.users import require_read
from evalcore.cli.common import acting_user, engine_and_settings, print_json
from evalcore.dataset import get_dataset


def _baseline_set(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    row = set_baseline(acting_user(engine), engine, args.run)
    print(f"run {row.run_id} is now the baseline of dataset {row.dataset_id} on {row.model}")
    return 0


def _baseline_show(args: argparse.Namespace) -> int:
    engine, _ = engine_and_settings()
    require_read(acting_user(engine), engine, "baseline show")
    info = baseline_info(engine, int(get_dataset(engine, args.suite).id), args.model)
    if args.json:
        print_json(info)
        return 0
    if info["run_id"] is None:
        print(f"no baseline for {info['dataset']} on {args.model}: gates compare with the "
              "--baseline run given; set one with `python -m evalcore baseline set RUN`")
        return 0
    print(f"baseline of {info['dataset']} on {args.model}: run {info['run_id']}")
    for h in info["history"]:
        print(f"  {h['set_at'][:19].replace('T', ' ')}  run {h['run_id']:>5}  by {h['set_by']}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `baseline` command."""
    b = sub.add_parser("baseline", help="the stored baseline run of a dataset and model")
    bs = b.add_subparsers(dest="baseline_command", required=True, metavar="ACTION")
    bset = bs.add_parser("set", help="mark a finished run as its dataset's and model's "
                                     "baseline (reviewers and admins)")
    bset.add_argument("run", type=int)
    bset.set_defaults(func=_baseline_set)
    show = bs.add_parser("show", help="the baseline in force and its history")
    show.add_argument("suite", help="dataset or suite (name or id)")
    show.add_argument("model")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=_baseline_show)
