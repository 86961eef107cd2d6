"""What the sign-in page says about a broken OpenID Connect set-up."""
from __future__ import annotations

from evalcore.auth.oidc import config_problems, provider_name, provider_problem, redirect_problem

GOOD = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
        "client_id": "evalcore", "client_secret": "s",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


def test_a_complete_section_has_no_problems() -> None:
    assert config_problems(GOOD) == [] and provider_name(GOOD) is None
    named = {"redirect_uri": GOOD["redirect_uri"], "cookie_secret": "c",
             "keycloak": {k: GOOD[k] for k in ("client_id", "client_secret",
                                               "server_metadata_url")}}
    assert config_problems(named) == [] and provider_name(named) == "keycloak"


def test_each_missing_piece_is_named() -> None:
    assert "no `[auth]` section" in config_problems(None)[0]
    problems = " ".join(config_problems({"redirect_uri": "http://h/callback", "client_id": "a"}))
    assert "must end with `/oauth2callback`" in problems
    assert "cookie_secret" in problems and "client_secret, server_metadata_url" in problems


def test_an_unreachable_provider_is_reported() -> None:
    problem = provider_problem("http://127.0.0.1:9/.well-known/openid-configuration", timeout=2)
    assert problem and "unreachable" in problem
    assert "not an http(s) URL" in provider_problem("file:///etc/passwd")


def test_a_redirect_uri_for_another_site_is_reported() -> None:
    assert redirect_problem("http://127.0.0.1:{port}/oauth2callback",
                            "http://127.0.0.1:8601/stability", 8601) is None
    assert redirect_problem("https://evalcore.example.com/oauth2callback",
                            "https://evalcore.example.com/", 8501) is None
    problem = redirect_problem("http://localhost:8501/oauth2callback",
                               "https://evalcore.example.com/", 8501)
    assert problem and "http://localhost:8501" in problem and "https://evalcore.example.com" in problem
    assert redirect_problem("http://x/oauth2callback", "", 8501) is None  # unknown: no claim
