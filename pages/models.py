"""Models: the entries of models.toml, their connection test, and where the embedded local
model is loaded (the workers' copies: runs execute there).

Keys are never shown or written: a model names the environment variable that holds its
key, and the page only says whether that variable is set. Reading and writing the file,
validation and the connection test are `evalcore.providers`; buttons act in callbacks,
which run before the page draws, so the table and the sidebar always show the new state.
"""
from __future__ import annotations

import concurrent.futures
from typing import Any

import streamlit as st

from evalcore.errors import EvalcoreError, ModelConfigError
from evalcore.providers.base import ModelConfig, check_base_url
from evalcore.providers.catalog import provider_for, provider_settings, providers
from evalcore.providers.client import test_connection
from evalcore.service.models import add_model, remove_model, test_model, update_model
from evalcore.service.workers import get_runner
from evalcore.providers.registry import load_models, validate_model
from evalcore.markup import md
from pages import _local_model, _shared

NEW = "(new model)"
FORM = "models.form."  # prefix of the editor's widget keys; the suffix is the ModelConfig field
COMMON_FIELDS = ("kind", "base_url", "model", "api_key_env", "concurrency", "rpm", "timeout",
                 "temperature", "top_p", "max_tokens", "seed", "deadline", "max_reply_bytes",
                 "api_key_header", "price_in", "price_out")
# ^ editable ModelConfig fields besides `name` (the others keep their defaults)
# where a key found in the Base URL goes instead, in this form's words
KEY_HINT = ("put the key in an environment variable and enter that variable's name under "
            "'API key environment variable'")


def form_fields() -> tuple[str, ...]:
    """The editor's fields: the common ones, then those only some providers read."""
    return (*COMMON_FIELDS, *provider_settings())


def _path() -> Any:
    return _shared.settings().models_path


def _say(kind: str, text: str) -> None:
    """Leave a message for the next draw (callbacks cannot draw in place)."""
    st.session_state["models.message"] = (kind, text)


def model_table(models: dict[str, ModelConfig]) -> None:
    """One row per model. The key column says only whether its variable is set."""
    rows = []
    for config in models.values():
        if config.api_key_env:
            key = f"${config.api_key_env} ({'set' if config.api_key() else 'NOT set'})"
        else:
            key = "(none)"
        rows.append({"name": config.name, "kind": config.kind, "model": config.model,
                     "base URL": config.base_url or "(embedded llama.cpp)", "API key": key,
                     "concurrency": config.concurrency, "rpm (0 = no limit)": config.rpm,
                     "timeout s": config.timeout})
    st.dataframe(rows, hide_index=True)


def _fill_form(config: ModelConfig | None, selected: str) -> None:
    """Load a model (or the defaults of a new one) into the editor's widgets."""
    base = config or ModelConfig(name="")
    st.session_state[FORM + "name"] = base.name
    for field in form_fields():
        value = getattr(base, field)
        st.session_state[FORM + field] = "" if value is None and isinstance(
            _default(field), str) else value
    st.session_state["models.form_for"] = selected


def _save() -> None:
    """Add or update the model described by the editor (validated by evalcore)."""
    state = st.session_state
    path = _path()
    name = str(state[FORM + "name"]).strip()
    values = {field: state[FORM + field] for field in form_fields()}
    values = {k: (v.strip() if isinstance(v, str) else v) for k, v in values.items()}
    try:
        if values["base_url"]:
            check_base_url(values["base_url"], KEY_HINT)  # in this form's words
        if state["models.selected"] == NEW:
            if not name:
                raise ModelConfigError("give the model a name (it is how runs refer to it)")
            entry = {k: v for k, v in values.items() if v not in (None, "")}
            add_model(_shared.actor(), _shared.engine(), path,
                              validate_model(entry, name, path))
        else:
            update_model(_shared.actor(), _shared.engine(), path, name,
                                 **{k: (None if v == "" else v) for k, v in values.items()})
    except ValueError as exc:  # check_base_url: says what to do, without the URL
        _say("error", f"Model '{name}': {exc}")
        return
    except Exception as exc:  # noqa: BLE001 - bugs are raised again by error_line
        _say("error", _shared.error_line(exc))
        return
    _say("success", f"Saved model '{name}' to {path}.")
    state["models.selected"] = name
    # Set every field from what was stored: the browser redraws the form as "Edit <name>"
    # (Name disabled) and shows only values the script set, so without this it is empty.
    _fill_form(load_models(path).get(name), name)


