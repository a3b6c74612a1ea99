#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then lint, type-check
# and run the whole suite. Safe to re-run: installed pieces are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then SUDO="sudo"; fi

# Debian packages: the command each one provides, then the package.
missing=()
while read -r command package; do
    command -v "$command" >/dev/null 2>&1 || missing+=("$package")
done <<'PACKAGES'
redis-server redis-server
bwrap bubblewrap
sqlite3 sqlite3
iverilog iverilog
go golang-go
openssl openssl
/usr/bin/rustc rustc
prlimit util-linux
useradd passwd
unshare util-linux
PACKAGES
if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install -q --disable-pip-version-check --config-settings editable_mode=strict \
    -e ".[dev,gpu,trainers]" -e tests/plugins/referee_testplugin
PYTHON="$PYTHON" bash scripts/install-tools.sh  # helm + docker-compose for tests/deploy

"$PYTHON" -m ruff check .
"$PYTHON" -m ruff format --check .
"$PYTHON" -m mypy
"$PYTHON" -m pytest -n 2 "$@"
