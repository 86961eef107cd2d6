"""The proof that a kind of evaluation is one module: this file defines and registers a
small extra kind, "recall" (is a question right in any of its N rounds?), whose page is
`extra_kind_page.py` beside it. With no other file touched, the kind is found in the CLI,
the Results list, compare, the leaderboard, the trend, the trust report, the gate and the
exports. docs/kinds.md walks through this module.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import pytest

from evalcore.kinds import EvalKind, Export, Gate, MetricSpec, register, report_json, unregister
from tests.pages.helpers import run_page
from tests.runner.conftest import add_model, dataset, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration

NAME = "recall"
REPO = Path(__file__).resolve().parents[2]


def build(engine: Any, params: Mapping[str, Any]) -> tuple[Any, None]:
    """The spec from the CLI flags (a page form would pass the same dict)."""
    from evalcore.runner.plan import run_spec

    return run_spec({**params, "kind": NAME}), None


def report(engine: Any, run_id: int) -> dict[str, Any]:
    """Per question: right in any round?"""
    from evalcore.report.run_figures import load_outcomes

    out = load_outcomes(engine, run_id)
    recalled = {str(item): any(v for v in verdicts) for item, verdicts in out.verdicts.items()}
    return {"run_id": run_id, "kind": NAME, "recalled": recalled,
            "recall_at_n": sum(recalled.values()) / len(recalled) if recalled else None}


def figures(engine: Any, out: Any, metrics: dict[str, Any], intervals: dict[str, Any]
            ) -> dict[str, Any]:
    """The headline figure: the share of questions right in at least one round."""
    from evalcore.report.run_figures import wilson

    hits, n = sum(1 for vs in out.verdicts.values() if any(vs)), len(out.verdicts)
    metrics["recall_at_n"] = hits / n if n else None
    intervals["recall_at_n"] = wilson(hits, n)
    return {}


def cli(sub: Any) -> None:
    p = sub.add_parser(NAME, help="is a question right in any of N rounds? (a test kind)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.set_defaults(func=_command)


def _command(args: Any) -> int:
    from evalcore import actions
    from evalcore.cli.common import acting_user, engine_and_settings, print_json
    from evalcore.runner.start import run_in_foreground

    engine, settings = engine_and_settings()
    params = {"dataset": args.dataset, "model": args.model, "rounds": args.rounds}
    run_id = actions.create_run(acting_user(engine), engine, NAME, params, settings.models_path)
    print(f"run {run_id}: {run_in_foreground(engine, run_id)}")
    print_json(report(engine, run_id))
    return 0


RECALL = EvalKind(
    name=NAME, title="Recall", page="tests/pages/extra_kind_page.py", order=40,
    report=report, build=build, cli=cli, figures=figures,
    exports=(Export("Recall JSON", "recall_run{run}.json", "application/json",
                    report_json(report)),),
    metrics=(MetricSpec("recall_at_n", "higher", heads=True, column=True),))


@pytest.fixture()
def recall(tmp_path: Path):
    """The kind, registered for one test, with its default gate."""
    gate = tmp_path / "gate.recall.toml"
    gate.write_text("[absolute]\nrecall_at_n_min = 0.5\n\n[relative]\nmax_regression = 0.1\n",
                    encoding="utf-8")
    yield register(RECALL._replace(gate=Gate(str(gate))))
    unregister(NAME)


def _cli(capsys, *argv: str) -> tuple[int, str]:
    from evalcore.cli import main

    code = main(list(argv))
    return code, capsys.readouterr().out


def test_an_extra_kind_is_found_everywhere(recall, page_env, engine, dataset, server, capsys):
    from evalcore.cli import build_parser
    from evalcore.report.compare_runs import compare_runs
    from evalcore.report.gates import default_gate_configs, gate_any
    from evalcore.report.leaderboard import leaderboard
    from evalcore.report.trend import trend
    from evalcore.report.trust import trust_report_html
    from evalcore.store import queries

    # the CLI: its own sub-command creates the run through actions.create_run
    assert NAME in build_parser().format_help()
    add_model(page_env, server)
    ids = []
    for _ in range(2):
        code, out = _cli(capsys, NAME, "--dataset", dataset, "--model", "fake")
        assert code == 0 and ": done" in out
        ids.append(int(out.split()[1].rstrip(":")))
    first, second = ids
    assert [(r.kind, r.status) for r in queries.list_runs(engine)] == [(NAME, "done")] * 2
    half = 0.5  # right_for_odd: items 1, 3, 5 of 6 right in every round

    # compare (and its CLI), leaderboard, trend
    result = compare_runs(engine, [first, second])
    assert result["kind"] == NAME and result["runs"][1]["metrics"]["recall_at_n"] == half
    code, out = _cli(capsys, "compare", str(first), str(second))
    assert code == 0 and f"{NAME} runs aligned" in out and "recall_at_n" in out
    board = leaderboard(engine, dataset)
    row, = board["rows"]
    assert row["runs"] == {NAME: second} and row["recall_at_n"] == half
    assert "recall_at_n" in board["columns"]
    points = trend(engine, dataset, "recall_at_n")["series"]["fake"]
    assert [(p["run_id"], p["kind"], p["value"]) for p in points] == [
        (first, NAME, half), (second, NAME, half)]

    # the gate (default config and CLI), the trust report
    gates = default_gate_configs()
    assert gates[NAME] == recall.gate.config
    assert gate_any(engine, second, gates[NAME], baseline_id=first).passed
    strict = Path(recall.gate.config).with_name("strict.toml")
    strict.write_text("[absolute]\nrecall_at_n_min = 0.9\n", encoding="utf-8")
    code, out = _cli(capsys, "gate", "--run", str(second), "--config", str(strict))
    assert code == 1 and "recall_at_n 0.5 < 0.9 FAILED" in out
    html = trust_report_html(engine, model="fake", gates=gates)
    assert "recall at n" in html and "0.500 [" in html and "PASSED" in html  # in words

    # the Results page: listed, filtered by kind, linked to its page, exported, gated
    at = run_page(str(REPO / "pages" / "results.py"), {"results.tab": "Runs"})
    at.multiselect(key="results.filter.kind").select(NAME).run()
    assert at.selectbox(key="results.pick").value == second and not at.exception
    assert any("on the Recall page" in c.value for c in at.caption)
    assert "Recall JSON" in [b.proto.label for b in at.get("download_button")]
    assert json.loads(recall.exports[0].make(engine, second)) == report(engine, second)
    assert "recall_at_n_min" in at.text_area(key=f"results.gate_text.{NAME}").value
    at = run_page(str(REPO / "pages" / "results.py"), {"results.tab": "Leaderboard"})
    table = next(df.value for df in at.dataframe if "recall_at_n" in df.value.columns)
    assert list(table["runs"]) == [f"{NAME} #{second}"]
    at = run_page(str(REPO / "pages" / "results.py"), {"results.tab": "Trend"})
    at.selectbox(key="results.trend_metric").set_value("recall_at_n").run()
    assert not at.exception and at.get("plotly_chart")
    at = run_page(str(REPO / "pages" / "results.py"), {"results.tab": "Compare"})
    assert NAME in at.radio(key="results.compare_kind").options
    at.radio(key="results.compare_kind").set_value(NAME).run()
    assert not at.exception and at.multiselect(key="results.compare_runs").value == [first,
                                                                                       second]


def test_the_app_navigates_to_the_kinds_page(recall, page_env, engine):
    from streamlit.testing.v1 import AppTest

    from tests.pages.helpers import APP, RUN_TIMEOUT

    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    at.run()
    at.switch_page("tests/pages/extra_kind_page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Recall"]
