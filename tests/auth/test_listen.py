"""Where the app may listen: loopback always, another address only with sign-in."""
from __future__ import annotations

import pytest

from evalcore.auth.listen import check_listen_address, is_loopback, main
from evalcore.errors import EvalcoreError


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_is_allowed_without_sign_in(address):
    assert is_loopback(address)
    assert check_listen_address(address, {}) == address


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "", "192.168.1.5", "evalcore.example"])
def test_other_addresses_need_sign_in(address):
    assert not is_loopback(address)
    with pytest.raises(EvalcoreError, match="EVALCORE_AUTH=oidc") as err:
        check_listen_address(address, {"EVALCORE_AUTH": "none"})
    assert "\n" not in str(err.value)
    for mode in ("oidc", "header"):
        assert check_listen_address(address, {"EVALCORE_AUTH": mode}) == address


def test_main_exits_2_with_one_line(capsys, monkeypatch):
    monkeypatch.delenv("EVALCORE_AUTH", raising=False)
    assert main(["0.0.0.0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["127.0.0.1"]) == 0


def test_a_bare_streamlit_run_listens_on_loopback_too():
    """`streamlit run streamlit_app.py` without `make run` reads .streamlit/config.toml."""
    import tomllib

    from tests.conftest import REPO_ROOT

    config = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text())
    assert is_loopback(config["server"]["address"])
