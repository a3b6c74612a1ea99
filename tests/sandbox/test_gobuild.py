"""Go's quick build (`sandbox.gobuild`): compiled and linked against the runtime's
standard library where the runtime was built by the Go installed now, ``go build``
everywhere else, and the same programs run either way."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.sandbox import (
    Case,
    CompileStatus,
    Program,
    Sandbox,
    SandboxSettings,
    gobuild,
    languages,
)
from referee.sandbox.doctor import check_host
from tests.conftest import require

from .conftest import FAST
from .test_runtime import BUILT


def _go() -> languages.Language:
    found = languages.find("go")
    assert found is not None and found.compile is not None
    return found


GO = _go()

PROGRAM = """package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Scan()
	words := strings.Fields(in.Text())
	sort.Strings(words)
	_, _ = user.Current()
	self, _ := os.Executable()
	left := []string{}
	for _, name := range []string{"main", "main.a", "main.go"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(self), name)); err == nil {
			left = append(left, name)
		}
	}
	fmt.Println(strings.Join(words, ","), net.ParseIP("10.0.0.1"), strings.Join(left, ","))
}
"""


def _runtime_with(version: str, importcfg: bool = True) -> Path:
    """A runtime whose Go part claims ``version`` (made under /tmp: the sandboxes' users
    read it)."""
    root = Path(tempfile.mkdtemp(prefix="referee-goruntime-"))
    (root / "go").mkdir()
    (root / "manifest.json").write_text(json.dumps({"lists": "test"}))
    (root / "go" / "VERSION").write_text(f"{version}\n")
    if importcfg:
        (root / "go" / "importcfg").write_text("packagefile fmt=/nowhere/fmt.a\n")
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


@pytest.fixture(scope="module")
def installed() -> str:
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    version = gobuild._installed(GO)
    assert version is not None and version.startswith("go")
    return version


@pytest.fixture(scope="module")
def stale() -> Iterator[Path]:
    root = _runtime_with("go1.0")
    yield root
    shutil.rmtree(root)


def test_the_quick_build_needs_the_installed_gos_library(installed: str, stale: Path) -> None:
    current = _runtime_with(installed)
    try:
        assert gobuild.steps(GO, [], current) == gobuild.STEPS
        assert gobuild.leftovers(gobuild.STEPS) == (gobuild.ARCHIVE,)
        # another Go's archives, none at all, no runtime, build flags: `go build`
        assert gobuild.steps(GO, [], stale) == (GO.compile,)
        assert gobuild.leftovers(gobuild.steps(GO, [], stale)) == ()
        assert gobuild.steps(GO, ["-race"], current) == (GO.compile,)
        assert gobuild.steps(GO, [], None) == (GO.compile,)
        (current / "go" / "importcfg").unlink()
        assert gobuild.steps(GO, [], current) == (GO.compile,)
    finally:
        shutil.rmtree(current)
    cpp = languages.find("cpp")
    assert cpp is not None and gobuild.steps(cpp, [], current) == (cpp.compile,)


@pytest.fixture(scope="module")
def built(installed: str) -> Path:
    """The real runtime (scripts/test.sh builds it), which must hold this Go's library."""
    require((BUILT / "go" / "VERSION").is_file(), f"no Go library in the runtime at {BUILT}")
    assert (BUILT / "go" / "VERSION").read_text().strip() == installed
    return BUILT


@pytest.mark.parametrize("runtime", ["built", "stale", "none"])
def test_a_go_program_builds_and_runs_the_same_every_way(
    runtime: str, request: pytest.FixtureRequest
) -> None:
    """Quick (the runtime's library), or ``go build`` (a runtime of another Go, none):
    the same output, and the build leaves neither the sources nor the compiled package
    beside the program."""
    root = None if runtime == "none" else request.getfixturevalue(runtime)
    quick = gobuild.steps(GO, [], root) == gobuild.STEPS
    assert quick == (runtime == "built")
    with Sandbox(SandboxSettings(backend="bwrap", limits=FAST, runtime_dir=root)) as sandbox:
        report = sandbox.run(Program(language="go", source=PROGRAM), [Case(stdin="b c a\n")])
    assert report.compile is not None and report.compile.status is CompileStatus.OK, report
    [case] = report.cases
    assert case.stdout == "a,b,c 10.0.0.1 main\n", case


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("package main\nfunc main() { x := 1 }\n", "main.go:2:15: x declared but not used"),
        ('package main\nimport "fmt"\nfunc main() { fmt.Println("a" }\n', "main.go:3:"),
        ("package main\nfunc f() int\nfunc main() { f() }\n", "missing function body"),
        ('package main\nimport "C"\nfunc main() {}\n', "could not import C"),
    ],
)
def test_what_does_not_build_quickly_says_why(built: Path, source: str, said: str) -> None:
    """A compile error and a link error (a function without a body, which the
    compiler alone accepts) are the program's, in the tools' own words."""
    with Sandbox(SandboxSettings(backend="bwrap", limits=FAST, runtime_dir=built)) as sandbox:
        report = sandbox.run(Program(language="go", source=source), [Case()])
    assert report.compile is not None and report.compile.status is CompileStatus.ERROR
    assert said in report.compile.output, report.compile.output
    assert report.cases == []


@pytest.mark.parametrize("runtime", ["built", "stale", "none"])
def test_the_doctor_says_how_go_builds(runtime: str, request: pytest.FixtureRequest) -> None:
    """A runtime left behind by an upgraded Go slows every build without failing one:
    ``referee doctor`` says so, and what to run."""
    root = None if runtime == "none" else request.getfixturevalue(runtime)
    report = check_host(SandboxSettings(backend="bwrap", runtime_dir=root), smoke=False)
    [go] = [c for c in report if c.component == "language go"]
    said = {
        "built": "builds against the runtime's library",
        "stale": "builds by go build: the runtime's Go library is go1.0's",
        "none": "builds by go build: no runtime",
    }
    assert go.ok and said[runtime] in go.detail, go
