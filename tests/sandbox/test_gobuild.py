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


def _language(name: str) -> languages.Language:
    found = languages.find(name)
    assert found is not None and found.compile is not None
    return found


GO = _language("go")
GO_TEST = _language("go_test")

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


def _runtime_with(version: str, importcfg: bool = True, testmain: bool = True) -> Path:
    """A runtime whose Go part claims ``version`` (made under /tmp: the sandboxes' users
    read it)."""
    root = Path(tempfile.mkdtemp(prefix="referee-goruntime-"))
    (root / "go" / "bin").mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps({"lists": "test"}))
    (root / "go" / "VERSION").write_text(f"{version}\n")
    if importcfg:
        (root / "go" / "importcfg").write_text("packagefile fmt=/nowhere/fmt.a\n")
    if testmain:
        (root / "go" / "bin" / "referee-gotestmain").write_text("")
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
        assert gobuild.steps(GO, [], current, {}) == gobuild.STEPS
        assert gobuild.leftovers(gobuild.STEPS) == (gobuild.ARCHIVE,)
        # another Go's archives, none at all, no runtime, build flags: `go build`
        assert gobuild.steps(GO, [], stale, {}) == (GO.compile,)
        assert gobuild.leftovers(gobuild.steps(GO, [], stale, {})) == ()
        assert gobuild.steps(GO, ["-race"], current, {}) == (GO.compile,)
        assert gobuild.steps(GO, [], None, {}) == (GO.compile,)
        # go test -c's quick build needs the main package writer too
        assert gobuild.steps(GO_TEST, [], current, {}) == gobuild.TEST_STEPS
        assert gobuild.leftovers(gobuild.TEST_STEPS) == (gobuild.ARCHIVE, *gobuild.TEST_FILES)
        assert gobuild.steps(GO_TEST, [], stale, {}) == (GO_TEST.compile,)
        # an external test package beside the one it tests: two packages, go test's job
        two = {"main_test.go": "// doc\npackage add_test\n", "add.go": "/* c */ package add\n"}
        assert gobuild.steps(GO_TEST, [], current, two) == (GO_TEST.compile,)
        one = {"main_test.go": "// doc\n/* c */\npackage add\n", "add.go": "package add\n"}
        assert gobuild.steps(GO_TEST, [], current, one) == gobuild.TEST_STEPS
        (current / "go" / "bin" / "referee-gotestmain").unlink()
        assert gobuild.steps(GO_TEST, [], current, {}) == (GO_TEST.compile,)
        assert gobuild.steps(GO, [], current, {}) == gobuild.STEPS
        (current / "go" / "importcfg").unlink()
        assert gobuild.steps(GO, [], current, {}) == (GO.compile,)
    finally:
        shutil.rmtree(current)
    cpp = languages.find("cpp")
    assert cpp is not None and gobuild.steps(cpp, [], current, {}) == (cpp.compile,)


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
    quick = gobuild.steps(GO, [], root, {}) == gobuild.STEPS
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
    [go_test] = [c for c in report if c.component == "language go_test"]
    said = {
        "built": "builds against the runtime's library",
        "stale": "builds by go build: the runtime's Go library is go1.0's",
        "none": "builds by go build: no runtime",
    }
    assert go.ok and said[runtime] in go.detail, go
    tested = said[runtime].replace("go build", "go test -c")
    assert go_test.ok and tested in go_test.detail, go_test


TESTS = """package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func double(x int) int { return 2 * x }
func main() {} // a package main with its own main, as go test builds it

func TestDouble(t *testing.T) {
	if double(2) != 4 { t.Fatalf("double %d", "vet would refuse this format") }
}

func TestWrong(t *testing.T) {
	t.Run("sub", func(t *testing.T) { t.Errorf("expected %d", 5) })
}

func TestNothingLeft(t *testing.T) {
	self, _ := os.Executable()
	for _, name := range []string{"main_test.go", "main.a", "under_test.a", "importcfg.test",
		"referee_testmain.go"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(self), name)); err == nil {
			t.Errorf("left beside the tests: %s", name)
		}
	}
}

func Testlower(t *testing.T) { t.Fatal("not a test: go test never runs it") }

func ExampleDouble() {
	fmt.Println(double(3))
	// Output: 6
}

func ExampleUnchecked() { fmt.Println("no output comment: compiled, never run") }
"""


