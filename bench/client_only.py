"""The middle layer of `bench/call_cpu.py`: the same calls as `bench/bare_client.py`, asked
through evalcore's model client (`ModelClient.chat`: its limiter, retries and deadline,
typed reply decoding, masking) on evalcore's event loop, with nothing scored or stored.

    python bench/client_only.py --url http://127.0.0.1:8808/v1 --questions 100 --rounds 100 -c 100

Between the bare client and a whole `evalcore stability` run, it says which part of a
run's extra CPU is the client and which the runner (scoring, storing each call before its
slot is freed, the report, the database's start-up).
"""
from __future__ import annotations

import asyncio

from bare_client import calls_parser

from evalcore.providers.base import ChatRequest, ModelConfig
from evalcore.providers.client import get_client, run_closing_clients


async def ask_all(url: str, questions: int, rounds: int, concurrency: int) -> int:
    """Every (question, round) call, question-first, `concurrency` in flight; returns the
    number of replies that carried an answer."""
    client = get_client(ModelConfig(name="fake", kind="openai", base_url=url, model="fake",
                                    concurrency=concurrency, timeout=30, temperature=0.7))
    units = iter([(q, r) for q in range(questions) for r in range(rounds)])
    answered = 0

    async def worker() -> None:
        nonlocal answered
        for q, _ in units:
            reply = await client.chat(ChatRequest.user(f"What is {q} plus {q}?"))
            answered += reply.ok

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return answered


def main() -> int:
    args = calls_parser(__doc__.splitlines()[0]).parse_args()
    print(run_closing_clients(ask_all(args.url, args.questions, args.rounds,
                                      args.concurrency)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
