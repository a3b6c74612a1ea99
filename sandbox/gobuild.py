"""Go's quick build: compile and link against the runtime's standard library.

``go build`` spends much of a small program's build reading the standard library's
sources to find nothing changed (0.19 s a build in the sandbox against 0.11 s for
compiling and linking, ``python -m bench.builds``). The runtime
(``scripts/build-runtime.sh``) holds the standard library compiled with the sandbox's Go
settings (`languages.GO_ENV`) and an import configuration naming each package's archive;
where it was made by the Go installed now, a ``go`` build is ``go tool compile`` then
``go tool link`` on those archives. A ``go_test`` build is what ``go test -c`` does,
done the same way: the runtime's ``referee-gotestmain`` (``scripts/runtime/
gotestmain.go``) parses the sources as ``go test`` does and writes the main package
that runs the package's tests, which is compiled against the package and linked (go
test's ``vet`` pass is not run: its warnings are no test's failure). Otherwise (no
runtime, a Go installed since it was built, a request's build flags, which only the go
command reads: ``-race``, ``-tags``) it is ``go build`` or ``go test -c``, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from referee.sandbox.languages import RUNTIME_MOUNT, Language

IMPORTCFG = f"{RUNTIME_MOUNT}/go/importcfg"
ARCHIVE = "main.a"
"""The compiled package the link step reads; dropped from the build with the sources
(`leftovers`)."""
STEPS: tuple[tuple[str, ...], ...] = (
    # -complete: no assembly comes with the package (as `go build` says when it has none),
    # so a function without a body is the compiler's error, not a failed link
    ("go", "tool", "compile", "-p", "main", "-complete", "-importcfg", IMPORTCFG, "-pack",
     "-o", ARCHIVE, "{sources}"),
    ("go", "tool", "link", "-importcfg", IMPORTCFG, "-o", "main", ARCHIVE),
)  # fmt: skip

TESTMAIN = f"{RUNTIME_MOUNT}/go/bin/referee-gotestmain"
UNDER_TEST = "referee/under_test"
"""The import path the package under test is compiled as (``go test`` uses the
package's; its generated main imports it, as this one does)."""
TEST_FILES = ("under_test.a", "referee_testmain.go", "importcfg.test")
"""The package under test's archive, the generated main, and the import configuration
naming the archive (the runtime's one is read-only)."""
TEST_STEPS: tuple[tuple[str, ...], ...] = (
    (TESTMAIN, "-importcfg", IMPORTCFG, "-package", UNDER_TEST, "-o", TEST_FILES[1],
     "-cfg", TEST_FILES[2], "{sources}"),
    ("go", "tool", "compile", "-p", UNDER_TEST, "-complete", "-importcfg", IMPORTCFG, "-pack",
     "-o", TEST_FILES[0], "{sources}"),
    ("go", "tool", "compile", "-p", "main", "-complete", "-importcfg", TEST_FILES[2], "-pack",
     "-o", ARCHIVE, TEST_FILES[1]),
    ("go", "tool", "link", "-importcfg", TEST_FILES[2], "-o", "main.test", ARCHIVE),
)  # fmt: skip
_QUICK = {"go": STEPS, "go_test": TEST_STEPS}


def steps(
    lang: Language, flags: list[str], runtime: Path | None, files: Mapping[str, str]
) -> tuple[tuple[str, ...], ...]:
    """The build of ``lang`` from ``files`` (argv templates, run in order): the quick one
    for Go where the runtime holds the installed Go's standard library and no build flags
    are asked for, else the language's own compile (none for an interpreted language).
    Tests in an external test package (``package x_test`` beside ``package x``, which go
    test builds as two packages) are built by ``go test -c``."""
    # the sources are read only for a go_test build: every other build asks too
    one_package = lang.name != "go_test" or len(_packages(files)) <= 1
    if not flags and one_package and unready(lang, runtime) is None:
        return _QUICK[lang.name]
    return (lang.compile,) if lang.compile is not None else ()


_PACKAGE = re.compile(r"\A(?:\s+|//[^\n]*|/\*.*?\*/)*package\s+([A-Za-z_]\w*)", re.DOTALL)


def _packages(files: Mapping[str, str]) -> set[str]:
    """The packages the Go sources among ``files`` say they belong to (a file without a
    package clause is the build's error to report)."""
    found = (_PACKAGE.match(text) for name, text in files.items() if name.endswith(".go"))
    return {clause[1] for clause in found if clause is not None}


def leftovers(steps: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """What ``steps`` leave beside the program that it must not keep (the compiled
    package, holding the test's values on the test's side)."""
    if steps == TEST_STEPS:
        return (ARCHIVE, *TEST_FILES)
    return (ARCHIVE,) if steps == STEPS else ()


def unready(lang: Language, runtime: Path | None) -> str | None:
    """Why ``lang``'s builds here are not quick ones (None: they are), for ``steps`` and
    ``referee doctor``: archives of another Go would fail every build."""
    if lang.name not in _QUICK:
        return "not Go"
    if runtime is None:
        return "no runtime (REFEREE_SANDBOX_RUNTIME_DIR)"
    try:
        built = (runtime / "go" / "VERSION").read_text().strip()
        installed = _installed(lang)
        listed = (runtime / "go" / "importcfg").is_file()
    except OSError:
        return "the runtime holds no Go library (scripts/build-runtime.sh builds it)"
    if built != installed or not listed:
        return (
            f"the runtime's Go library is {built}'s and {installed} is installed: "
            "scripts/build-runtime.sh builds it again"
        )
    if lang.name == "go_test" and not _under(runtime, TESTMAIN).is_file():
        return "the runtime holds no referee-gotestmain (scripts/build-runtime.sh builds it)"
    return None


def _under(runtime: Path, mounted: str) -> Path:
    """Where ``mounted`` (a path under the sandbox's runtime mount) is on the host."""
    return runtime / mounted.removeprefix(f"{RUNTIME_MOUNT}/")


def _installed(lang: Language) -> str | None:
    """The installed Go's version: its GOROOT's ``VERSION`` file (first line), GOROOT
    being where the ``go`` the sandbox runs lives (``<GOROOT>/bin/go``)."""
    version = Path(lang.tools[0]).resolve().parent.parent / "VERSION"
    return version.read_text().split("\n", 1)[0].strip() or None