def editor(models: dict[str, ModelConfig], selected: str) -> None:
    """Add a model or edit the selected one."""
    if st.session_state.get("models.form_for") != selected or FORM + "name" not in st.session_state:
        _fill_form(models.get(selected), selected)
    editing = selected != NEW
    with st.form("models.form"):
        st.markdown(f"**{md('Edit ' + selected if editing else 'Add a model')}**")
        top = st.columns(3)
        top[0].text_input("Name", key=FORM + "name", disabled=editing,
                          help="How runs, the CLI and the pages refer to this model.")
        known = providers()
        top[1].selectbox("Kind", list(known), key=FORM + "kind",
                         help="; ".join(f"{name}: {p.summary}" for name, p in known.items()))
        top[2].text_input("Model id", key=FORM + "model", help="e.g. " + " or ".join(
            p.model_example for p in known.values() if p.model_example))
        endpoint = st.columns(2)
        endpoint[0].text_input("Base URL", key=FORM + "base_url", help="e.g. " + " or ".join(
            p.base_url_example for p in known.values() if p.base_url_example))
        endpoint[1].text_input("API key environment variable", key=FORM + "api_key_env",
                               help="The NAME of the variable holding the key, e.g. "
                                    "OPENAI_API_KEY. The key itself is never stored.")
        bounds = st.columns(3)
        bounds[0].number_input("Deadline per call (s)", min_value=1.0, step=30.0,
                               key=FORM + "deadline",
                               help="Most seconds one call may take, retries and waits included")
        bounds[1].number_input("Max reply bytes", min_value=1024, step=1_048_576,
                               key=FORM + "max_reply_bytes",
                               help="A longer reply is an error (never read whole)")
        bounds[2].text_input("Key header (optional)", key=FORM + "api_key_header",
                             help="Empty = the provider's own header (most: 'Authorization: "
                                  "Bearer <key>'); e.g. api-key for Azure OpenAI")
        limits = st.columns(3)
        limits[0].number_input("Concurrency", min_value=1, max_value=1000, step=1,
                               key=FORM + "concurrency", help="Most calls in flight at once")
        limits[1].number_input("Requests per minute", min_value=0, step=1, key=FORM + "rpm",
                               help="0 = no limit")
        limits[2].number_input("Timeout (s)", min_value=1.0, step=5.0, key=FORM + "timeout",
                               help="Seconds one HTTP attempt may take")
        sampling = st.columns(4)
        sampling[0].number_input("Temperature", min_value=0.0, max_value=2.0, step=0.1,
                                 key=FORM + "temperature", help="Empty = the model's default")
        sampling[1].number_input("top_p", min_value=0.0, max_value=1.0, step=0.05,
                                 key=FORM + "top_p", help="Empty = the model's default")
        sampling[2].number_input("Max tokens", min_value=1, step=64, key=FORM + "max_tokens")
        sampling[3].number_input("Seed", min_value=0, step=1, key=FORM + "seed",
                                 help="Empty = none")
        prices = st.columns(2)
        prices[0].number_input("Price in (per million prompt tokens)", min_value=0.0,
                               step=0.01, key=FORM + "price_in",
                               help="Empty = unknown: no cost figures, estimates or budgets")
        prices[1].number_input("Price out (per million completion tokens)", min_value=0.0,
                               step=0.01, key=FORM + "price_out")
        own = provider_settings()
        for column, (field, (label, help_text, owner)) in zip(st.columns(max(1, len(own))),
                                                              own.items()):
            _field_input(column, field, f"{label} ({owner} only)", help_text)
        st.form_submit_button("Save", key="models.save", type="primary", on_click=_save)


def _default(field: str) -> Any:
    """A ModelConfig field's default (its type picks the widget)."""
    return getattr(ModelConfig(name="defaults"), field)


def _field_input(column: Any, field: str, label: str, help_text: str) -> None:
    """A text or number input for a provider's own setting, by the field's type."""
    if isinstance(_default(field), str):
        column.text_input(label, key=FORM + field, help=help_text)
    else:
        column.number_input(label, min_value=1 if isinstance(_default(field), int) else 0.0,
                            step=1, key=FORM + field, help=help_text)


