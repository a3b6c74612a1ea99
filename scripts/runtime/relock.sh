#!/usr/bin/env bash
# Re-resolve the runtime's locks after editing its pins: python.lock.txt from python.txt
# (for /usr/bin/python3, the interpreter the sandbox runs) and node/package-lock.json from
# node/package.json. scripts/build-runtime.sh installs exactly the locks; commit both.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
PIP_ROOT_USER_ACTION=ignore /usr/bin/python3 -m pip install --quiet --disable-pip-version-check \
    --dry-run --ignore-installed --only-binary=:all: --report "$report" -r "$here/python.txt"
{
    echo "# Every Python package of the sandbox runtime, dependencies included: what"
    echo "# scripts/build-runtime.sh installs (--no-deps). Made from python.txt by relock.sh."
    /usr/bin/python3 - "$report" <<'PY'
import json, sys
installs = json.load(open(sys.argv[1]))["install"]
print("\n".join(sorted(f"{i['metadata']['name']}=={i['metadata']['version']}" for i in installs)))
PY
} > "$here/python.lock.txt"
(cd "$here/node" && rm -f package-lock.json \
    && npm install --package-lock-only --silent --no-audit --no-fund)
echo "locks written: $here/python.lock.txt, $here/node/package-lock.json"
