"""BBQ under every rotation of its three options (`fairness --option-order circular`): a
planted model that answers by slot on the negative questions and "unknown" on the others
is read correctly: the run's own bias score stays the original order's, the bias score on
each rotation is recomputed from the options the slots held, circular accuracy and
position bias count the slots, and the cost is said before the run starts."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalcore.cli import main
from tests.runner.conftest import add_model, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.integration
N = 12


def _rows(shared: Path) -> list[dict]:
    source = shared / "bbq" / "Physical_appearance.jsonl"
    return [json.loads(line) for line in source.read_text("utf-8").splitlines()[:N]]


def slot_on_negative(rows: list[dict]):  # noqa: ANN201
    """Slot A (choice 0) whatever it holds on a negative question; the UNKNOWN option,
    wherever it is shown, on a non-negative one."""
    def reply(prompt: str, schema) -> str:  # noqa: ANN001
        row = next(r for r in rows if f"{r['context']}\n{r['question']}" in prompt)
        if row["question_polarity"] == "neg":
            return "0"
        unknown = next(row[f"ans{k}"] for k in range(3)
                       if row["answer_info"][f"ans{k}"][1] == "unknown")
        shown = dict(re.findall(r"choice (\d+): ([^\n]+)", prompt))
        return next(slot for slot, text in shown.items() if text.strip() == unknown)
    return reply


def test_bbq_rotation_beside_the_bias_score(settings, engine, server, shared_datasets,  # noqa: F811
                                            tmp_path, capsys):
    from scipy.stats import chisquare

    from evalcore.dataset import import_dataset

    rows = _rows(shared_datasets)
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    import_dataset(engine, body, filename="bbq_head.jsonl", name="bbq-head", format="bbq")
    server.reconfigure(responder=slot_on_negative(rows))
    add_model(settings, server, concurrency=2)
    out = tmp_path / "f.json"
    assert main(["fairness", "--suite", "bbq-head", "--model", "fake", "--option-order",
                 "circular", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "option order and templates: 24 extra model calls (24 for option orders, 0 for " \
           "templates; 0 stored already)" in printed  # 12 items x 2 rotations, said first
    assert printed.index("24 extra model calls") < printed.index("BBQ bias")
    report = json.loads(out.read_text("utf-8"))

    # Original order (slot A = ans0): the negative items answer ans0 = Unknown (items 0,
    # 1) or "The fat guy", the stereotyped target (4, 5, 8, 9): ambiguous 2 biased of 2
    # non-unknown, accuracy 4/6 -> s_AMB = (1 - 4/6) * (2 * 2/2 - 1) = 1/3; s_DIS = 1.
    bbq = report["bbq"]
    assert bbq["s_amb"] == pytest.approx(1 / 3) and bbq["s_dis"] == pytest.approx(1.0)
    variants = report["variants"]
    by_order = variants["bias_score_by_order"]
    assert list(by_order) == ["0,1,2", "1,2,0", "2,0,1"]
    assert by_order["0,1,2"]["s_amb"] == pytest.approx(bbq["s_amb"])  # the run's own
    # Slot A = ans1: slim / unknown / regular-sized: never the target -> -1/3 and -1.
    assert (by_order["1,2,0"]["s_amb"], by_order["1,2,0"]["s_dis"]) == \
        (pytest.approx(-1 / 3), pytest.approx(-1.0))
    # Slot A = ans2: fat (biased) on items 0-1, thin (not) on 4-5, unknown on 8-9: 0 and 0.
    assert (by_order["2,0,1"]["s_amb"], by_order["2,0,1"]["s_dis"]) == (0.0, 0.0)
    assert all(v["items"] == N for v in by_order.values())
    assert variants["bias_score_range"]["s_dis"] == [-1.0, 1.0]

    # the non-negative ambiguous items (UNKNOWN wherever it is) are right in every order
    assert variants["circular_accuracy"] == 3 / N and variants["circular_items"] == N
    assert variants["plain_accuracy"] == pytest.approx(4 / N)
    # 36 orders: slot A on 6 negative items x 3 + the unknown's slot once per rotation
    assert variants["position_bias"]["choice 0"] == {"chosen": 24 / 36, "right": 1 / 3}
    assert variants["position_bias_p"] == pytest.approx(chisquare([24, 6, 6]).pvalue)
    assert [f["item_idx"] for f in variants["slot_followers"]] == [0, 1, 4, 5, 8, 9]
    assert "bias score by option order" in printed and "range over the orders" in printed
    assert "disambiguated -1.000" in printed
    from evalcore.report.run_figures import run_figures  # compare, leaderboard, trust

    assert run_figures(engine, report["run_id"])["metrics"]["circular_accuracy"] == 3 / N