def _test_timeout(config: ModelConfig) -> float:
    """How long the page waits: test_connection's own bound (2 attempts) plus a model load."""
    return 2 * config.timeout + 15 + provider_for(config).load_seconds


@st.fragment
def connection_test(config: ModelConfig) -> None:
    """Send one short prompt on the shared background loop; show latency and reply or error."""
    if _shared.allowed_button("Test connection", "test_model", key="models.test"):
        with st.spinner(f"Asking {config.name}..."):
            try:
                reply = test_model(
                    _shared.actor(), _shared.engine(), config,
                    send=lambda c: get_runner().call(test_connection(c),
                                                     timeout=_test_timeout(c)))
            except concurrent.futures.TimeoutError:
                st.session_state["models.test_result"] = (
                    config.name, None, f"no answer within {_test_timeout(config):.0f}s")
            except EvalcoreError as exc:  # the role changed since the button was drawn
                st.session_state["models.test_result"] = (config.name, None, str(exc))
            else:
                st.session_state["models.test_result"] = (config.name, reply, None)
    result = st.session_state.get("models.test_result")
    if not result or result[0] != config.name:
        return
    _, reply, problem = result
    if reply is None:
        st.error(f"{md(config.name)}: {md(problem)}")
    elif reply.ok:
        st.success(f"{md(config.name)} answered in {reply.latency_ms:.0f} ms "
                   f"({md(reply.attempts)} attempt(s)).")
        st.code(reply.text.strip() or "(empty reply)", language=None, wrap_lines=True)
    else:
        st.error(f"{md(config.name)} failed after {reply.latency_ms:.0f} ms: {md(reply.error)}")


def _ask_delete() -> None:
    st.session_state["models.confirm_delete"] = st.session_state["models.selected"]


def _confirm_delete(name: str) -> None:
    st.session_state.pop("models.confirm_delete", None)
    try:
        remove_model(_shared.actor(), _shared.engine(), _path(), name)
    except Exception as exc:  # noqa: BLE001 - bugs are raised again by error_line
        _say("error", _shared.error_line(exc))
        return
    _say("success", f"Removed model '{name}'.")
    st.session_state["models.selected"] = NEW


def _cancel_delete() -> None:
    st.session_state.pop("models.confirm_delete", None)


def delete_controls(name: str) -> None:
    """Delete the selected model, after a confirmation."""
    if st.session_state.get("models.confirm_delete") == name:
        st.warning(f"Remove model '{md(name)}' from {md(_path())}? Stored runs keep its name.")
        yes, no = st.columns(2)
        yes.button("Yes, remove", key="models.delete_confirm", type="primary",
                   on_click=_confirm_delete, args=(name,))
        no.button("Cancel", key="models.delete_cancel", on_click=_cancel_delete)
    else:
        st.button("Delete...", key="models.delete", on_click=_ask_delete)


def local_panel(models: dict[str, ModelConfig]) -> None:
    """Where the embedded llama.cpp model is loaded: in the workers that execute runs (from
    their heartbeats). No Start button: a copy loaded in the app process would serve no run."""
    st.subheader("Local model")
    for line in _local_model.local_model_lines():
        st.markdown(f"State: {line}")  # trusted markdown: local_model_lines escapes its parts
    if not any(provider_for(m).load_seconds for m in models.values()):  # none loads here
        st.caption("No embedded model is configured; add one above to run llama.cpp.")
        return
    st.caption("A worker loads the model at its first run on it (a few seconds for SmolLM2) "
               "and keeps it loaded while it lives; stopping the worker frees it.")


def main() -> None:
    _shared.page_setup("Models", "The models runs can use (models.toml). Keys stay in environment "
                       "variables; only their names are stored.")
    message = st.session_state.pop("models.message", None)
    if message:
        getattr(st, message[0])(message[1])
    try:
        models = load_models(_path())
    except ModelConfigError as exc:
        st.error(str(exc))
        return
    model_table(models)
    names = [NEW, *models]
    if st.session_state.get("models.selected") not in names:
        st.session_state["models.selected"] = NEW
    selected = st.selectbox("Model", names, key="models.selected")
    denied = _shared.why_not("models")
    if selected != NEW:
        connection_test(models[selected])
        if denied is None:
            delete_controls(selected)
    if denied is None:
        editor(models, selected)
    else:
        st.caption(f"Adding, editing and deleting models: {md(denied)}")
    st.divider()
    local_panel(models)


main()
