"""The database a page or command works on (`store.db.get_engine`: one engine per URL)."""
from __future__ import annotations

from evalcore.store.db import get_engine

__all__ = ["get_engine"]
