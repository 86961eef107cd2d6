"""`streamlit run streamlit_app.py ARGS...` with the app's warm-up started first, in the
same process, before the first visitor (`scripts/run_app.sh` and the deploy files start
the app through this).

Streamlit runs `streamlit_app.py` only when a browser connects, so a warm-up started
from there makes the very first visitor wait for the imports and the database it would
have done. Started here, the server is already importing the pages' modules and opening
the database while it waits for its first connection (evalcore/warmup.py; the app's own
call then finds it started). Team mode too: nothing is drawn or read for anyone.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    # Streamlit (with plotly and pandas) is imported here first, in this thread: plotly looks
    # pandas up in sys.modules, and a pandas half-imported by the warm-up thread at that
    # moment crashed the start ("partially initialized module 'pandas'").
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401
    from streamlit.web import cli as stcli

    from evalcore import warmup

    warmup.start(ROOT.glob("pages/*.py"))

    sys.argv = ["streamlit", "run", str(ROOT / "streamlit_app.py"), *argv]
    return int(stcli.main() or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
