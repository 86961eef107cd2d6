#!/usr/bin/env bash
# The team deployment on loopback, for trying it and for the team browser tests:
#   PostgreSQL (Debian's binaries, a throw-away cluster), a local OpenID Connect provider
#   (oidc-provider-mock), a fake OpenAI-compatible model (tests/fakes/fault_server.py),
#   `python -m evalcore worker` x2, and two app replicas.
# Users: admin@example.com (admin), alice@example.com (evaluator), bob@example.com
# (viewer), carol@example.com (reviewer); the provider's page signs in whoever you pick.
# Stop with Ctrl-C (everything started here is stopped, the data folder removed).
#
#   make team-demo                  # or: bash scripts/team_demo.sh
#   DEMO_DIR=/tmp/x APP_PORTS="8601 8602" OIDC_PORT=9400 PG_PORT=55432 bash scripts/team_demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DEMO_DIR=${DEMO_DIR:-$(mktemp -d /tmp/evalcore-team-demo.XXXXXX)}
APP_PORTS=${APP_PORTS:-"8601 8602"}
OIDC_PORT=${OIDC_PORT:-9400}
PG_PORT=${PG_PORT:-55432}
MODEL_PORT=${MODEL_PORT:-8818}
MODEL_LATENCY=${MODEL_LATENCY:-0.5}   # seconds per fake model call: runs last long enough to watch
WORKERS=${WORKERS:-2}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PIDS=()

