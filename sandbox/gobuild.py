"""Go's quick build: compile and link against the runtime's standard library.

``go build`` spends much of a small program's build reading the standard library's
sources to find nothing changed (0.19 s a build in the sandbox against 0.11 s for
compiling and linking, ``python -m bench.builds``). The runtime
(``scripts/build-runtime.sh``) holds the standard library compiled with the sandbox's Go
settings (`languages.GO_ENV`) and an import configuration naming each package's archive;
where it was made by the Go installed now, a ``go`` build is ``go tool compile`` then
``go tool link`` on those archives. Otherwise (no runtime, a Go installed since it was
built, a request's build flags, which only the go command reads: ``-race``, ``-tags``)
it is ``go build``, as before.
"""

from __future__ import annotations

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


def steps(lang: Language, flags: list[str], runtime: Path | None) -> tuple[tuple[str, ...], ...]:
    """The build of ``lang`` (argv templates, run in order): the quick one for Go where
    the runtime holds the installed Go's standard library and no build flags are asked
    for, else the language's own compile (none for an interpreted language)."""
    if lang.name == "go" and not flags and _ready(lang, runtime):
        return STEPS
    return (lang.compile,) if lang.compile is not None else ()


def leftovers(steps: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """What ``steps`` leave beside the program that it must not keep (the compiled
    package, holding the test's values on the test's side)."""
    return (ARCHIVE,) if steps == STEPS else ()


def _ready(lang: Language, runtime: Path | None) -> bool:
    """Whether ``runtime`` holds the standard library of the Go installed now (archives
    of another version would fail every build)."""
    if runtime is None:
        return False
    try:
        built = (runtime / "go" / "VERSION").read_text().strip()
        return built == _installed(lang) and (runtime / "go" / "importcfg").is_file()
    except OSError:
        return False


def _installed(lang: Language) -> str | None:
    """The installed Go's version: its GOROOT's ``VERSION`` file (first line), GOROOT
    being where the ``go`` the sandbox runs lives (``<GOROOT>/bin/go``)."""
    version = Path(lang.tools[0]).resolve().parent.parent / "VERSION"
    return version.read_text().split("\n", 1)[0].strip() or None
