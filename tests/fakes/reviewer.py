"""A reviewer in a process of its own, for the review-queue claim tests.

    python -m tests.fakes.reviewer URL QUEUE NAME COUNT   # next + approve, COUNT times
    python -m tests.fakes.reviewer URL QUEUE NAME hold    # take one item and wait

Prints the id of every item `next` gave it, one a line (`none` when nothing was left);
in `hold` mode it prints `holding ITEM` and waits to be killed.
"""
from __future__ import annotations

import sys
import time

from evalcore.store import review_queues as rq
from evalcore.store.db import make_engine


def main(url: str, queue: int, name: str, count: str) -> int:
    engine = make_engine(url, migrate=False)
    if count == "hold":
        print(f"holding {rq.next_item(engine, queue, name)}", flush=True)
        while True:
            time.sleep(60)
    for _ in range(int(count)):
        item = rq.next_item(engine, queue, name)
        if item is None:
            print("none", flush=True)
            continue
        print(item, flush=True)
        rq.submit(engine, queue, item, name, "approve")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]))