@pytest.mark.parametrize("runtime", ["built", "stale", "none"])
def test_go_tests_build_and_run_the_same_every_way(
    runtime: str, request: pytest.FixtureRequest
) -> None:
    """Quick (the runtime's library and referee-gotestmain), or ``go test -c``: the same
    tests run, in the same words; neither runs go vet (a format it would refuse builds);
    nothing of the build stays beside the binary."""
    root = None if runtime == "none" else request.getfixturevalue(runtime)
    quick = gobuild.steps(GO_TEST, [], root, {}) == gobuild.TEST_STEPS
    assert quick == (runtime == "built")
    with Sandbox(SandboxSettings(backend="bwrap", limits=FAST, runtime_dir=root)) as sandbox:
        report = sandbox.run(Program(language="go_test", source=TESTS), [Case()])
    assert report.compile is not None and report.compile.status is CompileStatus.OK, report
    [case] = report.cases
    lines = case.stdout.splitlines()
    ran = [line for line in lines if line.lstrip().startswith(("=== RUN", "--- "))]
    assert ran == [
        "=== RUN   TestDouble",
        "--- PASS: TestDouble (0.00s)",
        "=== RUN   TestWrong",
        "=== RUN   TestWrong/sub",
        "--- FAIL: TestWrong (0.00s)",
        "    --- FAIL: TestWrong/sub (0.00s)",
        "=== RUN   TestNothingLeft",
        "--- PASS: TestNothingLeft (0.00s)",
        "=== RUN   ExampleDouble",
        "--- PASS: ExampleDouble (0.00s)",
    ], case.stdout
    assert "main_test.go:18: expected 5" in case.stdout and case.exit_code == 1


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (  # parsed first, as go test does: go/parser's words
            'package main\nimport "testing"\nfunc TestA(t *testing.T) { if true { }\n',
            "main_test.go:3:40: expected '}', found 'EOF'",  # go test's own words
        ),
        (
            'package main\nimport "testing"\nfunc TestA(x int) {}\n',
            "main_test.go:3:1: wrong signature for TestA, must be: func TestA(t *testing.T)",
        ),
        (
            'package main\nimport "testing"\nfunc TestMain(t int) {}\n',
            "wrong signature for TestMain, must be: func TestMain(m *testing.M)",
        ),
        ('package main\nimport "testing"\nfunc TestA(t *testing.T) { x := 1 }\n', "x declared"),
    ],
)
def test_what_go_test_refuses_is_refused_quickly(built: Path, source: str, said: str) -> None:
    with Sandbox(SandboxSettings(backend="bwrap", limits=FAST, runtime_dir=built)) as sandbox:
        assert gobuild.steps(GO_TEST, [], built, {}) == gobuild.TEST_STEPS
        report = sandbox.run(Program(language="go_test", source=source), [Case()])
    assert report.compile is not None and report.compile.status is CompileStatus.ERROR
    assert said in report.compile.output, report.compile.output
    assert report.cases == []


def test_a_test_main_runs_the_tests(built: Path) -> None:
    """A TestMain(m) runs them (and may return without exiting: m.Run's status is the
    exit status, as go test's main does since Go 1.15)."""
    source = (
        'package main\nimport ("fmt"; "testing")\n'
        'func TestMain(m *testing.M) { fmt.Println("before"); m.Run() }\n'
        'func TestA(t *testing.T) { t.Fatal("a") }\n'
    )
    with Sandbox(SandboxSettings(backend="bwrap", limits=FAST, runtime_dir=built)) as sandbox:
        report = sandbox.run(Program(language="go_test", source=source), [Case()])
    [case] = report.cases
    assert case.stdout.startswith("before\n") and "--- FAIL: TestA" in case.stdout, case
    assert case.exit_code == 1
