"""The team deployment as a team uses it: `scripts/team_demo.sh` (PostgreSQL, the
oidc-provider-mock OpenID Connect provider, two app replicas) driven by Debian chromium.

alice (evaluator) signs in on replica 1 and starts a run; bob (viewer) on replica 2 sees
it progressing, has no enabled start or delete buttons, and his call through the function
API is refused; carol (reviewer) approves an attacked question; the audit log holds all
three under their identities. Never runs `playwright install`.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, require
from tests.e2e.nav import UI_TIMEOUT_MS, open_app, sidebar_to

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

START_TIMEOUT_S = 180


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The team demo on free loopback ports; its URLs, database URL and environment."""
    require(Path("/usr/lib/postgresql/15/bin/initdb").exists(), "apt-get install postgresql")
    ports = {name: str(_free_port()) for name in ("APP1", "APP2", "OIDC", "PG", "MODEL")}
    env = dict(os.environ, APP_PORTS=f"{ports['APP1']} {ports['APP2']}",
               OIDC_PORT=ports["OIDC"], PG_PORT=ports["PG"], MODEL_PORT=ports["MODEL"],
               # alice's run on the fake model (50 calls, one at a time) is still running
               # minutes later, when bob looks
               MODEL_LATENCY="2.0", PY=str(REPO_ROOT / ".venv" / "bin" / "python"),
               # one worker runs alice's run (the demo's second only idles: ~2 s of CPU)
               WORKERS="1",
               # no replica warm-up (importing every page's modules): the pages visited
               # import what they need; the warm-up has its own tests (test_warmup.py)
               EVALCORE_WARMUP="0",
               # Not under pytest's tmp_path (0700): the postgres user must reach the cluster.
               DEMO_DIR=tempfile.mkdtemp(prefix="evalcore-team-demo-"))
    for key in ("EVALCORE_DB_URL", "EVALCORE_MODELS", "EVALCORE_HOME", "EVALCORE_USER"):
        env.pop(key, None)
    log = tmp_path_factory.mktemp("team-demo") / "team_demo.out"
    with log.open("w") as out:
        proc = subprocess.Popen(["bash", "scripts/team_demo.sh"], cwd=REPO_ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "TEAM DEMO READY" not in log.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"team demo did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield {"app1": f"http://127.0.0.1:{ports['APP1']}",
               "app2": f"http://127.0.0.1:{ports['APP2']}",
               "db_url": f"postgresql+psycopg://postgres@127.0.0.1:{ports['PG']}/evalcore"}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the script stops what it started
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _sign_in(browser, url: str, who: str):  # type: ignore[no-untyped-def]
    """A fresh browser profile signs in through the OpenID Connect provider's page."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    open_app(page, url)  # a first load that never drew is loaded again, as a person would
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name=f"{who}@example.com").click()  # the provider's page
    page.locator('[data-testid="stSidebar"]').get_by_text(f"{who}@example.com").wait_for()
    return page


def test_alice_runs_bob_watches_carol_reviews_and_the_audit_log_knows_who(
        demo, chromium, monkeypatch: pytest.MonkeyPatch) -> None:
    from playwright.sync_api import expect

    from evalcore import actions
    from evalcore.auth import PermissionDenied, audit, auth_config, signed_in_actor
    from evalcore.model_store import ModelsInDatabase
    from evalcore.perturb.review import list_attack_items
    from evalcore.store import queries
    from evalcore.store.db import get_engine

    engine = get_engine(demo["db_url"])

    alice = _sign_in(chromium, demo["app1"], "alice")
    sidebar_to(alice, "stability", "Stability")
    # the demo's fake model, not the embedded one the form starts with: the worker would
    # load SmolLM2 and answer on the CPU for the whole test (~10 s of CPU); who starts
    # the run and who sees it is the claim, not the model
    alice.get_by_role("combobox", name="Model", exact=True).click()
    alice.get_by_role("option", name="fake", exact=True).click()
    expect(alice.get_by_role("combobox", name="Model", exact=True)).to_have_value("fake")
    alice.get_by_role("button", name="Start run").click()
    expect(alice.get_by_text(re.compile(r"Run #\d+ started"))).to_be_visible()
    run = queries.list_runs(engine, kind="stability", limit=1)[0]
    assert (run.created_by, run.model) == ("alice@example.com", "fake")
    alice.context.close()  # done: her page would redraw the run's progress every 2 s

    bob = _sign_in(chromium, demo["app2"], "bob")  # the other replica
    sidebar_to(bob, "stability", "Stability")
    expect(bob.get_by_text(re.compile(r"(queued|running): \d+ / \d+ calls"))).to_be_visible()
    bob.get_by_text("Start a new run").click()  # the form's expander (closed once runs exist)
    expect(bob.get_by_role("button", name="Start run")).to_be_disabled()
    expect(bob.get_by_role("button", name="Cancel run")).to_be_disabled()
    sidebar_to(bob, "datasets", "Datasets")
    expect(bob.get_by_text("Deleting datasets: Your role (viewer)")).to_be_visible()
    expect(bob.get_by_role("button", name="Delete...")).to_have_count(0)
    bob.context.close()
    monkeypatch.setenv("EVALCORE_AUTH", "oidc")
    bob_actor = signed_in_actor(engine, "bob@example.com", "Bob", auth_config())
    with pytest.raises(PermissionDenied, match="role evaluator or higher"):
        actions.create_run(bob_actor, engine, "stability", {"dataset": "maths", "model": "fake"},
                           ModelsInDatabase(demo["db_url"]))

    carol = _sign_in(chromium, demo["app1"], "carol")
    sidebar_to(carol, "attacks", "Attacks")
    expect(carol.get_by_text("Reviewing as carol@example.com")).to_be_visible()
    carol.get_by_role("button", name="Approve", exact=True).first.click()
    expect(carol.get_by_text(re.compile("approved by carol@example.com"))).to_be_visible()
    approved = [i for i in list_attack_items(engine, 1) if i.status == "approved"]
    assert [i.reviewer for i in approved] == ["carol@example.com"]

    events = {(e.actor, e.action) for e in audit.list_events(engine)}
    assert {("alice@example.com", "run.start"), ("bob@example.com", "denied.create_run"),
            ("carol@example.com", "review.approved")} <= events
    assert {("alice@example.com", "user.sign_in"), ("bob@example.com", "user.sign_in"),
            ("carol@example.com", "user.sign_in")} <= events
    actions.cancel_run(signed_in_actor(engine, "alice@example.com", "Alice", auth_config()),
                       engine, int(run.id))
