"""Commits and write statements per action of `evalcore.actions` on SQLite, with the
setups of the crash tests (`tests/auth/test_action_transactions.py`):
`.venv/bin/python bench/action_commits.py` prints `action<TAB>commits<TAB>writes`.
A commit counts when its transaction wrote (`tests.fakes.faults.Faults`)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    import evalcore.perturb as perturb
    from evalcore.store.db import make_engine
    from tests.auth import test_action_transactions as crash
    from tests.auth.conftest import team_actor
    from tests.fakes.faults import Faults
    from tests.perturb.attack_set_helpers import fake_attack

    async def attack_questions(questions, level, *, seed=0, params=None,  # noqa: ANN001, ANN202
                               translator=None, on_progress=None):
        return [fake_attack(q, level, seed) for q in questions]

    perturb.attack_questions = attack_questions  # type: ignore[attr-defined]
    for setup in crash.SETUPS:
        tmp = Path(tempfile.mkdtemp())
        url = f"sqlite:///{tmp / 'evalcore.db'}"
        engine = make_engine(url)
        env = crash.Env(engine=engine, tmp=tmp, models=tmp / "no-models.toml", url=url,
                        admin=team_actor("admin", "root@x.com"))
        action = setup(env)
        faults = Faults(engine)
        faults.arm(None)
        action()
        print(f"{setup.__name__[2:]}\t{faults.commits}\t{faults.writes}")
        engine.dispose()


if __name__ == "__main__":
    main()
