#!/usr/bin/env bash
# Build the sandbox runtime: a read-only directory of packages every sandboxed program
# sees at /opt/runtime (REFEREE_SANDBOX_RUNTIME_DIR=<dir>):
#   python/             pip --target for /usr/bin/python3 (on the programs' PYTHONPATH)
#   node/node_modules/  npm packages (NODE_PATH)
#   java/*.jar          jars from Debian packages (on java's and javac's class path)
#   jdk/*.jsa           the classes javac, kotlinc and scalac load, as CDS archives for
#                       their JVMs (made by compiling Warmup.java, .kt, .scala): a build
#                       in the sandbox takes 0.6x the time or less
#   cpp/include/        <bits/stdc++.h> precompiled by the host's g++ for the sandbox's
#                       default C++ build (-O2 -std=c++17; on its include path): most
#                       competitive-programming answers include it, and parsing it is
#                       ~2 s of a ~2.3 s build
#   go/                 Go's standard library compiled with the sandbox's Go settings, and
#                       an import configuration naming its archives: a build compiles and
#                       links against them instead of running `go build`, which reads the
#                       library's sources each time (sandbox/gobuild.py); and
#                       bin/referee-gotestmain, which writes the main package `go test`
#                       would, for go_test builds done the same way
#   manifest.json       what was installed, with versions
# Exactly what the locks in scripts/runtime/ name (python.lock.txt, node/package-lock.json,
# made from the pins by scripts/runtime/relock.sh; Debian's versions for the jars).
# Usage: scripts/build-runtime.sh [DIR] (default /opt/referee/runtime). Re-running with
# unchanged lists does nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
lists="$here/runtime"
target="${1:-/opt/referee/runtime}"
SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then SUDO="sudo"; fi

# A new g++, JDK or JVM compiler makes the precompiled header or an archive stale (it
# would be skipped, and builds be slow): their versions are part of the stamp.
stamp="$( (cat "$lists"/*.txt "$lists"/Warmup.* "$lists"/gotestmain.go "$lists"/node/package.json \
    "$lists"/node/package-lock.json; g++ --version 2>/dev/null || true; \
    java -version 2>&1 || true; dpkg-query -W kotlin scala 2>/dev/null || true; \
    go version 2>/dev/null || true) \
    | sha256sum | cut -c1-16)"
if [ -f "$target/manifest.json" ] && grep -q "\"lists\": \"$stamp\"" "$target/manifest.json"; then
    echo "runtime at $target is up to date"
    exit 0
fi
packages() { grep -v '^\s*#' "$1" | grep -v '^\s*$' || true; }

# Debian packages: pip for the sandbox's own Python, npm (unless node came with its own),
# and the jars' packages.
missing=()
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
command -v npm >/dev/null 2>&1 || missing+=(npm)
while read -r package jar; do
    [ -f "/usr/share/java/$jar" ] || missing+=("$package")
