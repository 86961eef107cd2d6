"""Errors a user can act on. Messages name the file, row, column or model and what to do."""
from __future__ import annotations


class EvalcoreError(Exception):
    """Base of every error evalcore raises on purpose; the CLI prints it and exits 2."""


class DatasetError(EvalcoreError):
    """A file could not be imported (message names file, row, column and the fix)."""


class DuplicateDatasetError(DatasetError):
    """The same content was imported before."""


class ModelConfigError(EvalcoreError):
    """A model is unknown or misconfigured (message names the model and models.toml)."""


class RunError(EvalcoreError):
    """A run cannot be started, resumed or found."""


class SettingsError(EvalcoreError):
    """A setting (environment variable, flag, database URL) is wrong; says what to write."""
