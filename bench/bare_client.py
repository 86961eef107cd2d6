"""The reference a stability run is measured against: a bare aiohttp client that asks the
same M questions N times each, C calls at once, and reads each reply, nothing stored.

    python bench/bare_client.py --url http://127.0.0.1:8808/v1 --questions 100 --rounds 10 -c 50
    python bench/bare_client.py --url ... --loop uvloop     # on the loop evalcore's runs use

bench/stability_bench.py runs it as a whole process beside `python -m evalcore stability`
(same server, same sizes), so both pay their interpreter's start-up and imports.
"""
from __future__ import annotations

import argparse
import asyncio

import aiohttp


async def ask_all(url: str, questions: int, rounds: int, concurrency: int) -> int:
    """Every (question, round) call, question-first, `concurrency` in flight; returns the
    number of replies that carried an answer."""
    units = iter([(q, r) for q in range(questions) for r in range(rounds)])
    answered = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal answered
        for q, _ in units:
            body = {"model": "fake", "temperature": 0.7, "messages": [
                {"role": "user", "content": f"What is {q} plus {q}?"}]}
            async with session.post(f"{url}/chat/completions", json=body) as resp:
                reply = await resp.json()
            if reply["choices"][0]["message"]["content"] is not None:
                answered += 1

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return answered


def calls_parser(description: str) -> argparse.ArgumentParser:
    """The arguments every client of the CPU bench takes: where, and which calls."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--url", required=True, help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("-c", "--concurrency", type=int, default=50)
    return parser


def main() -> int:
    parser = calls_parser(__doc__.splitlines()[0])
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="event loop (evalcore's runs use uvloop when it is installed)")
    args = parser.parse_args()
    factory = None
    if args.loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        answered = runner.run(ask_all(args.url, args.questions, args.rounds, args.concurrency))
    print(answered)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
