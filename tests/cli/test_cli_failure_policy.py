"""`stability --errors-as-wrong`: a round whose call failed is left out by default and counted
wrong only when asked; the JSON, the CSV and the printed summary name the rule used."""
from __future__ import annotations

import csv
import json

import pytest

from evalcore.cli import main
from tests.runner.conftest import add_model, dataset, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("as_wrong", [False, True])
def test_a_failed_call_is_no_verdict_unless_errors_as_wrong(settings, engine, dataset, server,
                                                             tmp_path, capsys, as_wrong):
    server.reconfigure(script=["401"])  # the first call (item 0, round 1) fails for good
    add_model(settings, server, concurrency=1)
    out_json, out_csv = tmp_path / "s.json", tmp_path / "s.csv"
    args = ["stability", "--dataset", dataset, "--model", "fake", "--rounds", "2",
            "--json", str(out_json), "--csv", str(out_csv), "--csv-lang", "en"]
    assert main(args + (["--errors-as-wrong"] if as_wrong else [])) == 0
    printed = capsys.readouterr().out
    report = json.loads(out_json.read_text(encoding="utf-8"))
    first = report["stability_results"]["0"]  # item 0 is answered wrong by the fake
    assert report["timing"]["errors"] == 1 and report["summary"]["errored_rounds"] == 1
    assert (first["answered"], first["errored"]) == (1, 1)
    assert report["failure_policy"] == report["summary"]["failure_policy"] == (
        "as_wrong" if as_wrong else "exclude")
    rule = ("count as wrong answers (the method's seed rule, failure = 0)" if as_wrong else
            "are left out: each question's success rate is over its answered rounds")
    assert ("rounds without a verdict (model or judge error): 1 in 1 questions; they "
            f"{rule}\n") in printed
    assert report["summary"]["failure_policy_note"] == (
        f"rounds without a verdict (model or judge error) {rule}")
    with out_csv.open(encoding="utf-8-sig") as fh:
        row = list(csv.DictReader(fh))[0]
    assert (row["answered_rounds"], row["errored_rounds"]) == ("1", "1")
    if as_wrong:
        assert report["distribution"]["distribution_counts"] == {"0": 3, "1": 0, "2": 3}
        assert report["distribution"]["incomplete"] == 0
        assert first["rounds"][0]["correct"] is False and first["rounds"][0]["errored"]
        assert row["round_1_score"] == "0"
    else:
        assert report["distribution"]["distribution_counts"] == {"0": 2, "1": 0, "2": 3}
        assert report["distribution"]["incomplete"] == 1 and "incomplete:" in printed
        assert first["rounds"][0]["correct"] is None and first["rounds"][0]["errored"]
        assert row["round_1_score"] == "" and row["success_rate"] == "0.0"
    assert first["success_rate"] == 0.0 and first["class"] == "failed"
