"""The app in team mode (AppTest): refusal without a trusted identity, the
misconfiguration page, and what a viewer, an evaluator and an admin see."""
from __future__ import annotations

import pytest

from tests.pages.helpers import APP, REPO_ROOT, RUN_TIMEOUT, clear_streamlit_caches, texts


@pytest.fixture()
def team_app(settings, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest

    monkeypatch.syspath_prepend(str(REPO_ROOT))
    monkeypatch.setenv("EVALCORE_ADMINS", "root@x.com")
    clear_streamlit_caches()
    yield AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    clear_streamlit_caches()


def _signed_in_as(monkeypatch: pytest.MonkeyPatch, email: str) -> None:
    """What a trusted proxy (or the OIDC provider) would say about this session."""
    import pages._signin as signin

    monkeypatch.setenv("EVALCORE_AUTH", "header")
    monkeypatch.setenv("EVALCORE_HEADER_SECRET", "s" * 16)
    monkeypatch.setattr(signin, "_identity", lambda config: (email, email.split("@")[0]))


def test_header_mode_refuses_a_request_without_the_shared_secret(team_app, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_AUTH", "header")
    monkeypatch.setenv("EVALCORE_HEADER_SECRET", "only-the-proxy-knows")
    team_app.run()
    assert not team_app.exception
    shown = " ".join(texts(team_app))
    assert "Access refused" in shown and "did not come through the trusted proxy" in shown
    assert not team_app.title or [t.value for t in team_app.title] == ["evalcore"]
    assert "Datasets" not in [t.value for t in team_app.title]


def test_oidc_without_an_auth_section_says_what_is_missing(team_app, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_AUTH", "oidc")
    team_app.run()
    assert not team_app.exception
    shown = " ".join(texts(team_app))
    assert "Sign-in is not configured correctly" in shown and "no `[auth]` section" in shown


def test_a_misconfigured_mode_is_shown_not_raised(team_app, monkeypatch) -> None:
    monkeypatch.setenv("EVALCORE_AUTH", "kerberos")
    team_app.run()
    assert not team_app.exception
    assert any("none, oidc, header" in e.value for e in team_app.error)


def test_a_viewer_sees_no_start_or_delete_and_is_told_why(team_app, monkeypatch, settings,
                                                          tmp_path) -> None:
    from evalcore.dataset import import_dataset
    from evalcore.store.db import get_engine
    from tests.perturb.attack_set_helpers import write_math_csv

    import_dataset(get_engine(settings.db_url), write_math_csv(tmp_path / "m.csv"),
                   name="maths", format="math23k")
    _signed_in_as(monkeypatch, "bob@x.com")
    team_app.run()
    assert not team_app.exception
    shown = " ".join(texts(team_app))
    assert "bob@x.com" in shown and "viewer" in shown  # sidebar identity (Home)
    demo = [b for b in team_app.button if b.key == "home.demo"]
    assert demo and demo[0].disabled
    team_app.switch_page("pages/datasets.py").run()
    assert "Deleting datasets: Your role (viewer)" in " ".join(texts(team_app))
    assert not [b for b in team_app.button if b.key == "datasets.delete"]
    team_app.switch_page("pages/stability.py").run()
    assert not team_app.exception
    start = [b for b in team_app.button if b.key == "stability.start"]
    assert start and start[0].disabled and "ask an admin for role evaluator" in start[0].help
    team_app.switch_page("pages/models.py").run()
    assert "Adding, editing and deleting models: Your role (viewer)" in " ".join(texts(team_app))
    assert not [b for b in team_app.button if b.key == "models.save"]


def test_first_sign_in_is_recorded_and_admins_get_the_team_page(team_app, monkeypatch,
                                                                   settings) -> None:
    from evalcore.auth.users import list_users
    from evalcore.store.db import get_engine

    _signed_in_as(monkeypatch, "root@x.com")
    team_app.run()
    assert not team_app.exception
    team_app.switch_page("pages/_team.py").run()
    assert not team_app.exception
    assert [t.value for t in team_app.title] == ["Team"]
    users = {u.email: u.role for u in list_users(get_engine(settings.db_url))}
    assert users == {"root@x.com": "admin"}


def test_an_admin_changes_a_role_on_the_team_page_and_it_is_audited(team_app, monkeypatch,
                                                                   settings) -> None:
    from evalcore.auth import audit
    from evalcore.auth.users import add_user, get_user
    from evalcore.store.db import get_engine

    engine = get_engine(settings.db_url)
    add_user(engine, "bob@x.com", "viewer")
    _signed_in_as(monkeypatch, "root@x.com")
    team_app.run()
    team_app.switch_page("pages/_team.py").run()
    team_app.selectbox(key="admin.user").set_value("bob@x.com").run()
    team_app.selectbox(key="admin.role.bob@x.com").set_value("reviewer").run()
    team_app.button(key="admin.set_role").click().run()
    assert not team_app.exception
    assert get_user(engine, "bob@x.com").role == "reviewer"
    last = audit.list_events(engine, limit=1)[0]
    assert (last.actor, last.action, last.object_id) == ("root@x.com", "user.set_role",
                                                         "bob@x.com")


def test_a_sign_in_is_audited_once_however_many_sessions_open_pages(team_app, monkeypatch,
                                                                    settings) -> None:
    """Every page load (the redirect back from the provider, then a typed URL, a reload,
    a second tab) is a new Streamlit session: each used to write `user.sign_in` again."""
    from streamlit.testing.v1 import AppTest

    import pages._signin as signin
    from evalcore.auth import audit
    from evalcore.store.db import get_engine

    engine = get_engine(settings.db_url)

    def sign_ins() -> int:
        return sum(e.action == "user.sign_in" for e in audit.list_events(engine))

    _signed_in_as(monkeypatch, "bob@x.com")  # header mode: no login key, a time window
    team_app.run()
    again = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)  # a second session
    again.run()
    again.switch_page("pages/stability.py").run()
    assert not team_app.exception and not again.exception
    assert sign_ins() == 1
    # OpenID Connect: one ID token is one sign-in; a new token (signed in again) is another
    monkeypatch.setattr(signin, "_login_key", lambda config: "1700000000:n1")
    AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT).run()
    AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT).run()
    assert sign_ins() == 2
    monkeypatch.setattr(signin, "_login_key", lambda config: "1700003600:n2")
    AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT).run()
    assert sign_ins() == 3
