"""Home: the order of work (data -> model -> evaluations -> results), what exists so far,
and a one-click first run on the embedded local model."""
from __future__ import annotations

import streamlit as st
from evalcore.service.runs import list_runs, start_demo
from evalcore.demo import demo_items, DEMO_MACHINE, DEMO_ROUNDS, DEMO_SECONDS
from evalcore.markup import md

from evalcore.report.overview import catalog_counts, plural, suites_line
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
    """What exists so far, one short line per step: datasets apart from attack sets and
    fairness suites (their items are stored as datasets too), suites by kind."""
    eng = _shared.engine()
    runs = list_runs(eng, limit=1000)
    have = catalog_counts(eng)

    def of(kind: str) -> str:
        n = sum(r.kind == kind for r in runs)
        return plural(n, "run") if n else "no runs yet"

    return {"1. Data": plural(have.datasets, "dataset"),
            "2. Model": plural(len(_shared.model_names()), "model"),
            "3a. Stability": of("stability"),
            "3b. Attacks": f"{plural(have.attack_sets, 'attack set')}, robustness "
                           + of("robustness"),
            "3c. Fairness": f"{suites_line(have)}, " + of("fairness"),
            "4. Results": f"{plural(len(runs), 'run')} in all"}


def demo() -> None:
    """One click: the bundled reviews, 5 rounds on the local model, shown on Stability."""
    st.markdown("#### Try it")
    st.caption(f"Imports {md(demo_items())} short English product reviews (bundled) and asks "
               f"the embedded SmolLM2 model {md(DEMO_ROUNDS)} times whether each one is positive "
               f"or negative: {md(demo_items() * DEMO_ROUNDS)} calls, no key, no internet. It took "
               f"{DEMO_SECONDS:.0f} s on {md(DEMO_MACHINE)}. The Stability page then shows which "
               "answers are stable, which flaky and which wrong every time.")
    if _shared.allowed_button("Run the demo", "run", type="primary", key="home.demo"):
        run_id = _shared.start_and_show("stability", lambda: start_demo(
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
