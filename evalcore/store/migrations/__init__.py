"""Alembic migration scripts, shipped as package files and run by `evalcore.store.db.init_db`.

New revision (from the repository root, against a scratch database):
    python -c "from evalcore.store.db import alembic_config; from alembic import command; \
command.revision(alembic_config(), 'what changed', autogenerate=True)"
then read and fix the generated file in versions/ (keep `render_as_batch` in mind for SQLite).
"""
