#!/usr/bin/env bash
# Install the Debian packages the tests need, only when one is missing.
#
# Why a script: `make test` must be fast the second time, so we ask dpkg first
# and touch apt (update + install) only when something is really absent.
# Under CI=true a failed install is an error (exit 1): a missing browser or
# database must never turn into silently skipped tests.
set -euo pipefail

PACKAGES=(${EVALCORE_APT_PACKAGES:-python3.11-venv chromium fonts-wqy-microhei wordnet-base wordnet-sense-index postgresql iproute2})
in_ci() { case "${CI:-}" in 1|true|TRUE|True|yes) return 0 ;; *) return 1 ;; esac; }

missing=()
for pkg in "${PACKAGES[@]}"; do
    # "install ok installed" only: a removed package can leave a config-files entry.
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi

fail() {
    echo "setup_system: $*" >&2
    if in_ci; then
        exit 1
    fi
    echo "setup_system: continuing; tests that need these packages will be skipped." >&2
    exit 0
}

echo "setup_system: installing missing Debian packages: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        fail "need root to apt-get install ${missing[*]} (run: sudo apt-get install ${missing[*]})"
    fi
else
    SUDO=()
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq || fail "apt-get update failed"
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || fail "apt-get install ${missing[*]} failed"