done < <(packages "$lists/java.txt")
if [ "${#missing[@]}" -gt 0 ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/referee-runtime.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The interpreter the sandbox runs: wheels must match its version, not ours.
PIP_ROOT_USER_ACTION=ignore /usr/bin/python3 -m pip install --quiet --no-cache-dir --disable-pip-version-check \
    --no-warn-script-location --only-binary=:all: --no-deps --target "$work/python" \
    -r <(packages "$lists/python.lock.txt")
rm -rf "$work/python/bin"
mkdir -p "$work/node"
cp "$lists/node/package.json" "$lists/node/package-lock.json" "$work/node/"
# npm ci: the lock's versions and integrity hashes, or a failure; never a fresh resolution.
(cd "$work/node" && npm ci --silent --no-audit --no-fund >/dev/null)
mkdir -p "$work/java"
while read -r _ jar; do cp "/usr/share/java/$jar" "$work/java/$jar"; done \
    < <(packages "$lists/java.txt")
# A JVM compiler's archive: COMPILER's JVM, run with the flags of the sandbox's build of
# that language (sandbox/languages.py), records the classes it loads compiling the
# warm-up source; a JDK or compiler that changed since makes the JVM ignore the archive.
# Its warnings (classes it cannot archive) go to stdout.
archive() {
    local name=$1 compiler=$2
    shift 2
    command -v "$compiler" >/dev/null || return 0
    mkdir -p "$work/warmup"
    (cd "$work/warmup" && "$compiler" "-J-XX:ArchiveClassesAtExit=$work/jdk/$name.jsa" "$@" >/dev/null)
    rm -rf "$work/warmup"
}
mkdir -p "$work/jdk"
archive javac javac -J-Xmx512m -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -d . "$lists/Warmup.java"
archive kotlinc /usr/bin/kotlinc -J-Xmx1024m -J-XX:TieredStopAtLevel=1 "$lists/Warmup.kt" \
    -include-runtime -d main.jar
archive scalac /usr/bin/scalac -J-Xmx1024m -J-XX:TieredStopAtLevel=1 -d . "$lists/Warmup.scala"
# The flags must be the sandbox's C++ build's (sandbox/languages.py); g++ checks the rest
# (a macro defined before the include, another -std) and parses the header when they
# differ. Where g++ finds the header is where it says it does (-H).
mkdir -p "$work/cpp/include/bits/stdc++.h.gch"
if command -v g++ >/dev/null; then
    header="$(echo '#include <bits/stdc++.h>' | g++ -std=c++17 -x c++ -H -fsyntax-only - 2>&1 \
        | sed -n '1s/^\. //p')"
    g++ -O2 -std=c++17 -x c++-header "$header" -o "$work/cpp/include/bits/stdc++.h.gch/O2-c++17"
fi

# The settings must be the sandbox's Go build's (sandbox/languages.py's GO_ENV): with
# CGO_ENABLED=0, net and os/user are their pure-Go builds, as `go build` there takes them.
# The configuration names the archives where the sandbox sees them (/opt/runtime); the
# version is checked against the installed Go's before a build uses them.
if command -v go >/dev/null; then
    mkdir -p "$work/go/pkg"
    GOCACHE="$work/go-cache" GOPATH="$work/go-path" CGO_ENABLED=0 GO111MODULE=off \
        GOFLAGS=-mod=mod go list -export -f '{{if .Export}}{{.ImportPath}} {{.Export}}{{end}}' \
        std > "$work/go-exports"
    while read -r package archive; do
        mkdir -p "$(dirname "$work/go/pkg/$package")"
        cp "$archive" "$work/go/pkg/$package.a"
        echo "packagefile $package=/opt/runtime/go/pkg/$package.a"
    done < "$work/go-exports" > "$work/go/importcfg"
    go env GOVERSION > "$work/go/VERSION"
    # The main package writer for go_test's quick build, kept only where a test it makes
    # the main of builds and runs here (the code it writes calls this Go's testing).
    mkdir -p "$work/go/bin" "$work/go-check"
    GOCACHE="$work/go-cache" GOPATH="$work/go-path" CGO_ENABLED=0 GO111MODULE=off \
        go build -o "$work/go/bin/referee-gotestmain" "$lists/gotestmain.go"
    sed "s|=/opt/runtime/go/|=$work/go/|" "$work/go/importcfg" > "$work/go-check/importcfg"
    printf 'package main\nimport "testing"\nfunc TestOk(t *testing.T) {}\n' \
        > "$work/go-check/main_test.go"
    if ! (cd "$work/go-check" \
        && "$work/go/bin/referee-gotestmain" -importcfg importcfg -package referee/under_test \
            -o testmain.go -cfg importcfg.test main_test.go \
        && go tool compile -p referee/under_test -complete -importcfg importcfg -pack \
            -o under_test.a main_test.go \
        && go tool compile -p main -complete -importcfg importcfg.test -pack -o main.a \
            testmain.go \
        && go tool link -importcfg importcfg.test -o main.test main.a \
        && ./main.test -test.v | grep -q '^--- PASS: TestOk'); then
        echo "referee-gotestmain's main does not build with $(go env GOVERSION):" \
            "go_test builds by go test -c" >&2
        rm -f "$work/go/bin/referee-gotestmain"
    fi
    chmod -R u+w "$work/go-cache" "$work/go-path" 2>/dev/null || true
    rm -rf "$work/go-cache" "$work/go-path" "$work/go-exports" "$work/go-check"
fi

/usr/bin/python3 - "$work" "$stamp" <<'PY'
import json, pathlib, sys
from importlib.metadata import distributions
root, stamp = pathlib.Path(sys.argv[1]), sys.argv[2]
python = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions(path=[str(root / "python")]))
modules = root / "node" / "node_modules"
node = sorted(
    f"{p.parent.relative_to(modules).as_posix()}@{json.loads(p.read_text())['version']}"
    for p in [*modules.glob("[!@]*/package.json"), *modules.glob("@*/*/package.json")]
)
java = sorted(p.name for p in (root / "java").glob("*.jar"))
pch = root / "cpp" / "include" / "bits" / "stdc++.h.gch"
cpp = sorted(f"bits/stdc++.h {p.name}" for p in pch.iterdir())
jdk = sorted(p.name for p in (root / "jdk").iterdir())
version = root / "go" / "VERSION"
go = version.read_text().strip() if version.is_file() else None
manifest = {
    "lists": stamp, "python": python, "node": node, "java": java, "cpp": cpp, "jdk": jdk,
    "go": go,
}
(root / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
PY
chmod -R a+rX "$work"
$SUDO mkdir -p "$(dirname "$target")"
$SUDO rm -rf "$target.new"
$SUDO cp -a "$work" "$target.new"
$SUDO rm -rf "$target"
$SUDO mv "$target.new" "$target"
echo "runtime built at $target"
