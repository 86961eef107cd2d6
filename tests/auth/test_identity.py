"""Finding who is acting: header mode (trusted proxy + shared secret), OIDC claims, the CLI."""
from __future__ import annotations

import pytest

from evalcore.auth import SignInError, cli_actor, header_identity, local_actor, oidc_identity
from evalcore.auth.config import auth_config

SECRET = "s3cret-from-the-proxy"


def _header_cfg(**extra: str):  # type: ignore[no-untyped-def]
    return auth_config({"EVALCORE_AUTH": "header", "EVALCORE_HEADER_SECRET": SECRET, **extra})


def test_header_mode_trusts_the_user_header_only_with_the_shared_secret() -> None:
    cfg = _header_cfg()
    good = {"X-Forwarded-Email": "Alice@Example.com", "X-Evalcore-Proxy-Secret": SECRET,
            "X-Forwarded-User": "Alice"}
    assert header_identity(good, cfg) == ("alice@example.com", "Alice")
    # Header names are case-insensitive (proxies and Streamlit lower-case them).
    assert header_identity({k.lower(): v for k, v in good.items()}, cfg)[0] == "alice@example.com"
    with pytest.raises(SignInError, match="did not come through the trusted proxy"):
        header_identity({"X-Forwarded-Email": "alice@example.com"}, cfg)
    with pytest.raises(SignInError, match="did not come through the trusted proxy"):
        header_identity({**good, "X-Evalcore-Proxy-Secret": "guess"}, cfg)
    with pytest.raises(SignInError, match="sent no X-Forwarded-Email"):
        header_identity({"X-Evalcore-Proxy-Secret": SECRET}, cfg)


def test_header_mode_without_a_configured_secret_refuses_everyone() -> None:
    cfg = auth_config({"EVALCORE_AUTH": "header"})
    with pytest.raises(SignInError, match="needs EVALCORE_HEADER_SECRET"):
        header_identity({"X-Forwarded-Email": "a@x.com", "X-Evalcore-Proxy-Secret": ""}, cfg)


def test_header_names_are_configurable() -> None:
    cfg = _header_cfg(EVALCORE_USER_HEADER="X-Auth-Request-Email",
                      EVALCORE_SECRET_HEADER="X-Proxy-Key")
    assert header_identity({"x-auth-request-email": "c@x.com", "x-proxy-key": SECRET},
                           cfg)[0] == "c@x.com"


def test_oidc_claims_need_an_email() -> None:
    assert oidc_identity({"email": "Carol@X.com", "name": "Carol"}) == ("carol@x.com", "Carol")
    assert oidc_identity({"email": "d@x.com"}) == ("d@x.com", "d@x.com")
    with pytest.raises(SignInError, match="email"):
        oidc_identity({"name": "no mail", "is_logged_in": True})


def test_single_user_mode_keeps_typed_names_and_team_mode_records_the_identity() -> None:
    import getpass

    local = local_actor()
    assert local.role == "admin" and local.attribution("frank") == "frank"  # CLI --reviewer
    cli = cli_actor(None, auth_config({}), env={"EVALCORE_USER": ""})
    assert cli.label == getpass.getuser() and cli.role == "admin"
    team = cli_actor(None, auth_config({"EVALCORE_AUTH": "oidc"}),
                     env={"EVALCORE_USER": "Bob@X.com"})
    assert team.email == "bob@x.com" and team.role == "viewer"
    assert team.attribution("somebody else") == "bob@x.com"


def test_the_single_local_user_has_one_identity_in_the_app_and_the_cli(monkeypatch) -> None:
    """Was "local" in the app, "cli:<user>" in the CLI, "app" / "page" on some rows."""
    import getpass

    from evalcore.auth.identity import local_user_name

    monkeypatch.delenv("EVALCORE_USER", raising=False)
    app = local_actor()
    cli = cli_actor(None, auth_config({}))
    assert app.label == cli.label == getpass.getuser() == local_user_name()
    assert app.attribution() == app.attribution("") == app.label
    monkeypatch.setenv("EVALCORE_USER", "Dana")
    assert local_actor().label == cli_actor(None, auth_config({})).label == "Dana"


def test_a_sign_in_is_recorded_once_per_login_not_per_session(store) -> None:
    from datetime import datetime, timedelta, timezone

    from evalcore.auth import audit
    from evalcore.auth.identity import Actor, login_key

    alice = Actor(email="alice@x.com", name="Alice", role="viewer", team=True)
    claims = {"email": "alice@x.com", "iat": 1700000000, "nonce": "abc"}
    key = login_key(claims)
    assert key == "1700000000:abc" and login_key({"email": "a@x.com"}) is None
    assert audit.record_sign_in(store, alice, "oidc", key)
    assert not audit.record_sign_in(store, alice, "oidc", key)  # a reload, a second tab
    assert audit.record_sign_in(store, alice, "oidc", login_key({**claims, "iat": 1700009999}))
    bob = Actor(email="bob@x.com", name="Bob", role="viewer", team=True)
    t0 = datetime.now(timezone.utc)
    assert audit.record_sign_in(store, bob, "header", None, now=t0)
    assert not audit.record_sign_in(store, bob, "header", None, now=t0 + timedelta(seconds=5))
    later = t0 + timedelta(seconds=audit.SIGN_IN_WINDOW_S + 1)
    assert audit.record_sign_in(store, bob, "header", None, now=later)
    events = [(e.actor, e.detail.get("login")) for e in audit.list_events(store)]
    assert sorted(events, key=str) == sorted([
        ("alice@x.com", "1700000000:abc"), ("alice@x.com", "1700009999:abc"),
        ("bob@x.com", None), ("bob@x.com", None)], key=str)
