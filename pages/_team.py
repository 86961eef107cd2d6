"""Team (admins, team mode only; hence the `_`: not a page of single-user mode): who may
use evalcore with which role, and the audit log of every change.

Role changes go through `evalcore.service.users.set_role` (checked and audited like everything
else); the same lists come from `python -m evalcore users list` and `audit list`.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import streamlit as st

from evalcore.service.users import set_role
from evalcore.auth import ROLES
from evalcore.auth.audit import event_info, list_events
from evalcore.auth.roles import read_permission
from evalcore.auth.users import list_users, user_info
from evalcore.errors import EvalcoreError
from evalcore.markup import md
from pages import _shared

SINCE = {"last hour": timedelta(hours=1), "last day": timedelta(days=1),
         "last week": timedelta(days=7), "everything": None}


def users_section() -> None:
    """Everyone who signed in or was added, and changing one's role."""
    st.subheader("Users")
    eng = _shared.engine()
    users = [user_info(u) for u in list_users(eng)]
    if not users:
        st.info("Nobody has signed in yet. People appear here after their first sign-in "
                "(with the default role), or add them with "
                "`python -m evalcore users add EMAIL --role ROLE`.")
        return
    st.dataframe(users, hide_index=True, key="admin.users")
    left, middle, right = st.columns([3, 2, 1], vertical_alignment="bottom")
    email = left.selectbox("User", [u["email"] for u in users], key="admin.user")
    current = next(u["role"] for u in users if u["email"] == email)
    role = middle.selectbox("Role", ROLES, index=ROLES.index(current), key=f"admin.role.{email}")
    if right.button("Set role", key="admin.set_role", disabled=role == current):
        try:
            set_role(_shared.actor(), eng, email, role)
        except EvalcoreError as exc:
            st.error(str(exc))
        else:
            st.success(f"{md(email)} is now {md(role)} (from their next click).")
            st.rerun()


def audit_section() -> None:
    """The audit log, newest first."""
    st.subheader("Audit log")
    span = st.radio("Show", list(SINCE), horizontal=True, key="admin.since", index=1)
    delta = SINCE[span]
    since = datetime.now(timezone.utc) - delta if delta else None
    events = [event_info(e) for e in list_events(_shared.engine(), since=since, limit=1000)]
    if not events:
        st.caption("No changes in this period.")
        return
    st.dataframe(events, hide_index=True, key="admin.audit",
                 column_order=["at", "actor", "action", "object_type", "object_id", "detail"])


def main() -> None:
    _shared.page_setup("Team", "Users, roles and the audit log: who changed what, and when.")

    denied = _shared.why_not(read_permission("team page"))  # the CLI's `users list` too
    if denied:
        st.warning(denied)
        return
    users_section()
    st.divider()
    audit_section()


main()
