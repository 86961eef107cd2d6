#!/usr/bin/env bash
# Start the app for one user: a worker process that executes the queued jobs (runs,
# re-judging, judge analysis, attack generation) and the Streamlit app, which only
# queues and reads them. Both share the database (SQLite by default).
#
# The worker starts with the app, not with the first page view, so work left by an app
# that was stopped or killed continues at once: a released job immediately, one whose
# worker died after its lease (EVALCORE_LEASE_S, 15 s). Ctrl-C or SIGTERM stops both;
# the worker releases its jobs first.
#
# It listens on EVALCORE_ADDRESS, 127.0.0.1 (this machine only) unless set: without
# sign-in whoever reaches the port may do everything, so an address other machines reach
# is refused unless EVALCORE_AUTH is oidc or header (evalcore/auth/listen.py).
#
# Usage: scripts/run_app.sh PORT [streamlit options]   (make run PORT=8501)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PORT=${1:-8501}
shift || true
PY=.venv/bin/python
ADDRESS=${EVALCORE_ADDRESS:-127.0.0.1}
args=("$@")
for i in "${!args[@]}"; do  # an address among the streamlit options is checked too
    case "${args[$i]}" in
        --server.address) ADDRESS=${args[$((i + 1))]:-} ;;
        --server.address=*) ADDRESS=${args[$i]#*=} ;;
    esac
done
"$PY" -m evalcore.auth.listen "$ADDRESS" || exit 2
# alerts sent by the worker link to this app (results?run=N) unless set otherwise
export EVALCORE_APP_URL="${EVALCORE_APP_URL:-http://localhost:$PORT}"

"$PY" -m evalcore worker --jobs "${EVALCORE_WORKER_JOBS:-2}" --name "app-worker@$(hostname):$$" &
WORKER=$!
APP=
stop() {  # background children of a script ignore Ctrl-C: stop them here
    [[ -n "$APP" ]] && kill -TERM "$APP" 2>/dev/null
    kill -TERM "$WORKER" 2>/dev/null
    wait 2>/dev/null
}
trap stop EXIT
# Ctrl-C or SIGTERM is how the app is meant to stop: a clean exit, not make's "Error 143"
trap 'exit 0' INT TERM

# the app process needs no worker of its own: this one executes everything
EVALCORE_EMBEDDED_WORKER=0 "$PY" scripts/serve_app.py --server.port "$PORT" \
    --server.address "$ADDRESS" "$@" &
APP=$!
wait "$APP"