log() { echo "[team-demo] $*" >&2; }
cleanup() {
    log "stopping"
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    as_pg "$PG_BIN/pg_ctl" -D "$DEMO_DIR/pg" -m fast -w stop >/dev/null 2>&1 || true
    [[ -n "${KEEP_DEMO_DIR:-}" ]] || rm -rf "$DEMO_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

as_pg() {  # initdb refuses root: as root the cluster belongs to the `postgres` user
    if [[ $EUID -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
wait_http() {  # URL WHAT
    for _ in $(seq 1 240); do
        curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
        sleep 0.5
    done
    log "$2 did not come up at $1 (logs in $DEMO_DIR)"; exit 1
}

mkdir -p "$DEMO_DIR"
chmod 755 "$DEMO_DIR"

# --- PostgreSQL -------------------------------------------------------------------
[[ -x "$PG_BIN/initdb" ]] || { log "PostgreSQL binaries not in $PG_BIN: apt-get install postgresql"; exit 1; }
if [[ $EUID -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    mkdir -p "$DEMO_DIR/pg" "$DEMO_DIR/pgrun"; chown postgres "$DEMO_DIR/pg" "$DEMO_DIR/pgrun"
fi
as_pg "$PG_BIN/initdb" -D "$DEMO_DIR/pg" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
    --no-sync >"$DEMO_DIR/initdb.log"
mkdir -p "$DEMO_DIR/pgrun"  # socket and log: the cluster owner writes there
as_pg "$PG_BIN/pg_ctl" -D "$DEMO_DIR/pg" -l "$DEMO_DIR/pgrun/postgres.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $DEMO_DIR/pgrun" start >/dev/null
"$PY" - <<PYEOF
import psycopg
with psycopg.connect("postgresql://postgres@127.0.0.1:$PG_PORT/postgres", autocommit=True) as c:
    c.execute("CREATE DATABASE evalcore")
PYEOF
log "PostgreSQL on 127.0.0.1:$PG_PORT"

# --- environment shared by every process (what deploy/evalcore.env documents) ------
export EVALCORE_DB_URL="postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/evalcore"
export EVALCORE_HOME="$DEMO_DIR/home"
export EVALCORE_AUTH=oidc
export EVALCORE_ADMINS=admin@example.com
export EVALCORE_DEFAULT_ROLE=viewer
export PYTHONUNBUFFERED=1

# --- OpenID Connect provider ------------------------------------------------------
users=()
for who in admin alice bob carol; do
    name="$(tr '[:lower:]' '[:upper:]' <<<"${who:0:1}")${who:1}"
    users+=(--user-claims "{\"sub\": \"$who@example.com\", \"email\": \"$who@example.com\", \"name\": \"$name\"}")
done
"$PY" -W ignore -m oidc_provider_mock --port "$OIDC_PORT" "${users[@]}" >"$DEMO_DIR/oidc.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$OIDC_PORT/.well-known/openid-configuration" "oidc-provider-mock"
log "OpenID Connect provider on http://127.0.0.1:$OIDC_PORT"

# Streamlit fills {port} per replica, so one file serves both.
cat >"$DEMO_DIR/secrets.toml" <<TOML
[auth]
redirect_uri = "http://127.0.0.1:{port}/oauth2callback"
cookie_secret = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
client_id = "evalcore-demo"
client_secret = "demo-secret"
server_metadata_url = "http://127.0.0.1:$OIDC_PORT/.well-known/openid-configuration"
client_kwargs = { scope = "openid profile email" }
TOML

# --- a fake model, users, a dataset and an attack set to review --------------------
"$PY" -m tests.fakes.fault_server --port "$MODEL_PORT" --latency "$MODEL_LATENCY" \
    >"$DEMO_DIR/model.log" 2>&1 &
PIDS+=($!)
# The CLI commands below, as admin, in one Python process (a process each cost ~1 s of CPU):
# `python -m evalcore users add alice@example.com --role evaluator --name Alice`, and so on.
EVALCORE_USER=admin@example.com "$PY" - "$MODEL_PORT" >/dev/null <<'PYEOF'
import sys
from evalcore.cli import main
port = sys.argv[1]
for argv in (
        ["users", "add", "alice@example.com", "--role", "evaluator", "--name", "Alice"],
        ["users", "add", "bob@example.com", "--role", "viewer", "--name", "Bob"],
        ["users", "add", "carol@example.com", "--role", "reviewer", "--name", "Carol"],
        # the workers' service account: it may run workers and nothing else
        ["users", "add", "demo-worker", "--role", "worker", "--name", "demo workers"],
        ["models", "add", "fake", "--kind", "openai", "--base-url",
         f"http://127.0.0.1:{port}/v1", "--model", "fake", "--concurrency", "1"],
        ["datasets", "import", "data/samples/math_zh_gbk.csv", "--name", "maths"],
        ["attack", "--dataset", "maths", "--level", "char", "--seed", "1", "--limit", "5",
         "--name", "maths-char"]):
    if main(argv):
        sys.exit(f"[team-demo] python -m evalcore {' '.join(argv)} failed")
PYEOF
log "users, model 'fake', dataset 'maths' and attack set 'maths-char' ready"

# --- workers: they execute every run, re-judging and attack generation ---------------
for i in $(seq 1 "$WORKERS"); do
    EVALCORE_USER=demo-worker "$PY" -m evalcore worker --name "demo-worker-$i" \
        >"$DEMO_DIR/worker-$i.log" 2>&1 &
    PIDS+=($!)
done
log "$WORKERS workers started"

# --- two app replicas ---------------------------------------------------------------
urls=()
for port in $APP_PORTS; do
    # the replicas only queue and read work: the workers above execute it
    EVALCORE_EMBEDDED_WORKER=0 \
    "$PY" scripts/serve_app.py --server.port "$port" --server.address 127.0.0.1 \
        --server.headless true --server.fileWatcherType none \
        --secrets.files "$DEMO_DIR/secrets.toml" \
        >"$DEMO_DIR/app-$port.log" 2>&1 &
    PIDS+=($!)
    urls+=("http://127.0.0.1:$port")
done
for url in "${urls[@]}"; do wait_http "$url/_stcore/health" "app replica"; done
log "app replicas: ${urls[*]} (sign in as alice, bob, carol or admin @example.com)"
echo "TEAM DEMO READY ${urls[*]}"
wait
