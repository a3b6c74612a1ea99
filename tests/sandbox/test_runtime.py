"""The runtime directory (`SandboxSettings.runtime_dir`): what a program may import beyond
the host's system packages, mounted read-only at /opt/runtime on every path (per-case
bwrap, the Python fast path, linked runs, compiled Java)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.sandbox import (
    Case,
    CaseStatus,
    Program,
    Sandbox,
    SandboxSettings,
    SandboxStatus,
    languages,
)
from referee.sandbox.sessions import Launcher, SessionKind, SessionSpec
from tests.conftest import REPO

from .conftest import FAST
from .sessions.conftest import SMALL

BUILT = Path(os.environ.get("REFEREE_TEST_RUNTIME_DIR", "/opt/referee/runtime"))
"""The real runtime, built by scripts/test.sh (scripts/build-runtime.sh, default place)."""


def _probe_jar(into: Path, work: Path) -> None:
    source = work / "probe" / "Probe.java"
    source.parent.mkdir(parents=True)
    source.write_text(
        'package probe; public class Probe { public static String hi() { return "jar"; } }'
    )
    subprocess.run(["javac", "-d", str(work / "classes"), str(source)], check=True)
    subprocess.run(
        ["jar", "cf", str(into / "probe.jar"), "-C", str(work / "classes"), "."], check=True
    )


@pytest.fixture(scope="module")
def runtime() -> Iterator[Path]:
    """A small runtime: one Python module, one node module, one jar, a manifest. Made
    under /tmp itself: pytest's own temp dirs are private to us, and the sandboxes run as
    other users."""
    root = Path(tempfile.mkdtemp(prefix="referee-runtime-"))
    try:
        (root / "python").mkdir()
        (root / "python" / "runtime_probe.py").write_text("VALUE = 'python'\n")
        module = root / "node" / "node_modules" / "runtime-probe"
        module.mkdir(parents=True)
        (module / "index.js").write_text("module.exports = 'node';\n")
        (root / "java").mkdir()
        _probe_jar(root / "java", root / "build")
        shutil.rmtree(root / "build")
        (root / "manifest.json").write_text(json.dumps({"lists": "test"}))
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield root
    finally:
        shutil.rmtree(root)


@pytest.fixture(scope="module", params=[False, True], ids=["bwrap", "fast-path"])
def sandbox(runtime: Path, request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    settings = SandboxSettings(
        backend="bwrap", python_fast_path=request.param, limits=FAST, runtime_dir=runtime
    )
    with Sandbox(settings) as sb:
        yield sb


PROGRAMS = [
    ("python3", "import runtime_probe\nprint(runtime_probe.VALUE)", "python"),
    ("javascript", "console.log(require('runtime-probe'))", "node"),
    (
        "java",
        "public class Main { public static void main(String[] a) {"
        " System.out.println(probe.Probe.hi()); } }",
        "jar",
    ),
]


@pytest.mark.parametrize(("language", "source", "printed"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_programs_import_from_the_runtime(
    sandbox: Sandbox, language: str, source: str, printed: str
) -> None:
    limits = FAST.model_copy(update={"wall_s": 20, "cpu_s": 20, "memory_mb": 512})
    report = sandbox.run(Program(language=language, source=source), [Case()], limits)
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert (case.status, case.stdout) == (CaseStatus.OK, f"{printed}\n"), (case, report.compile)


def test_the_runtime_is_read_only(sandbox: Sandbox) -> None:
    source = "open('/opt/runtime/python/runtime_probe.py', 'w').write('VALUE = 1')"
    [case] = sandbox.run(Program(language="python3", source=source), [Case()]).cases
    assert case.status is CaseStatus.RUNTIME_ERROR
    assert "Read-only file system" in case.stderr or "Permission denied" in case.stderr


def test_linked_runs_see_the_runtime(sandbox: Sandbox) -> None:
    program = Program(language="python3", source="import runtime_probe\nprint(runtime_probe.VALUE)")
    peer = Program(language="python3", source="print('peer')")
    report = sandbox.run_linked(program, peer, [Case()])
    assert report.sandbox_status is SandboxStatus.OK, report.message
    assert report.cases[0].stdout == "python\n", report.cases[0]


def test_python_sessions_see_the_runtime(runtime: Path) -> None:
    settings = SandboxSettings(backend="bwrap", runtime_dir=runtime)
    launcher = Launcher(settings, max_file_bytes=1 << 20)
    try:
        session = launcher.start(SessionSpec(kind=SessionKind.PYTHON, limits=SMALL))
        outcome = session.execute("import runtime_probe\nprint(runtime_probe.VALUE)")
        session.close()
    finally:
        launcher.close()
    assert (outcome.exit_code, outcome.stdout) == (0, "python\n"), outcome


def test_a_missing_runtime_is_a_clear_unavailable(tmp_path: Path) -> None:
    settings = SandboxSettings(backend="bwrap", limits=FAST, runtime_dir=tmp_path / "nothing")
    with Sandbox(settings) as sb:
        report = sb.run(Program(language="python3", source="print(1)"), [Case()])
    assert report.sandbox_status is SandboxStatus.UNAVAILABLE
    assert "build-runtime.sh" in report.message


@pytest.fixture(scope="module")
def built() -> Path:
    if not (BUILT / "manifest.json").is_file():
        pytest.fail(f"no runtime at {BUILT}: scripts/test.sh builds it (scripts/build-runtime.sh)")
    return BUILT


BUILT_PROGRAMS = [
    (
        "python3",
        "import numpy, pandas, scipy.optimize, sympy, requests\n"
        "print(int(numpy.arange(4).sum()), pandas.Series([1, 2]).sum(), sympy.factor('x**2-1'))",
        "6 3 (x - 1)*(x + 1)",
    ),
    ("javascript", "const _ = require('lodash'); console.log(_.chunk([1, 2, 3], 2).length)", "2"),
    (
        "java",
        "import org.javatuples.Pair; public class Main { public static void main(String[] a) {"
        " System.out.println(Pair.with(1, 2).getValue1()); } }",
        "2",
    ),
]


@pytest.mark.parametrize(
    ("language", "source", "printed"), BUILT_PROGRAMS, ids=[p[0] for p in BUILT_PROGRAMS]
)
def test_the_built_runtime_has_the_usual_packages(
    built: Path, language: str, source: str, printed: str
) -> None:
    limits = FAST.model_copy(update={"wall_s": 30, "cpu_s": 30, "memory_mb": 1024})
    settings = SandboxSettings(backend="bwrap", python_fast_path=False, runtime_dir=built)
    with Sandbox(settings) as sb:
        report = sb.run(Program(language=language, source=source), [Case()], limits)
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert (case.status, case.stdout) == (CaseStatus.OK, f"{printed}\n"), (case, report.compile)


def test_requests_has_no_network(built: Path) -> None:
    source = "import requests\nrequests.get('http://1.1.1.1', timeout=2)"
    settings = SandboxSettings(backend="bwrap", python_fast_path=False, runtime_dir=built)
    limits = FAST.model_copy(update={"wall_s": 10, "cpu_s": 10, "memory_mb": 512})
    with Sandbox(settings) as sb:
        [case] = sb.run(Program(language="python3", source=source), [Case()], limits).cases
    assert case.status is CaseStatus.RUNTIME_ERROR
    assert "ConnectionError" in case.stderr or "unreachable" in case.stderr


def test_the_build_script_skips_an_up_to_date_runtime(built: Path, tmp_path: Path) -> None:
    copy = tmp_path / "runtime"
    shutil.copytree(built / "node", copy / "node")
    shutil.copy(built / "manifest.json", copy / "manifest.json")
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-runtime.sh"), str(copy)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "up to date" in done.stdout


LISTS = REPO / "scripts" / "runtime"


def _pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a pip requirements file, by canonical name."""
    lines = [line.strip() for line in path.read_text().splitlines()]
    pairs = [line.split("==") for line in lines if line and not line.startswith("#")]
    return {name.lower().replace("_", "-"): version for name, version in pairs}


