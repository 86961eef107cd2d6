"""Home: the order of work (data -> model -> evaluations -> results), what exists so far,
and a one-click first run on the embedded local model."""
from __future__ import annotations

import streamlit as st
from evalcore.markup import md

from pages import _shared

# No bare strings at module level below: Streamlit's magic would draw them on the page.
STEPS = (
    ("1. Data", "pages/datasets.py", "Import a question set (CSV, JSONL, JSON, XLSX)."),
    ("2. Model", "pages/models.py", "The embedded local model works offline; add any "
                                     "OpenAI-compatible endpoint or Ollama."),
    ("3a. Stability", "pages/stability.py", "Ask every question N times: how often is each "
                                             "one right?"),
    ("3b. Attacks", "pages/attacks.py", "Perturb questions, review each one; then Robustness "
                                         "measures the accuracy drop."),
    ("3c. Fairness", "pages/fairness.py", "Counterfactual prompts and bias benchmarks: do "
                                           "answers change with gender, age, origin ...?"),
    ("4. Results", "pages/results.py", "Every run, its exports, comparisons and the work "
                                       "queue."),
)


def counts() -> dict[str, str]:
    """What exists so far, one short line per step."""
    from evalcore.dataset import list_datasets
    from evalcore.perturb.sets import list_attack_sets
    from evalcore.store import queries

    eng = _shared.engine()
    runs = queries.list_runs(eng, limit=1000)

    def of(kind: str) -> str:
        n = sum(r.kind == kind for r in runs)
        return f"{n} run(s)" if n else "no runs yet"

    return {"1. Data": f"{len(list_datasets(eng))} dataset(s)",
            "2. Model": f"{len(_shared.model_names())} model(s)",
            "3a. Stability": of("stability"),
            "3b. Attacks": f"{len(list_attack_sets(eng))} attack set(s), robustness "
                           + of("robustness"),
            "3c. Fairness": of("fairness"), "4. Results": f"{len(runs)} run(s) in all"}


def demo() -> None:
    """One click: the bundled sample, 3 rounds on the local model, shown on Stability."""
    from evalcore.demo import DEMO_ROUNDS

    st.markdown("#### Try it")
    st.caption(f"Imports a bundled sample of 10 Chinese maths problems and asks the embedded "
               f"SmolLM2 model each one {md(DEMO_ROUNDS)} times (about half a minute on a laptop, "
               "no key, no internet). The run appears on the Stability page.")
    if _shared.allowed_button("Run the demo", "run", type="primary", key="home.demo"):
        from evalcore import actions

        run_id = _shared.start_and_show("stability", lambda: actions.start_demo(
            _shared.actor(), _shared.engine(), _shared.settings().models_path))
        if run_id is not None:
            st.switch_page("pages/stability.py")


def main() -> None:
    _shared.page_setup("evalcore", "Tell whether a large language model can be trusted, in "
                                   "Chinese and English: stability, robustness and fairness.")
    have = counts()
    for title, path, what in STEPS:
        left, right = st.columns([1, 3])
        left.page_link(path, label=title)
        right.markdown(f"{md(what)}  \n*{md(have[title])}*")
    demo()


main()
