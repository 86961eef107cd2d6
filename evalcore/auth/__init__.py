"""Team mode: who is acting (`Actor`), what their role allows (`require`), the users
table and the audit log. No streamlit here; the pages pass in what Streamlit gives them.

`EVALCORE_AUTH` = none (default: one local user who may do everything, as before),
oidc (Streamlit's st.login with an OpenID Connect provider) or header (a trusted reverse
proxy's user header, honoured only with the shared secret header).
"""
from __future__ import annotations

from evalcore.auth.config import AuthConfig, auth_config
from evalcore.auth.identity import (Actor, SignInError, cli_actor, header_identity,
                                    local_actor, oidc_identity, signed_in_actor)
from evalcore.auth.roles import (PERMISSIONS, ROLES, PermissionDenied, allows, check_role,
                                 require, why_not)

__all__ = ["Actor", "AuthConfig", "PERMISSIONS", "PermissionDenied", "ROLES", "SignInError",
           "allows", "auth_config", "check_role", "cli_actor", "header_identity",
           "local_actor", "oidc_identity", "require", "signed_in_actor", "why_not"]
