"""The trust report: one self-contained HTML page (and its PDF) per model or run set that
puts stability, robustness and fairness together for a decision maker.

Sections: headline figures with intervals, the distribution of correct rounds, the
accuracy drop by attack level, the fairness verdict with its strongest effects across pairs, the gate
verdict, and what was run (datasets, N, judge, dates, who). Figures are plotly with
plotly.js inlined once, so the file opens offline and requests nothing
(`external_references` finds any src/href that would). Texts pass through Jinja2's
autoescape (templates/trust.html). The PDF is Debian's headless chromium printing it.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable, Optional

from sqlalchemy.engine import Engine

from evalcore.errors import EvalcoreError
from evalcore.kinds import find_kind, kind_names
from evalcore.metrics.gate import load_gate_config
from evalcore.report.stability_charts import bin_colour
from evalcore.report.gates import VERDICT_WORDS, gate_any, gate_reason, verdict_of
from evalcore.report.review_stats import run_reviews
from evalcore.report.run_figures import RESAMPLES, figure_metrics, interval_text, run_figures
from evalcore.report.sections import guarded_section
from evalcore.store.datasets import names_by_id
from evalcore.store.run_browse import finished_runs_of

TEMPLATE = Path(__file__).with_name("templates") / "trust.html"
CHROMIUM = "/usr/bin/chromium"
class ReportError(EvalcoreError):
    """A trust report cannot be built (no runs, chromium missing)."""


def model_runs(engine: Engine, model: str, *, leave_out: Collection[str] = ()) -> list[int]:
    """The model's latest finished run of each kind and dataset (summary columns only),
    without runs on the datasets named in `leave_out` (the CLI and the page pass the
    demo's: a first click on Home is no evidence about a model)."""
    known = kind_names()
    finished = finished_runs_of(engine, model)
    names = names_by_id(engine, {d for _, _, d in finished if d is not None})
    seen: dict[tuple[str, Any], int] = {}
    for run_id, kind, dataset_id in finished:
        if kind in known and names.get(dataset_id) not in leave_out:
            seen.setdefault((kind, dataset_id), int(run_id))
    if not seen:
        named = " or ".join(filter(None, (", ".join(known[:-1]), known[-1])))
        left = f" (runs on {', '.join(leave_out)} are left out)" if leave_out else ""
        raise ReportError(f"model {model!r} has no finished {named} run{left}; run one "
                          "first or pass --runs")
    return sorted(seen.values())


def _dataset_names(engine: Engine, ids: set[int]) -> dict[int, str]:
    return names_by_id(engine, ids)


def _headline(figs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per run, the figures its kind says head the run (`MetricSpec.heads`), each with
    its 95% interval."""
    rows = []
    for fig in figs:
        for metric in figure_metrics(fig):
            value = metric.value
            if not metric.heads or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            text = (f"{value:,}" if isinstance(value, int) else
                    f"{value:,.0f} ms" if metric.name == "mean_latency_ms" else
                    interval_text(float(value), metric.interval))
            rows.append({"run_id": fig["run"]["id"], "kind": fig["run"]["kind"],
                         "name": metric.label or plain(metric.name), "text": text,
                         "method": (metric.interval or {}).get("method", "")})
    return rows


def plain(name: str) -> str:
    """A figure's name as words ("mean_success_rate" -> "mean success rate"), where its
    kind gives it no label (`MetricSpec.label`)."""
    return name.replace("_", " ")

VERDICT_PLAIN = {
    "pass": "PASS: every gate that measured these runs held.",
    "fail": "FAIL: at least one run broke a limit of its gate.",
    "not measured": "NOT MEASURED: no gate could judge these runs (or one lacked a figure "
                    "it needs); this is not a pass.",
    "inconclusive": "INCONCLUSIVE: a run is too small to tell whether it regressed from "
                    "its baseline; more questions would tell.",
}


def summary(gates: Sequence[Mapping[str, Any]], warnings: Sequence[str]) -> dict[str, Any]:
    """The report's first lines: one overall verdict in words (FAIL if any run failed,
    PASS only when every gated run passed), a line per run, and the warnings that limit
    what the figures say."""
    verdicts = [g["verdict"] for g in gates]
    overall = ("fail" if "fail" in verdicts else
               "inconclusive" if "inconclusive" in verdicts else
               "pass" if verdicts and all(v == "pass" for v in verdicts) else "not measured")
    return {"verdict": overall, "word": VERDICT_WORDS[overall], "text": VERDICT_PLAIN[overall],
            "runs": [f"Run #{g['run_id']} ({g['title']}): {g['word']}"
                     + (f": {g['why']}" if g.get("why") else "") for g in gates],
            "warnings": list(warnings)}


NOTES = {
    "mg_pass_at_k": "mg_pass_at_k: mG-Pass@N, the chance that most of N rounds are right, "
                    "averaged over 'most' from half to all (1 = always right).",
    "semantic_entropy_mean": "semantic_entropy_mean: how spread a question's answers are "
                             "across rounds, in nats (0 = the same answer every round).",
    "judge_noise": "judge_noise: the share of the verdicts' spread across rounds that is the "
                   "judge's, not the model's (from a re-judging pass).",
    "circular_accuracy": "circular_accuracy: items right under every order of their options "
                         "that was asked (CircularEval).",
    "template_spread": "template_spread: best minus worst accuracy over the prompt templates "
                       "the items were asked under.",
}


def _notes(figs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per repeated-answers figure the headline shows."""
    shown = {name for fig in figs for name, v in fig["metrics"].items() if v is not None}
    return [text for name, text in NOTES.items() if name in shown]


def _figure_html(fig: Any, first: bool) -> str:
    return fig.to_html(full_html=False, include_plotlyjs="inline" if first else False,
                       config={"displaylogo": False, "displayModeBar": False})


def _distribution(fig: Mapping[str, Any]) -> Any:
    import plotly.graph_objects as go

    counts = fig["distribution"]
    n = len(counts) - 1
    total = sum(counts) or 1
    out = go.Figure(go.Bar(x=list(range(n + 1)), y=[100 * c / total for c in counts],
                           marker_color=[bin_colour(j, n) for j in range(n + 1)],
                           customdata=counts,
                           hovertemplate="right %{x} of " + str(n) + ": %{y:.1f}% "
                                         "(%{customdata})<extra></extra>"))
    out.update_layout(title=f"Run #{fig['run']['id']}: questions by correct rounds (N = {n})",
                      xaxis_title="correct rounds", yaxis_title="% of questions", height=320,
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    # whole-number ticks under the bars (plotly's own put them at -0.5, 0.5 for N = 1)
    out.update_xaxes(range=[-0.5, n + 0.5], tickmode="linear", tick0=0,
                     dtick=1 if n <= 20 else max(1, n // 10))
    out.update_yaxes(rangemode="tozero")
    return out


def _attack(figs: Sequence[Mapping[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    import plotly.graph_objects as go

    rows, clean, attacked, labels = [], [], [], []
    for fig in figs:
        m, iv = fig["metrics"], fig["intervals"]
        for level in m.get("levels", []):
            labels.append(f"#{fig['run']['id']} {level}")
            clean.append(m.get(f"accuracy_clean_{level}"))
            attacked.append(m.get(f"accuracy_attacked_{level}"))
            rows.append({"level": f"{level} (run #{fig['run']['id']})",
                         "clean": interval_text(clean[-1], iv.get(f"accuracy_clean_{level}")),
                         "attacked": interval_text(attacked[-1],
                                                   iv.get(f"accuracy_attacked_{level}")),
                         "pdr": interval_text(m.get(f"pdr_{level}"), iv.get(f"pdr_{level}"))})
    out = go.Figure([go.Bar(name="clean", x=labels, y=clean, marker_color="#2c7fb8"),
                     go.Bar(name="attacked", x=labels, y=attacked, marker_color="#d73027")])
    out.update_layout(barmode="group", title="Accuracy clean vs attacked", height=340,
                      yaxis_title="accuracy", yaxis_range=[0, 1],
                      margin={"t": 50, "b": 40, "l": 40, "r": 10})
    return out, rows


def _gates(engine: Engine, figs: Sequence[Mapping[str, Any]],
           gates: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for fig in figs:
        source = gates.get(fig["run"]["kind"])
        if source is None:
            continue
        config = load_gate_config(source)
        result = gate_any(engine, fig["run"]["id"], config)
        verdict = verdict_of(result)
        kind = find_kind(fig["run"]["kind"])
        out.append({"run_id": fig["run"]["id"], "source": Path(config.source).name,
                    "passed": result.passed, "verdict": verdict, "word": VERDICT_WORDS[verdict],
                    "title": f"{kind.title if kind else fig['run']['kind']} of "
                             f"{fig['run']['model']}",
                    "why": gate_reason(result),
                    "failed": [c.detail for c in result.failed()]})
    return out


def trust_report_html(engine: Engine, *, model: Optional[str] = None,
                      runs: Sequence[int] = (), gates: Mapping[str, Any] | None = None,
                      now: Optional[datetime] = None, leave_out: Collection[str] = (),
                      on_failure: Optional[Callable[[str], None]] = None) -> str:
    """The trust report of `model` (its latest finished runs, without those on the
    datasets named in `leave_out`) or of the given `runs`;
    `gates` maps a kind to its gate config (path, TOML text or dict). A run whose figures
    cannot be built is left out with one line in the report saying so (and passed to
    `on_failure`, the CLI's stderr): the other runs are still reported."""
    import jinja2

    ids = list(runs) or (model_runs(engine, model, leave_out=leave_out) if model else [])
    if not ids:
        raise ReportError("a trust report needs a model or run ids")
    failures: list[str] = []

    def failed(line: str) -> None:
        failures.append(line)
        if on_failure is not None:
            on_failure(line)

    figs = []
    for i in ids:
        with guarded_section("figures", int(i), failed, verb="build"):
            fig = run_figures(engine, int(i))
            kind = find_kind(fig["run"]["kind"])
            if kind is not None and kind.more_figures is not None:  # e.g. answer spread
                fig["metrics"].update(kind.more_figures(engine, fig["run"]["id"]))
            figs.append(fig)
    names = _dataset_names(engine, {f["run"]["dataset_id"] for f in figs
                                    if f["run"]["dataset_id"] is not None})
    parts: list[str] = []

    def embed(fig: Any) -> str:
        parts.append(_figure_html(fig, first=not parts))
        return parts[-1]

    distribution = "".join(embed(_distribution(f)) for f in figs if f.get("distribution"))
    robust = [f for f in figs if f["metrics"].get("levels")]
    attack, attack_rows = (_attack(robust) if robust else (None, []))
    fairness = [{"run_id": f["run"]["id"], "level": f["metrics"].get("fairness_level"),
                 "score": interval_text(f["metrics"].get("fairness_score"), None, 1),
                 "verdict": f["metrics"].get("fairness_verdict"),
                 "effects": f["metrics"].get("top_effects") or [],
                 "benchmark": f["metrics"].get("bias_benchmark") or {"rows": [], "notes": []}}
                for f in figs if "fairness_level" in f["metrics"]]
    run_rows = [{**f["run"], "dataset": names.get(f["run"]["dataset_id"], "-"),
                 "n_items": f["metrics"]["items"], "calls": f["metrics"]["calls"],
                 "tokens": f["metrics"]["tokens"],
                 "cost": "-" if f["metrics"]["cost"] is None else f"{f['metrics']['cost']:.4f}",
                 "created_at": f"{f['run']['created_at']:%Y-%m-%d %H:%M}",
                 "finished_at": (f"{f['run']['finished_at']:%Y-%m-%d %H:%M}"
                                 if f["run"]["finished_at"] else "-")} for f in figs]
    models = sorted({f["run"]["model"] for f in figs})
    gated = _gates(engine, figs, gates or {})
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(TEMPLATE.read_text(encoding="utf-8"))
    return template.render(
        title=model or ", ".join(models), generated=f"{(now or datetime.now(UTC)):%Y-%m-%d %H:%M} UTC",
        resamples=RESAMPLES, headline=_headline(figs), headline_notes=_notes(figs),
        distribution=distribution,
        attack=embed(attack) if attack is not None else "", attack_rows=attack_rows,
        fairness=fairness, gates=gated, runs=run_rows, failures=failures,
        reviews=run_reviews(engine, [int(f["run"]["id"]) for f in figs]),
        summary=summary(gated, [w for f in figs for w in f["metrics"].get("warnings") or []]))


def external_references(html_text: str) -> list[str]:
    """src/href attributes and CSS url()s of the page that point outside it (http, https
    or protocol-relative): a self-contained report has none."""
    pattern = r"""(?:\b(?:src|href)\s*=\s*["']?|url\(\s*["']?)((?:https?:)?//[^"')\s>]+)"""
    return re.findall(pattern, _markup_only(html_text), flags=re.IGNORECASE)


def _markup_only(html_text: str) -> str:
    """The page without the inside of <script> elements (plotly.js mentions URLs in its
    code, e.g. the SVG namespace, which are no requests); the scripts' own src stays."""
    return re.sub(r"(<script\b[^>]*>).*?(</script>)", r"\1\2", html_text,
                  flags=re.IGNORECASE | re.DOTALL)


def write_pdf(html_path: Path, pdf_path: Path, chromium: str = CHROMIUM,
              timeout: float = 180) -> Path:
    """Print the HTML to PDF with Debian's headless chromium (no network needed)."""
    if not Path(chromium).exists():
        raise ReportError(f"{chromium} not found; install Debian's chromium "
                          "(apt-get install chromium) or export only HTML")
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
           f"--print-to-pdf={pdf_path}", Path(html_path).resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0 or not Path(pdf_path).is_file():
        raise ReportError(f"chromium could not print {html_path} (exit {proc.returncode}): "
                          f"{proc.stderr.strip()[-300:]}")
    return Path(pdf_path)
