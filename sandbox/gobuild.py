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
    if not flags and unready(lang, runtime) is None:
        return STEPS
    return (lang.compile,) if lang.compile is not None else ()


def leftovers(steps: tuple[tuple[str, ...], ...]) -> tuple[str, ...]:
    """What ``steps`` leave beside the program that it must not keep (the compiled
    package, holding the test's values on the test's side)."""
    return (ARCHIVE,) if steps == STEPS else ()


def unready(lang: Language, runtime: Path | None) -> str | None:
    """Why ``lang``'s builds here are not quick ones (None: they are), for ``steps`` and
    ``referee doctor``: archives of another Go would fail every build."""
    if lang.name != "go":
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
    return None


def _installed(lang: Language) -> str | None:
    """The installed Go's version: its GOROOT's ``VERSION`` file (first line), GOROOT
    being where the ``go`` the sandbox runs lives (``<GOROOT>/bin/go``)."""
    version = Path(lang.tools[0]).resolve().parent.parent / "VERSION"
    return version.read_text().split("\n", 1)[0].strip() or None
