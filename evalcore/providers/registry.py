"""The model list, kept in a TOML file (`Settings.models_path`, default `EVALCORE_HOME/models.toml`).

Format: one `[models.NAME]` table per model, the name being the table key (so TOML itself
rejects two models with one name)::

    [models.local]
    kind = "local"

    [models.gpt4o]
    kind = "openai"
    base_url = "https://api.openai.com/v1"
    model = "gpt-4o-mini"
    api_key_env = "OPENAI_API_KEY"   # the NAME of the variable; the key is never written
    concurrency = 8

Keys are the fields of `ModelConfig`; unknown keys are errors (a typo would otherwise be
silently ignored). With no file, the list holds one model, `local` (the embedded SmolLM2),
which is the default so a new user can run without any API key.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from evalcore.config import DEFAULT_MODEL  # noqa: F401 - the CLI and pages read it here
from evalcore.errors import ModelConfigError
from evalcore.providers.base import ModelConfig
from evalcore.providers.catalog import default_provider_name, get_provider, providers
from evalcore.providers.local import default_local_config  # noqa: F401 - re-exported
from evalcore.model_store import ModelsInDatabase
from evalcore.values import validated

_FORBIDDEN_KEYS = {"api_key", "key", "token", "secret"}
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
"""A model's name: it goes into runs, file names, URLs, commands and messages, so letters,
digits and . _ : - only (first a letter or digit), at most 64 characters."""


def check_model_name(name: str, where: str = "model name") -> str:
    """`name` if it is a safe model name (MODEL_NAME), else an error saying what is allowed."""
    if not isinstance(name, str) or not MODEL_NAME.fullmatch(name) or ".." in name:
        shown = repr(name[:40]) if isinstance(name, str) else type(name).__name__
        raise ModelConfigError(
            f"{where}: {shown} is not a valid model name; use letters, digits and . _ : - "
            "(starting with a letter or digit, no '..', at most 64 characters), e.g. gpt-4o-mini")
    return name


def default_models() -> dict[str, ModelConfig]:
    """What a missing models.toml means: the models the providers bring (the embedded
    SmolLM2, which is the default, so a new user can run without any API key)."""
    return {config.name: config for provider in providers().values()
            for config in provider.builtin_models()}


def _setting_names() -> frozenset[str]:
    return frozenset(f.name for f in msgspec.structs.fields(ModelConfig))


def validate_model(
    entry: dict[str, Any], name: str, path: Path | str = "models.toml"
) -> ModelConfig:
    """Build a ModelConfig from one table; errors name the file, the model and the key."""
    check_model_name(name, f"{path}: [models]")
    where = f"{path}: [models.{name}]"
    if not isinstance(entry, dict):
        raise ModelConfigError(f"{where} must be a table of settings, got {type(entry).__name__}")
    secrets = _FORBIDDEN_KEYS & set(entry)
    if secrets:
        raise ModelConfigError(
            f"{where} contains {', '.join(sorted(secrets))}: never store a key in the file; put "
            f'it in an environment variable and set api_key_env = "VARIABLE_NAME"'
        )
    known = _setting_names() - {"name"}
    unknown = set(entry) - known
    if unknown:
        raise ModelConfigError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))}; "
            f"known keys: {', '.join(sorted(known))}"
        )
    try:
        provider = get_provider(str(entry.get("kind") or default_provider_name()))
    except ModelConfigError as exc:
        raise ModelConfigError(f"{where}: {exc}") from None
    config = validated(ModelConfig, {**provider.entry_defaults(), **entry, "name": name},
                       fail=lambda why: ModelConfigError(f"{where}: {why}"))
    for field in provider.needs:
        if not getattr(config, field):
            example = {"base_url": provider.base_url_example,
                       "model": provider.model_example}.get(field, "")
            raise ModelConfigError(
                f"{where}: kind '{config.kind}' needs {field}"
                + (f" (e.g. {example})" if example else ""))
    return config


def load_models(path: Path | str) -> dict[str, ModelConfig]:
    """All models in `path`, by name; a missing file means `default_models()`.

    `path` may be the database's model list (`model_store.ModelsInDatabase`, team mode).
    """
    if isinstance(path, ModelsInDatabase):
        tables = path.tables()
        if not tables:
            return default_models()
        return {name: validate_model(entry, name, path) for name, entry in tables.items()}
    path = Path(path)
    if not path.exists():
        return default_models()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ModelConfigError(f"{path} is not valid TOML: {exc}; fix or delete the file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelConfigError(f"cannot read {path}: {exc}") from None
    tables = data.get("models", {})
    if not isinstance(tables, dict):
        raise ModelConfigError(
            f"{path}: expected [models.NAME] tables, found models = "
            f"{type(tables).__name__} (see evalcore/providers/registry.py)"
        )
    return {name: validate_model(entry, name, path) for name, entry in tables.items()}


def _to_table(config: ModelConfig) -> dict[str, Any]:
    """Fields worth writing: kind always, others when they differ from the defaults.

    TOML has no null, so a None sampling field is left out (it reads back as its default).
    """
    table: dict[str, Any] = {"kind": config.kind}
    for field in msgspec.structs.fields(config):
        value = getattr(config, field.name)
        if field.name == "name" or value is None or value == _default(field):
            continue
        table.setdefault(field.name, msgspec.to_builtins(value))
    return table


def _default(field: msgspec.structs.FieldInfo) -> Any:
    if field.default_factory is not msgspec.NODEFAULT:
        return field.default_factory()
    return field.default


def save_models(path: Path | str, models: dict[str, ModelConfig], *, editor: str = "") -> None:
    """Write `models` atomically (temp file in the same folder + os.replace), or into the
    database's model list (one transaction; `editor` is recorded on the changed rows)."""
    import tomli_w

    for name in models:
        check_model_name(name, str(path))
    if isinstance(path, ModelsInDatabase):
        path.save({name: _to_table(cfg) for name, cfg in models.items()}, editor)
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = tomli_w.dumps({"models": {name: _to_table(cfg) for name, cfg in models.items()}})
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _unknown(path: Path | str, name: str, models: dict[str, ModelConfig]) -> ModelConfigError:
    names = ", ".join(sorted(models)) or "(none)"
    return ModelConfigError(
        f"model '{name}' is not in {path}; available: {names}. Add it with "
        f"`python -m evalcore models add {name} --kind ...`"
    )


