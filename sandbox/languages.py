"""The one table of languages: file names, compile and run argv, and how memory is limited.

Argv templates are lists (never shell strings) with these placeholders, filled by `argv`:
``{main}`` the main file, ``{main_class}`` its name without the suffix (Java's class to
run), ``{sources}`` (one element expanded into every program file with
the language's source suffix), ``{memory_mb}`` the case memory limit, ``{box}`` the
directory holding sources and build outputs inside the sandbox (read-only while cases
run; a case's working directory is a private tmpfs, ``/work``).

SQL: the case's stdin runs first (schema and data), then the program's SQL, in one
in-memory sqlite3 database; output is the sqlite3 shell's default list mode.

Memory strategy (``memory_rlimit``), because runtimes differ in how much *address space*
they reserve compared to what they use:

- ``as``: RLIMIT_AS = limit. Exact for C, C++, Python, bash, sqlite3, vvp.
- ``data``: RLIMIT_DATA = limit. The Go runtime and rustc reserve large PROT_NONE regions
  that RLIMIT_AS would refuse; RLIMIT_DATA counts only writable private memory.
- ``none``: no rlimit. The JVM reserves address space for heap, metaspace and code cache up
  front, and V8 (node) hangs rather than fails when RLIMIT_DATA bites (measured: node 20
  never printed under a 256 MiB RLIMIT_DATA). Both are capped by their own heap flag
  (``-Xmx``, ``--max-old-space-size``) plus the cgroup memory limit, which gets
  ``overhead_mb`` on top for the runtime's non-heap memory.

In every case the cgroup memory limit (where the host allows one) is the real bound and
the source of the ``memory_limit`` status; rlimits are the backstop.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

MemoryRlimit = Literal["as", "data", "none"]

RUST_MOUNT = "/opt/rust"
RUNTIME_MOUNT = "/opt/runtime"
"""Where the runtime directory (`SandboxSettings.runtime_dir`) appears in a sandbox. The
languages' environments and class paths name its parts whether or not one is mounted (a
missing path on them is harmless)."""
PYTHON_ENV = {"PYTHONPATH": f"{RUNTIME_MOUNT}/python"}
NODE_ENV = {"NODE_PATH": f"{RUNTIME_MOUNT}/node/node_modules"}
JAVA_CLASS_PATH = f"{RUNTIME_MOUNT}/java/*"


SCALA_LIB = "/usr/share/scala/lib"
"""Debian's Scala jars (the library, reflect, xml...), which the `scala` runner puts on
the class path of the programs it runs."""


def jvm_archive(compiler: str) -> str:
    """The JVM option that maps the runtime's archive of the classes ``compiler`` (javac,
    kotlinc, scalac) loads (``scripts/build-runtime.sh``). A build of a small program in
    the sandbox here takes 0.54 s with it and 0.78 s without (javac), 2.05 s and 2.71 s
    (kotlinc), 2.13 s and 3.34 s (scalac) (``python -m bench.builds``). A JVM without it
    (no runtime) or that cannot use it (another JDK or compiler) starts as before, saying
    nothing."""
    return f"-J-XX:SharedArchiveFile={RUNTIME_MOUNT}/jdk/{compiler}.jsa"


CPP_INCLUDE = f"{RUNTIME_MOUNT}/cpp/include"
"""On the C++ build's include path: ``<bits/stdc++.h>`` precompiled for that build's flags
(``scripts/build-runtime.sh``), which g++ takes in place of parsing the header (a build
that includes it: 0.52 s with it, 2.16 s without, ``python -m bench.builds``) when the
program includes it first and its flags agree, and ignores otherwise; it holds no
header, so it changes no include."""
GO_ENV = {
    "GOCACHE": "/work/.gocache",
    "GOPATH": "/work/go",
    "CGO_ENABLED": "0",
    "GOFLAGS": "-mod=mod",
    "GO111MODULE": "off",
}


@dataclass(frozen=True)
class Language:
    """One row of the table. ``tools`` are the host executables the language needs; the
    language is available when every tool resolves (see `toolchains.missing_tools`)."""

    name: str
    main: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    suffix: str = ""
    tools: tuple[str, ...] = ()
    memory_rlimit: MemoryRlimit = "as"
    env: dict[str, str] = field(default_factory=dict)
    overhead_mb: int = 0
    """Added to the cgroup memory limit for runtimes capped by a flag (the JVM's -Xmx,
    node's --max-old-space-size) that need memory beyond the capped heap."""
    aliases: tuple[str, ...] = ()
    package: str = ""
    """The Debian package(s) that provide ``tools`` (named when they are missing)."""
    runtime_tools: tuple[str, ...] = ()
    """Paths the language needs inside the runtime directory (`SandboxSettings.runtime_dir`,
    seen at `RUNTIME_MOUNT`): packages ``scripts/build-runtime.sh`` installs."""
    runs_tests: bool = False
    """A test-runner mode: the program is (or holds) tests, the output is the runner's
    report, and passing means the runner exited 0."""
    main_pattern: str | None = None
    """A regex whose first group, found in the source, names the main file (Java's public
    class must live in ``<Class>.java``); unset or not found: `main`."""
    fence_of: str = ""
    """The language a test-runner mode's programs are written in: its fence tags mark
    this one's programs too (```go for go_test). Not an alias, which names the language."""
    start_s: float = 0.0
    """CPU seconds a run spends starting the toolchain before the program's first line
    (here, idle, 2 cores; the sandbox's CPU limit is the time limit): a limit below about
    twice this times out every program under load."""
    build_flags: tuple[str, ...] = ()
    """Patterns (full matches) of the build flags a request may add to the compile argv:
    an allow-list, because compilers take flags that run programs (``-wrapper``,
    ``-fplugin=``, ``-Wl,...``, ``-toolexec``, ``-C linker=``, ``-J``)."""

    def main_for(self, source: str) -> str:
        """The main file's name for ``source`` (see `main_pattern`)."""
        found = re.search(self.main_pattern, source) if self.main_pattern else None
        return f"{found.group(1)}{self.suffix}" if found else self.main

    def refused_flag(self, flags: list[str]) -> str | None:
        """The first flag in ``flags`` outside the allow-list, or None."""
        patterns = [re.compile(p) for p in self.build_flags]
        for flag in flags:
            if not any(p.fullmatch(flag) for p in patterns):
                return flag
        return None

    def argv(self, template: tuple[str, ...], files: list[str], memory_mb: int) -> list[str]:
        """Fill a template. ``files`` are the program's file names, main first (`main_for`:
        ``{main}`` is that one)."""
        out: list[str] = []
        for part in template:
            if part == "{sources}":
                out.extend(f for f in files if f.endswith(self.suffix))
            else:
                # replace, not str.format: a template may hold a script with braces
                out.append(
                    part.replace("{main}", files[0])
                    .replace("{main_class}", files[0].removesuffix(self.suffix))
                    .replace("{memory_mb}", str(memory_mb))
                )
        return out


_C_FAMILY_FLAGS = (
    r"-O[0-3sgz]?",
    r"-g[0-3]?",
    r"-W(?:all|extra|pedantic|error|no-[a-z][a-z0-9-]*|[a-z][a-z0-9-]*)",
    r"-pedantic(?:-errors)?",
    r"-w",
    r"-D[A-Za-z_][A-Za-z0-9_]*(?:=[A-Za-z0-9_.+-]*)?",
    r"-U[A-Za-z_][A-Za-z0-9_]*",
    r"-l(?:m|pthread|rt|stdc\+\+)",
    r"-pthread",
    r"-ftrivial-auto-var-init=(?:zero|pattern|uninitialized)",
    r"-march=native|-mtune=native|-m(?:avx2|sse4\.2|popcnt|bmi2?)",
    r"-f(?:no-)?(?:exceptions|rtti|strict-aliasing|omit-frame-pointer|wrapv|trapv|"
    r"unroll-loops|inline-functions|fast-math)",
    r"-fsanitize=(?:address|undefined|leak)",
)
_C_STANDARDS = r"-std=(?:c|gnu)(?:89|90|99|11|17|18|2x|23)"
_CPP_STANDARDS = r"-std=(?:c|gnu)\+\+(?:98|03|11|14|17|20|2a|23|2b)"


TS_TRANSPILE = """
const ts = require("/usr/share/nodejs/typescript");
const fs = require("fs");
let failed = false;
for (const file of process.argv.slice(1)) {
  const out = ts.transpileModule(fs.readFileSync(file, "utf8"), {
    fileName: file, reportDiagnostics: true,
    compilerOptions: {target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS},
  });
  for (const d of out.diagnostics) {
    const at = d.start === undefined ? 0 : d.file.getLineAndCharacterOfPosition(d.start).line;
    const text = ts.flattenDiagnosticMessageText(d.messageText, "\\n");
    console.error(`${file}(${at + 1}): error TS${d.code}: ${text}`);
    failed = true;
  }
  fs.writeFileSync(file.replace(/\\.ts$/, ".js"), out.outputText);
}
process.exit(failed ? 1 : 0);
"""
"""TypeScript is transpiled, not type-checked (as ts-node --transpile-only and tsx run it):
syntax errors fail the compile, type errors do not, and programs use Node's ``require``
without type definitions installed."""

SCRIPTED = (
    Language(
        "php",
        "main.php",
        ("/usr/bin/php", "-n", "-d", "memory_limit=-1", "{box}/{main}"),
        suffix=".php",
        tools=("/usr/bin/php",),
        package="php-cli",
    ),
    Language(
        "ruby",
        "main.rb",
        ("/usr/bin/ruby", "--disable-gems", "{box}/{main}"),
        suffix=".rb",
        tools=("/usr/bin/ruby",),
        package="ruby",
        memory_rlimit="data",
        aliases=("rb",),
    ),
    Language(
        "perl",
        "main.pl",
        ("/usr/bin/perl", "{box}/{main}"),
        suffix=".pl",
        tools=("/usr/bin/perl",),
        package="perl",
        aliases=("pl",),
    ),
    Language(
        "lua",
        "main.lua",
        ("/usr/bin/lua5.4", "{box}/{main}"),
        suffix=".lua",
        tools=("/usr/bin/lua5.4",),
        package="lua5.4",
    ),
    Language(
        "r",
        "main.R",
        ("/usr/bin/Rscript", "--vanilla", "{box}/{main}"),
        suffix=".R",
        tools=("/usr/bin/Rscript",),
        package="r-base-core",
        memory_rlimit="data",
        aliases=("rscript",),
    ),
    Language(
        "racket",
        "main.rkt",
        ("/usr/bin/racket", "{box}/{main}"),
        suffix=".rkt",
        tools=("/usr/bin/racket",),
        package="racket",
        memory_rlimit="none",  # Chez Scheme reserves more than RLIMIT_DATA allows
        overhead_mb=64,
        aliases=("rkt",),
    ),
)
TEST_RUNNERS = (
    Language(
        "pytest",
        "test_main.py",
        (
            "/usr/bin/python3",
            "-s",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            "/work",
            "{box}/{main}",
        ),
        suffix=".py",
        fence_of="python3",
        runs_tests=True,
        tools=("/usr/bin/python3", "/usr/lib/python3/dist-packages/pytest/__init__.py"),
        package="python3-pytest",
        env=PYTHON_ENV,
    ),
    Language(
        "go_test",
        "main_test.go",
        ("{box}/main.test", "-test.v"),
        # no vet pass: its warnings are no test's failure, and the quick build
        # (`gobuild`) runs none either
        compile=("go", "test", "-c", "-vet=off", "-o", "main.test", "{sources}"),
        suffix=".go",
        fence_of="go",
        runs_tests=True,
        tools=("/usr/bin/go",),
        package="golang-go",
        memory_rlimit="data",
        env=GO_ENV,
    ),
    Language(
        "d_unittest",
        "main.d",
        ("{box}/main",),
        compile=("/usr/bin/gdc", "-funittest", "-fmain", "-o", "main", "{sources}"),
        suffix=".d",
        fence_of="d",
        runs_tests=True,
        tools=("/usr/bin/gdc",),
        package="gdc",
        memory_rlimit="data",
        aliases=("d_ut",),
    ),
    Language(
        "kotlin_script",
        "main.kts",
        ("/usr/bin/kotlinc", "-J-Xmx{memory_mb}m", "-script", "{box}/{main}"),
        suffix=".kts",
        fence_of="kotlin",
        tools=("/usr/bin/kotlinc", "/usr/bin/java"),
        package="kotlin",
        memory_rlimit="none",
        overhead_mb=384,
        start_s=6.0,  # kotlinc compiles the script on every run, on several threads
    ),
)
"""SandboxFusion's test-runner modes: the program is (or contains) the tests."""

JUNIT_JARS = "/usr/share/java"
JUNIT_COMPILE_PATH = ":".join(
    f"{JUNIT_JARS}/{jar}.jar"
    for jar in ("junit4", "hamcrest-core", "junit-jupiter-api", "apiguardian-api", "opentest4j")
)
JUNIT = (
    Language(
        "junit",
        "Main.java",
        (
            "java",
            "-Xmx{memory_mb}m",
            "-XX:+UseSerialGC",
            "-jar",
            f"{JUNIT_JARS}/junit-platform-console-standalone.jar",
            "--class-path",
            f"{{box}}:{JUNIT_JARS}/junit4.jar:{JUNIT_JARS}/hamcrest-core.jar:{JAVA_CLASS_PATH}",
            "--scan-class-path",
            "{box}",
            "--disable-banner",
            "--disable-ansi-colors",
            "--details=tree",
            "--fail-if-no-tests",
        ),
        compile=(
            "javac",
            "-J-Xmx512m",
            "-J-XX:+UseSerialGC",
            "-J-XX:TieredStopAtLevel=1",
            jvm_archive("javac"),
            "-cp",
            f".:{JUNIT_COMPILE_PATH}:{JAVA_CLASS_PATH}",
            "-d",
            ".",
            "{sources}",
        ),
        suffix=".java",
        fence_of="java",
        runs_tests=True,
        main_pattern=r"public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_]\w*)",
        tools=(
            "/usr/bin/java",
            "/usr/bin/javac",
            f"{JUNIT_JARS}/junit-platform-console-standalone.jar",
            f"{JUNIT_JARS}/junit4.jar",
        ),
        package="junit5 junit4",
        memory_rlimit="none",
        overhead_mb=256,
    ),
    Language(
        "gtest",
        "main.cpp",
        ("{box}/main",),
        compile=(
            "g++",
            "-O2",
            "-std=c++17",
            "-o",
            "main",
            "{sources}",
            "-lgtest",
            "-lgtest_main",
            "-pthread",
        ),
        suffix=".cpp",
        fence_of="cpp",
        runs_tests=True,
        tools=("/usr/bin/g++", "/usr/include/gtest/gtest.h"),
        package="libgtest-dev",
        build_flags=(*_C_FAMILY_FLAGS, _CPP_STANDARDS),
    ),
)
"""JUnit 5's console launcher (Jupiter and JUnit 4 tests, run by scanning the compiled
classes; the main file is named after the source's public class) and GoogleTest (its
``main`` linked in unless the program has one)."""
JEST_CONFIG = json.dumps(
    {"rootDir": "{box}", "testMatch": ["**/*.test.js"], "cache": False, "watchman": False}
)
_NODE_MODULES = f"{RUNTIME_MOUNT}/node/node_modules"


def _jest_run(config: str) -> tuple[str, ...]:
    """Jest from the runtime, in one process, with ``config`` (JSON) as its whole config."""
    return (
        "node",
        "--max-old-space-size={memory_mb}",
        f"{_NODE_MODULES}/jest/bin/jest.js",
        "--config",
        config,
        "--ci",
        "--colors=false",
        "--runInBand",
    )


JEST = Language(
    "jest",
    "main.test.js",
    _jest_run(JEST_CONFIG),
    suffix=".js",
    fence_of="javascript",
    runs_tests=True,
    tools=("/usr/bin/node",),
    runtime_tools=("node/node_modules/jest/bin/jest.js",),
    package="nodejs",
    env=NODE_ENV,
    memory_rlimit="none",
    overhead_mb=256,
)
"""Jest, from the runtime (``scripts/runtime/node/package.json``): the program is a test file."""

REACT_CONFIG = json.dumps(
    {
        "rootDir": "{box}",
        "testMatch": ["**/*.test.js"],
        "cache": False,
        "watchman": False,
        "testEnvironment": f"{_NODE_MODULES}/jest-environment-jsdom",
        "setupFilesAfterEnv": [f"{_NODE_MODULES}/@testing-library/jest-dom"],
        "transform": {
            r"\.[jt]sx?$": [
                f"{_NODE_MODULES}/babel-jest",
                {
                    # only these presets: a .babelrc among the request's files is not read
                    "babelrc": False,
                    "configFile": False,
                    "presets": [
                        [f"{_NODE_MODULES}/@babel/preset-env", {"targets": {"node": "current"}}],
                        [f"{_NODE_MODULES}/@babel/preset-react", {"runtime": "automatic"}],
                        f"{_NODE_MODULES}/@babel/preset-typescript",
                    ],
                },
            ]
        },
    }
)
REACT = Language(
    "react",
    "main.test.js",
    _jest_run(REACT_CONFIG),
    suffix=".js",
    fence_of="javascript",
    runs_tests=True,
    tools=("/usr/bin/node",),
    runtime_tools=(
        "node/node_modules/jest/bin/jest.js",
        "node/node_modules/jest-environment-jsdom/package.json",
        "node/node_modules/@babel/preset-react/package.json",
        "node/node_modules/@testing-library/react/package.json",
    ),
    package="nodejs",
    env=NODE_ENV,
    memory_rlimit="none",
    overhead_mb=384,
)
"""React components under Jest in a jsdom document, from the runtime: the program is a
test file in JSX (other files may be ``.jsx``, ``.ts`` or ``.tsx``, transpiled by Babel,
not type-checked), with React 18, Testing Library (``@testing-library/react``,
``user-event``) and jest-dom's matchers installed."""

COMPILED = (
    Language(
        "csharp",
        "main.cs",
        ("/usr/bin/mono", "{box}/main.exe"),
        compile=("/usr/bin/mcs", "-optimize+", "-out:main.exe", "{sources}"),
        suffix=".cs",
        tools=("/usr/bin/mcs", "/usr/bin/mono"),
        package="mono-mcs",
        memory_rlimit="data",
        aliases=("c#", "cs"),
    ),
    Language(
        "d",
        "main.d",
        ("{box}/main",),
        compile=("/usr/bin/gdc", "-O2", "-o", "main", "{sources}"),
        suffix=".d",
        tools=("/usr/bin/gdc",),
        package="gdc",
        memory_rlimit="data",
        aliases=("dlang",),
    ),
    Language(
        "typescript",
        "main.ts",
        ("node", "--max-old-space-size={memory_mb}", "{box}/main.js"),
        compile=("node", "--max-old-space-size=1024", "-e", TS_TRANSPILE, "{sources}"),
        suffix=".ts",
        tools=("/usr/bin/node", "/usr/share/nodejs/typescript/lib/typescript.js"),
        package="node-typescript",
        env=NODE_ENV,
        memory_rlimit="none",
        overhead_mb=128,
        aliases=("ts",),
    ),
    Language(
        "scala",
        "Main.scala",
        # the JVM with Scala's library, as the `scala` runner would set it up: the runner
        # is itself a Scala program (0.7 s a run here against 0.25 s; a right answer timed
        # out at the default 2 s on a loaded machine)
        (
            "java",
            "-Xmx{memory_mb}m",
            "-XX:+UseSerialGC",
            "-cp",
            f"{SCALA_LIB}/*:{{box}}",
            "{main_class}",
        ),
        compile=(
            "/usr/bin/scalac",
            "-J-Xmx1024m",
            "-J-XX:TieredStopAtLevel=1",
            jvm_archive("scalac"),
            "-d",
            ".",
            "{sources}",
        ),
        suffix=".scala",
        # the object that runs (`object Solution extends App`, or one with a `main`),
        # opening a line (not in a comment), names the file and so the class run;
        # without one, `Main`
        main_pattern=(
            r"(?m)^[ \t]*object\s+([A-Za-z_]\w*)(?=\s+extends\s+App\b"
            r"|(?:(?!\bobject\b)[\s\S])*?\bdef\s+main\s*\()"
        ),
        tools=("/usr/bin/java", "/usr/bin/scalac", f"{SCALA_LIB}/scala-library.jar"),
        package="scala",
        memory_rlimit="none",
        overhead_mb=256,
    ),
    Language(
        "kotlin",
        "main.kt",
        ("java", "-Xmx{memory_mb}m", "-XX:+UseSerialGC", "-jar", "{box}/main.jar"),
        compile=(
            "/usr/bin/kotlinc",
            "-J-Xmx1024m",
            "-J-XX:TieredStopAtLevel=1",
            jvm_archive("kotlinc"),
            "{sources}",
            "-include-runtime",
            "-d",
            "main.jar",
        ),
        suffix=".kt",
        tools=("/usr/bin/kotlinc", "/usr/bin/java"),
        package="kotlin",
        memory_rlimit="none",
        overhead_mb=256,
        aliases=("kt",),
    ),
)


LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        Language(
            "python3",
            "main.py",
            # No -E: the environment is the sandbox's own (base_env + env), never the host's.
            ("/usr/bin/python3", "-s", "{box}/{main}"),
            suffix=".py",
            tools=("/usr/bin/python3",),
            env=PYTHON_ENV,
            aliases=("python", "py", "py3"),
            package="python3",
        ),
        Language(
            "c",
            "main.c",
            ("{box}/main",),
            compile=("gcc", "-O2", "-std=gnu17", "-o", "main", "{sources}", "-lm"),
            suffix=".c",
            tools=("/usr/bin/gcc",),
            package="gcc",
            build_flags=(*_C_FAMILY_FLAGS, _C_STANDARDS),
        ),
        Language(
            "cpp",
            "main.cpp",
            ("{box}/main",),
            compile=("g++", "-O2", "-std=c++17", "-I", CPP_INCLUDE, "-o", "main", "{sources}"),
            suffix=".cpp",
            tools=("/usr/bin/g++",),
            package="g++",
            build_flags=(*_C_FAMILY_FLAGS, _CPP_STANDARDS),
            aliases=("c++", "cxx", "cc"),
        ),
        Language(
            "java",
            "Main.java",
            (
                "java",
                "-ea",  # assertions on: `assert` in Java is otherwise a no-op
                "-Xmx{memory_mb}m",
                "-Xss64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                f"{{box}}:{JAVA_CLASS_PATH}",
                "{main_class}",
            ),
            compile=(
                "javac",
                "-J-Xmx512m",
                "-J-XX:+UseSerialGC",
                "-J-XX:TieredStopAtLevel=1",
                jvm_archive("javac"),
                "-cp",
                f".:{JAVA_CLASS_PATH}",
                "-d",
                ".",
                "{sources}",
            ),
            suffix=".java",
            # `public class Solution { ... main ... }` must live in Solution.java and runs
            # as Solution (a top-level declaration, at the start of a line: not a nested
            # class, nor one in a comment or string)
            main_pattern=r"(?m)^public\s+(?:final\s+|abstract\s+)*class\s+([A-Za-z_]\w*)",
            build_flags=(
                r"-g(?::none)?",
                r"-nowarn",
                r"-Xlint(?::[a-z,-]+)?",
                r"-parameters",
                r"--release=(?:8|11|17|21)|-source|-target|--release|8|11|17|21",
                r"-encoding|UTF-8",
            ),
            tools=("/usr/bin/java", "/usr/bin/javac"),
            package="default-jdk-headless",
            memory_rlimit="none",
            overhead_mb=256,
        ),
        Language(
            "javascript",
            "main.js",
            ("node", "--max-old-space-size={memory_mb}", "{box}/{main}"),
            suffix=".js",
            tools=("/usr/bin/node",),
            package="nodejs",
            env=NODE_ENV,
            memory_rlimit="none",
            overhead_mb=128,
            aliases=("js", "node", "nodejs"),
        ),
        Language(
            "go",
            "main.go",
            ("{box}/main",),
            compile=("go", "build", "-o", "main", "{sources}"),
            suffix=".go",
            build_flags=(r"-trimpath", r"-tags=[A-Za-z0-9_,]+", r"-race"),
            tools=("/usr/bin/go",),
            package="golang-go",
            aliases=("golang",),
            memory_rlimit="data",
            env=GO_ENV,
        ),
        Language(
            "rust",
            "main.rs",
            ("{box}/main",),
            compile=(f"{RUST_MOUNT}/bin/rustc", "--edition", "2021", "-O", "-o", "main", "{main}"),
            suffix=".rs",
            build_flags=(
                r"-O",
                r"-g",
                r"-C|opt-level=[0-3sz]|debuginfo=[0-2]|overflow-checks=(?:on|off)",
                r"--cfg|[A-Za-z_][A-Za-z0-9_]*",
                r"--edition=(?:2015|2018|2021)",
            ),
            tools=("rustc",),
            package="rustc",
            memory_rlimit="data",
            aliases=("rs",),
        ),
        Language(
            "bash",
            "main.sh",
            ("/bin/bash", "{box}/{main}"),
            suffix=".sh",
            tools=("/bin/bash",),
            package="bash",
            aliases=("sh", "shell"),
        ),
        Language(
            "sql",
            "main.sql",
            ("sqlite3", "-bail", "-batch", ":memory:", ".read /dev/stdin", ".read {box}/{main}"),
            suffix=".sql",
            tools=("/usr/bin/sqlite3",),
            package="sqlite3",
            aliases=("sqlite",),
        ),
        Language(
            "verilog",
            "main.v",
            ("vvp", "-n", "{box}/main.vvp"),
            compile=("iverilog", "-g2012", "-o", "main.vvp", "{sources}"),
            suffix=".v",
            aliases=("systemverilog", "v", "sv"),
            build_flags=(
                r"-g(?:1995|2001|2005|2009|2012)",
                r"-D[A-Za-z_][A-Za-z0-9_]*(?:=[A-Za-z0-9_]*)?",
                r"-Wall",
                r"-s|[A-Za-z_][A-Za-z0-9_]*",
            ),
            tools=("/usr/bin/iverilog", "/usr/bin/vvp"),
            package="iverilog",
        ),
        *SCRIPTED,
        *COMPILED,
        *TEST_RUNNERS,
        *JUNIT,
        JEST,
        REACT,
    )
}
_ALIASES = {alias: lang.name for lang in LANGUAGES.values() for alias in lang.aliases}


def find(name: str) -> Language | None:
    """The language called ``name`` (or one of its aliases), or None."""
    key = name.strip().lower()
    return LANGUAGES.get(_ALIASES.get(key, key))
