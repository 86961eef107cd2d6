"""A small maths dataset and a model on the fault server, shared by the runner tests."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from tests.fakes.fault_server import FaultConfig, FaultServer


async def until(condition, timeout: float = 5.0) -> bool:  # noqa: ANN001
    """True once `condition()` holds, polled every 20 ms on the running loop; False after
    `timeout` seconds (the caller asserts, with what it saw)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True

QUESTIONS = [(f"Tom has {a} apples and buys {b} more. How many apples now?", a + b)
             for a, b in [(3, 4), (10, 5), (7, 8), (20, 22), (1, 1), (9, 30)]]


def right_for_odd(prompt: str, schema: dict | None) -> str:
    """Answer items 1, 3, 5 right and items 0, 2, 4 wrong, whatever the round."""
    for idx, (question, answer) in enumerate(QUESTIONS):
        if question in prompt:
            return f"Let me think. The answer is {answer if idx % 2 else answer + 1}."
    return "I do not know."


def import_qa(engine, folder: Path, pairs, name: str = "apples") -> str:  # noqa: ANN001
    """Import (question, answer) pairs as an English maths dataset `name`; returns it."""
    from evalcore.dataset import import_dataset

    lines = ["question,answer"] + [f'"{q}",{a}' for q, a in pairs]
    path = folder / f"{name}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_dataset(engine, path, name=name,
                   mapping={"question": "question", "reference": "answer", "task_type": "math",
                            "language": "en"})
    return name


@pytest.fixture()
def dataset(engine, tmp_path: Path) -> str:
    return import_qa(engine, tmp_path, QUESTIONS)


@pytest.fixture()
def server():
    with FaultServer(FaultConfig(responder=right_for_odd)) as srv:
        yield srv


def add_model(settings, server, name: str = "fake", **fields) -> None:
    from evalcore.providers.base import ModelConfig
    from evalcore.providers.registry import add_model as add

    fields = {"concurrency": 4, "timeout": 5.0, "max_retry_wait": 5.0, **fields}
    add(settings.models_path, ModelConfig(name=name, kind="openai", base_url=server.openai_url,
                                          model=name, **fields))


def item_of(prompt: str) -> int:
    return next(i for i, (q, _) in enumerate(QUESTIONS) if q in prompt)


def count_units(prompts: list[str]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for p in prompts:
        if re.search(r"apples", p):
            counts[item_of(p)] = counts.get(item_of(p), 0) + 1
    return counts


# The PostgreSQL cluster and per-test databases of the store tests, for the worker tests.
from tests.store.conftest import pg_url, store_url  # noqa: E402,F401


def tagged_dataset(engine, name: str, n: int) -> str:
    """A maths dataset whose questions all carry `name`, so a server's prompt log tells
    which run asked what."""
    import tempfile
    from pathlib import Path

    from evalcore.dataset import import_dataset

    lines = ["question,answer"] + [f'"[{name}] What is {i} plus {i}?",{2 * i}'
                                   for i in range(n)]
    path = Path(tempfile.mkdtemp()) / f"{name}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_dataset(engine, path, name=name,
                   mapping={"question": "question", "reference": "answer", "task_type": "math",
                            "language": "en"})
    return name
