"""Alembic migration scripts, shipped as package files and run by `evalcore.store.db.init_db`.

New revision (from the repository root, against a scratch database):
    python -c "from evalcore.store.db import alembic_config; from alembic import command; \
command.revision(alembic_config(), 'what changed', autogenerate=True)"
then read and fix the generated file in versions/ (keep `render_as_batch` in mind for SQLite).
"""

HEAD_REVISION = "0023"
"""The newest revision in versions/. Bump it with every new migration (a test checks it
against Alembic's own head): `init_db` compares it with the database and skips importing
Alembic when they match, which keeps every CLI start-up ~0.1 s shorter."""
