"""The app's entry point: it only routes. Each page lives in `pages/`; the sidebar is shared.

Run with `streamlit run streamlit_app.py`. Once `st.navigation` runs, Streamlit no longer
auto-discovers `pages/`, so every page is listed here (each kind of evaluation's page from
its `EvalKind`). In team mode (EVALCORE_AUTH) the
sign-in gate runs first; admins also get the Team page (users, roles, audit log).
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from evalcore import warmup
from evalcore.auth.roles import allows, read_permission
from evalcore.kinds import all_kinds
from pages._shared import guarded, sidebar
from pages._signin import gate

# The favicon is an emoji (drawn in the browser): left unset, Streamlit makes the open
# page's `:material/...:` icon the favicon and fetches it from fonts.gstatic.com, a
# request an offline machine cannot answer (the sidebar's icons use the bundled font).
st.set_page_config(page_title="evalcore", page_icon="📊", layout="wide")
actor = gate()  # team mode: the sign-in page (or what is misconfigured) until signed in

PAGES = {
    "Start": [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)],
    "Set up": [
        st.Page("pages/datasets.py", title="Datasets", icon=":material/dataset:"),
        st.Page("pages/models.py", title="Models", icon=":material/smart_toy:"),
    ],
    # each kind of evaluation's page (`evalcore.kinds`), by its order; Attacks makes the
    # attack sets the attack runs use, so it sits before them (order 15)
    "Evaluate": [page for _, page in sorted(
        [(kind.order, st.Page(kind.page, title=kind.title, icon=kind.icon))
         for kind in all_kinds().values()]
        + [(15, st.Page("pages/attacks.py", title="Attacks", icon=":material/bug_report:")),
           (16, st.Page("pages/review.py", title="Review", icon=":material/rate_review:"))],
        key=lambda pair: pair[0])],
    "Results": [st.Page("pages/results.py", title="Results", icon=":material/table_chart:"),
                st.Page("pages/monitoring.py", title="Monitoring", icon=":material/monitoring:")],
}

if actor.team and allows(actor.role, read_permission("team page")):
    PAGES["Results"].append(st.Page("pages/_team.py", title="Team", icon=":material/group:",
                                        url_path="team"))

page = st.navigation(PAGES)
try:
    guarded(lambda: (sidebar(page.url_path), page.run()))
finally:  # also when the page stops or reruns the script
    # Once per process, after its first page is drawn: a background thread imports what
    # the other pages import and opens the database, so their first visits do not wait.
    warmup.start(Path(__file__).resolve().parent.glob("pages/*.py"))
