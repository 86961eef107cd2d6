"""The model registry: add, update, remove, import, test (checked actions)."""
from __future__ import annotations

from evalcore.actions.admin import add_model, import_models, remove_model, test_model, update_model

__all__ = ["add_model", "import_models", "remove_model", "test_model", "update_model"]
