"""A first run for a new user: a bundled sample on the embedded local model, one click.

It imports `data/samples/math_zh_gbk.csv` (10 Chinese maths problems, our own) once, as
the dataset `demo-math-zh`, and queues a 3-round stability run of the `local` model on
it; a worker executes it like any other run.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalcore.resources import PROJECT_ROOT

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

DEMO_FILE = PROJECT_ROOT / "data" / "samples" / "math_zh_gbk.csv"
DEMO_DATASET = "demo-math-zh"
DEMO_MODEL = "local"
DEMO_ROUNDS = 3


def start_demo(engine: "Engine", models_path: Path, *, created_by: str = "") -> int:
    """Import the demo dataset if it is not there yet and queue the demo run; its id."""
    from evalcore.dataset import import_dataset, list_datasets
    from evalcore.runner.plan import RunSpec
    from evalcore.runner.start import start_run

    if DEMO_DATASET not in {d.name for d in list_datasets(engine)}:
        import_dataset(engine, DEMO_FILE, name=DEMO_DATASET, allow_duplicate=True)
    spec = RunSpec(kind="stability", dataset=DEMO_DATASET, model=DEMO_MODEL, rounds=DEMO_ROUNDS,
                   name="demo", created_by=created_by)
    return start_run(engine, spec, models_path)