def get_model(path: Path | str, name: str) -> ModelConfig:
    """One model by name, or a ModelConfigError naming the model, the file and the choices."""
    models = load_models(path)
    if name not in models:
        raise _unknown(path, name, models)
    return models[name]


def add_model(path: Path | str, config: ModelConfig, *, editor: str = "") -> ModelConfig:
    """Add a new model; an existing name is an error (use `update_model`)."""
    models = load_models(path)
    if config.name in models:
        raise ModelConfigError(
            f"model '{config.name}' already exists in {path}; remove it first or update it"
        )
    config = validate_model(_to_table(config), config.name, path)
    models[config.name] = config
    save_models(path, models, editor=editor)
    return config


def update_model(path: Path | str, name: str, *, editor: str = "", **changes: Any) -> ModelConfig:
    """Change some settings of an existing model; returns the validated result.

    A change to None removes the key, so the setting goes back to its default (TOML has no null).
    """
    models = load_models(path)
    if name not in models:
        raise _unknown(path, name, models)
    entry = {**_to_table(models[name]), **changes}
    entry = {key: value for key, value in entry.items() if value is not None}
    config = validate_model(entry, name, path)
    models[name] = config
    save_models(path, models, editor=editor)
    return config


def remove_model(path: Path | str, name: str) -> None:
    """Delete a model from the file."""
    models = load_models(path)
    if name not in models:
        raise _unknown(path, name, models)
    del models[name]
    save_models(path, models)


def import_models(path: Path | str, toml_file: Path | str, *, editor: str = "",
                  replace: bool = False) -> list[str]:
    """Copy every model of the TOML file `toml_file` into `path` (e.g. the database);
    an existing name is an error unless `replace`. Returns the names copied."""
    toml_file = Path(toml_file)
    if not toml_file.exists():
        raise ModelConfigError(f"{toml_file} does not exist; pass a models.toml to import")
    incoming = load_models(toml_file)
    models = load_models(path) if _has_models(path) else {}
    clash = sorted(set(incoming) & set(models))
    if clash and not replace:
        raise ModelConfigError(f"{path} already has {', '.join(clash)}; pass --replace to "
                               "overwrite them or remove them first")
    save_models(path, {**models, **incoming}, editor=editor)
    return sorted(incoming)


def export_models(path: Path | str, toml_file: Path | str) -> list[str]:
    """Write the models of `path` (e.g. the database) to the TOML file `toml_file`."""
    models = load_models(path)
    save_models(Path(toml_file), models)
    return sorted(models)


def _has_models(path: Path | str) -> bool:
    """Whether `path` holds a stored list (not the built-in defaults)."""
    return path.exists() if isinstance(path, ModelsInDatabase) else Path(path).exists()