def _top_level(lock: dict[str, Any]) -> dict[str, str]:
    """The packages directly under node_modules/ in an npm lock, with their versions,
    but for those npm skips on Linux (fsevents: ``"os": ["darwin"]``)."""
    return {
        key.removeprefix("node_modules/"): entry["version"]
        for key, entry in lock["packages"].items()
        if key.startswith("node_modules/")
        and "/node_modules/" not in key
        and "linux" in entry.get("os", ["linux"])
    }


def test_the_python_lock_holds_every_pin() -> None:
    pins, lock = _pins(LISTS / "python.txt"), _pins(LISTS / "python.lock.txt")
    assert {name: lock.get(name) for name in pins} == pins


def test_the_node_lock_is_the_lock_of_the_pins() -> None:
    declared = json.loads((LISTS / "node" / "package.json").read_text())["dependencies"]
    lock = json.loads((LISTS / "node" / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == declared
    top = _top_level(lock)
    assert {name: top.get(name) for name in declared} == declared
    # npm ci checks every tarball against its hash: no entry may go without one.
    assert all("integrity" in entry for key, entry in lock["packages"].items() if key)


def test_the_built_runtime_is_exactly_the_locks(built: Path) -> None:
    manifest = json.loads((built / "manifest.json").read_text())
    installed = dict(entry.split("==") for entry in manifest["python"])
    assert {n.lower().replace("_", "-"): v for n, v in installed.items()} == _pins(
        LISTS / "python.lock.txt"
    )
    lock = json.loads((LISTS / "node" / "package-lock.json").read_text())
    node = dict(entry.rsplit("@", 1) for entry in manifest["node"])
    assert node == _top_level(lock)


STDC = "#include <bits/stdc++.h>\nint main() { std::vector<int> v{3, 1, 2};"
STDC += " std::sort(v.begin(), v.end()); std::cout << v[0] << v[2] << '\\n'; }\n"


def test_gcc_takes_the_runtimes_precompiled_header_with_the_cpp_builds_flags(
    built: Path, tmp_path: Path
) -> None:
    """The header was precompiled with exactly the flags of the sandbox's C++ build (g++
    says ``!`` before a precompiled header it used): a build that changed them alone
    would parse the header again, and be four times slower, with no error anywhere."""
    cpp = languages.find("cpp")
    assert cpp is not None and cpp.compile is not None
    source = tmp_path / "main.cpp"
    source.write_text(STDC)
    argv = [a for a in cpp.compile if a not in ("-o", "main", "{sources}")]
    argv = [str(built / "cpp" / "include") if a == languages.CPP_INCLUDE else a for a in argv]
    done = subprocess.run(
        [*argv, "-H", "-fsyntax-only", str(source)], capture_output=True, text=True, check=True
    )
    assert done.stderr.splitlines()[0].startswith("! "), done.stderr[:300]
    assert done.stderr.splitlines()[0].endswith("stdc++.h.gch/O2-c++17"), done.stderr[:300]


@pytest.mark.parametrize(
    ("prefix", "used"), [("", True), ("#define _GLIBCXX_DEBUG 1\n", False)], ids=["plain", "debug"]
)
def test_a_sandboxed_cpp_build_sees_the_precompiled_header_and_g_plus_plus_checks_it(
    built: Path, prefix: str, used: bool
) -> None:
    """In the sandbox the build finds the header at ``/opt/runtime``; a program whose
    macros change what the header means (the checked standard library) is built from the
    header itself, as it must be (g++ says why it skipped the precompiled one)."""
    limits = FAST.model_copy(update={"wall_s": 30, "cpu_s": 30, "memory_mb": 1024})
    settings = SandboxSettings(backend="bwrap", python_fast_path=False, runtime_dir=built)
    program = Program(language="cpp", source=prefix + STDC, build_flags=["-Winvalid-pch"])
    with Sandbox(settings) as sb:
        report = sb.run(program, [Case()], limits)
    assert report.compile is not None, report.message
    [case] = report.cases
    assert (case.status, case.stdout) == (CaseStatus.OK, "13\n"), (case, report.compile)
    skipped = "/opt/runtime/cpp/include/bits/stdc++.h.gch/O2-c++17: not used because"
    assert (skipped in report.compile.output) is not used, report.compile.output


JVM_BUILDS = [
    ("java", "javac", "Main.java", "public class Main { public static void main(String[] a) {} }"),
    ("junit", "javac", "Main.java", "public class Main {}"),
    ("kotlin", "kotlinc", "main.kt", "fun main() { println(1) }"),
    ("scala", "scalac", "Main.scala", "object Main { def main(a: Array[String]): Unit = () }"),
]


@pytest.mark.parametrize(
    ("name", "compiler", "file", "source"), JVM_BUILDS, ids=[b[0] for b in JVM_BUILDS]
)
def test_jvm_compilers_map_the_runtimes_archives_with_their_builds_flags(
    built: Path, tmp_path: Path, name: str, compiler: str, file: str, source: str
) -> None:
    """Each archive of a JVM compiler's classes was made with the flags of the sandbox's
    build of its language: with ``-Xshare:on`` a JVM that cannot map it fails instead of
    starting without it (which it does silently, two or three times slower)."""
    lang = languages.find(name)
    assert lang is not None and lang.compile is not None
    if shutil.which(lang.compile[0]) is None:
        pytest.skip(f"{lang.compile[0]} is not installed")
    (tmp_path / file).write_text(source)
    mapped = f"-J-XX:SharedArchiveFile={built / 'jdk' / compiler}.jsa"
    argv = [mapped if a == languages.jvm_archive(compiler) else a for a in lang.compile]
    assert mapped in argv
    argv = [file if a == "{sources}" else a for a in argv]
    done = subprocess.run(
        [argv[0], "-J-Xshare:on", *argv[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
