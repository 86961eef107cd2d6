"""Team mode's shared model list: the registry's functions over the database."""
from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.config import settings_from_env
from evalcore.errors import ModelConfigError
from evalcore.providers.base import ModelConfig
from evalcore.model_store import ModelsInDatabase
from evalcore.providers.registry import (add_model, export_models, get_model, import_models,
                                         load_models, remove_model, update_model)


def test_postgres_settings_keep_models_in_the_database_sqlite_in_the_file(tmp_path: Path) -> None:
    pg = settings_from_env({"EVALCORE_HOME": str(tmp_path),
                            "EVALCORE_DB_URL": "postgresql+psycopg://u:pw@db/evalcore"})
    assert pg.models_path == ModelsInDatabase("postgresql+psycopg://u:pw@db/evalcore")
    assert "pw" not in str(pg.models_path)
    lite = settings_from_env({"EVALCORE_HOME": str(tmp_path)})
    assert lite.models_path == tmp_path / "models.toml"
    forced = settings_from_env({"EVALCORE_HOME": str(tmp_path), "EVALCORE_MODELS": "database"})
    assert isinstance(forced.models_path, ModelsInDatabase)


def test_registry_functions_work_on_the_database(store, store_url: str, tmp_path: Path) -> None:
    from sqlmodel import Session, select

    from evalcore.store.tables import ModelEntry

    models = ModelsInDatabase(store_url)
    assert list(load_models(models)) == ["local"] and not models.exists()
    gpt = ModelConfig(name="gpt", kind="openai", base_url="https://api.example.com/v1",
                      model="gpt-4o-mini", api_key_env="OPENAI_API_KEY")
    add_model(models, gpt, editor="root@x.com")
    with pytest.raises(ModelConfigError, match="already exists"):
        add_model(models, gpt)
    assert update_model(models, "gpt", editor="ann@x.com", concurrency=7).concurrency == 7
    with Session(store) as session:
        row = session.exec(select(ModelEntry).where(ModelEntry.name == "gpt")).one()
    assert row.updated_by == "ann@x.com" and row.config["api_key_env"] == "OPENAI_API_KEY"
    assert "key" not in row.config  # keys stay variable NAMES
    out = tmp_path / "models.toml"
    assert export_models(models, out) == ["gpt", "local"]  # as a new models.toml would
    remove_model(models, "gpt")
    with pytest.raises(ModelConfigError, match="not in the database's model list"):
        get_model(models, "gpt")
    with pytest.raises(ModelConfigError, match="already has local; pass --replace"):
        import_models(models, out)
    assert import_models(models, out, editor="root@x.com", replace=True) == ["gpt", "local"]
    assert get_model(models, "gpt").concurrency == 7
