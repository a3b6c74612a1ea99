"""Every language in the table: hello world, a compile error (where there is a compile
step), and a runtime error. A language whose toolchain is absent is skipped, with why."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.sandbox import (
    Case,
    CaseStatus,
    CompileStatus,
    Limits,
    Program,
    Sandbox,
    SandboxSettings,
    SandboxStatus,
    languages,
    toolchains,
)
from tests.conftest import require

from .conftest import FAST


@dataclass(frozen=True)
class Row:
    language: str
    hello: str
    broken: str | None  # does not compile (None: interpreted)
    crash: str  # compiles, then exits non-zero
    stdin: str = ""


REACT_PASSES = """
import { useState } from "react";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";

function Counter() {
  const [n, setN] = useState(0);
  return <button onClick={() => setN(n + 1)}>count {n}</button>;
}

test("counts a click", async () => {
  render(<Counter />);
  await userEvent.click(screen.getByRole("button"));
  expect(screen.getByRole("button")).toHaveTextContent("count 1");
});
"""
"""A React component test in JSX: state, a user event, a jest-dom matcher."""

ROWS = [
    Row("python3", "print(input())", None, "raise SystemExit(3)", "hello"),
    Row(
        "c",
        '#include <stdio.h>\nint main(){char s[64];scanf("%63s",s);puts(s);}',
        "int main(){ return x; }",
        "int main(){ return 3; }",
        "hello",
    ),
    Row(
        "cpp",
        "#include <iostream>\n#include <string>\n"
        "int main(){std::string s;std::cin>>s;std::cout<<s<<'\\n';}",
        "int main(){ std::vector<int> v; }",
        "int main(){ return 3; }",
        "hello",
    ),
    Row(
        "java",
        "import java.util.*;\npublic class Main{public static void main(String[] a){"
        "System.out.println(new Scanner(System.in).next());}}",
        "public class Main{ void f( }",
        "public class Main{public static void main(String[] a){System.exit(3);}}",
        "hello",
    ),
    Row(
        "javascript",
        "const fs=require('fs');console.log(fs.readFileSync(0,'utf8').trim())",
        None,
        "process.exit(3)",
        "hello",
    ),
    Row(
        "go",
        'package main\nimport "fmt"\nfunc main(){var s string;fmt.Scan(&s);fmt.Println(s)}',
        "package main\nfunc main(){ x := }",
        'package main\nimport "os"\nfunc main(){os.Exit(3)}',
        "hello",
    ),
    Row(
        "rust",
        "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_line(&mut s)"
        '.unwrap();println!("{}",s.trim());}',
        'fn main(){ let x: i32 = "a"; }',
        "fn main(){ std::process::exit(3); }",
        "hello",
    ),
    Row("bash", "read s; echo $s", None, "exit 3", "hello"),
    Row(
        "sql",
        "select v from t;",
        None,
        "select * from missing_table;",
        "create table t(v text); insert into t values('hello');",
    ),
    Row(
        "verilog",
        'module m; initial begin $display("hello"); $finish; end endmodule',
        "module m; initial begin $display( end endmodule",
        'module m; initial begin $fatal(1, "boom"); end endmodule',
    ),
    Row("php", '<?php echo trim(fgets(STDIN)), "\\n";', None, "<?php exit(3);", "hello"),
    Row("ruby", "puts gets", None, "exit 3", "hello"),
    Row("perl", "print scalar <STDIN>;", None, "exit 3;", "hello\n"),
    Row("lua", "print(io.read())", None, "os.exit(3)", "hello"),
    Row("r", 'cat(readLines(file("stdin"), n=1), "\\n", sep="")', None, "quit(status=3)", "hello"),
    Row(
        "racket",
        "#lang racket/base\n(displayln (read-line))",
        None,
        "#lang racket/base\n(exit 3)",
        "hello",
    ),
    Row(
        "csharp",
        "using System; class P { static void Main() { Console.WriteLine(Console.ReadLine()); } }",
        "class P { static void Main() { int x = ; } }",
        "class P { static int Main() { return 3; } }",
        "hello",
    ),
    Row(
        "d",
        "import std.stdio, std.string; void main() { writeln(readln().strip()); }",
        "void main() { int x = ; }",
        "int main() { return 3; }",
        "hello",
    ),
    Row(
        "typescript",
        "const s: string = require('fs').readFileSync(0, 'utf8').trim(); console.log(s);",
        "const x: number = ;",
        "process.exit(3);",
        "hello",
    ),
    Row(
        "scala",
        "object Main { def main(a: Array[String]): Unit = println(scala.io.StdIn.readLine()) }",
        "object Main { def main(a: Array[String]): Unit = { val x: Int = } }",
        "object Main { def main(a: Array[String]): Unit = sys.exit(3) }",
        "hello",
    ),
    Row(
        "kotlin",
        "fun main() { println(readLine()) }",
        "fun main() { val x: Int = }",
        "fun main() { kotlin.system.exitProcess(3) }",
        "hello",
    ),
    Row(
        "pytest",
        "def test_hello():\n    assert 'hello'.upper() == 'HELLO'\n",
        None,
        "def test_fails():\n    assert 1 == 2\n",
        "hello",
    ),
    Row(
        "go_test",
        'package main\nimport "testing"\nfunc TestHello(t *testing.T) {}\n',
        "package main\nfunc Test( {",
        'package main\nimport "testing"\nfunc TestBad(t *testing.T) { t.Fatal("no") }\n',
    ),
    Row(
        "d_unittest",
        "unittest { assert(1 + 1 == 2); }",
        "unittest { int x = ; }",
        "unittest { assert(1 + 1 == 3); }",
    ),
    Row("kotlin_script", "println(readLine())", None, "kotlin.system.exitProcess(3)", "hello"),
    Row(
        "junit",
        "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n"
        "public class AddTest { @Test void adds() { assertEquals(4, 2 + 2); } }",
        "public class AddTest { void f( }",
        "import org.junit.Test;\nimport static org.junit.Assert.*;\n"
        "public class OldTest { @Test public void fails() { assertEquals(5, 2 + 2); } }",
    ),
    Row(
        "gtest",
        "#include <gtest/gtest.h>\nTEST(Add, Works) { EXPECT_EQ(2 + 2, 4); }",
        "#include <gtest/gtest.h>\nTEST(Add, Works) { EXPECT_EQ(2 + 2, 4) }",
        "#include <gtest/gtest.h>\nTEST(Add, Fails) { EXPECT_EQ(2 + 2, 5); }",
    ),
    Row(
        "jest",
        'test("adds", () => { expect(2 + 2).toBe(4); });',
        None,
        'test("fails", () => { expect(2 + 2).toBe(5); });',
    ),
    Row(
        "react",
        REACT_PASSES,
        None,
        REACT_PASSES.replace("count 1", "count 2"),
    ),
]


RUNTIME = Path(os.environ.get("REFEREE_TEST_RUNTIME_DIR", "/opt/referee/runtime"))
"""The runtime scripts/test.sh builds: jest comes from it."""


@pytest.fixture(scope="module")
def runtime_sandbox() -> Iterator[Sandbox]:
    settings = SandboxSettings(
        backend="bwrap", python_fast_path=False, limits=FAST, runtime_dir=RUNTIME
    )
    with Sandbox(settings) as sandbox:
        yield sandbox


@pytest.fixture
def sandbox_for(request: pytest.FixtureRequest, bwrap_sandbox: Sandbox) -> Callable[[str], Sandbox]:
    """The sandbox a language runs in: with the runtime when it needs it."""

    def pick(name: str) -> Sandbox:
        lang = languages.find(name)
        assert lang is not None
        if lang.runtime_tools:
            sandbox: Sandbox = request.getfixturevalue("runtime_sandbox")
            return sandbox
        return bwrap_sandbox

    return pick


def _skip_if_missing(name: str) -> None:
    lang = languages.find(name)
    assert lang is not None
    missing = toolchains.missing_tools(lang, runtime=RUNTIME if lang.runtime_tools else None)
    require(not missing, f"{name} toolchain absent on this host: {', '.join(missing)}")


JVM = {"java", "scala", "kotlin", "kotlin_script", "junit", "jest", "react"}


def _limits(language: str) -> Limits:
    """FAST, with the time and memory a JVM start (the Kotlin compiler's, for scripts)
    needs."""
    if language in JVM:
        return FAST.model_copy(update={"wall_s": 20, "cpu_s": 20, "memory_mb": 512})
    return FAST.model_copy(update={"wall_s": 5})


def test_the_table_covers_every_language() -> None:
    assert {row.language for row in ROWS} == set(languages.LANGUAGES)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.language)
def test_hello_world(sandbox_for: Callable[[str], Sandbox], row: Row) -> None:
    _skip_if_missing(row.language)
    report = sandbox_for(row.language).run(
        Program(language=row.language, source=row.hello),
        [Case(stdin=row.stdin)],
        _limits(row.language),
    )
    assert report.sandbox_status is SandboxStatus.OK, report.message
    assert report.compile is not None
    assert report.compile.status in {CompileStatus.OK, CompileStatus.SKIPPED}, report.compile
    [case] = report.cases
    assert case.status is CaseStatus.OK, (case, report.compile)
    if not languages.LANGUAGES[row.language].runs_tests:  # a runner prints its own report
        assert case.stdout == "hello\n", case.stderr


@pytest.mark.parametrize("row", [r for r in ROWS if r.broken], ids=lambda r: r.language)
def test_compile_error(sandbox_for: Callable[[str], Sandbox], row: Row) -> None:
    _skip_if_missing(row.language)
    assert row.broken is not None
    program = Program(language=row.language, source=row.broken)
    report = sandbox_for(row.language).run(program, [Case()])
    assert report.sandbox_status is SandboxStatus.OK, report.message
    assert report.compile is not None
    assert report.compile.status is CompileStatus.ERROR
    assert report.compile.output.strip(), "the compiler's message is kept"
    assert report.cases == []


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.language)
def test_runtime_error(sandbox_for: Callable[[str], Sandbox], row: Row) -> None:
    _skip_if_missing(row.language)
    report = sandbox_for(row.language).run(
        Program(language=row.language, source=row.crash),
        [Case(stdin=row.stdin)],
        _limits(row.language),
    )
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert case.status is CaseStatus.RUNTIME_ERROR, (case, report.compile)
    assert case.exit_code not in (0, None)


REACT_FILES = {
    "Greeting.jsx": "export default function Greeting({ name }) { return <h1>Hello, {name}</h1>; }",
    "shout.tsx": "export const shout = (s: string): string => s.toUpperCase();",
}
REACT_WITH_FILES = """
import { render, screen } from "@testing-library/react";
import Greeting from "./Greeting";
import { shout } from "./shout";
test("greets", () => {
  render(<Greeting name={shout("ada")} />);
  expect(screen.getByRole("heading")).toHaveTextContent("Hello, %s");
});
"""


@pytest.mark.parametrize(
    ("name", "status"), [("ADA", CaseStatus.OK), ("ada", CaseStatus.RUNTIME_ERROR)]
)
def test_react_imports_the_programs_jsx_and_tsx_files(
    runtime_sandbox: Sandbox, name: str, status: CaseStatus
) -> None:
    """Babel transpiles the files a React test imports (JSX, TypeScript with JSX); the
    assertion's outcome, not the transpiling, decides."""
    _skip_if_missing("react")
    program = Program(language="react", source=REACT_WITH_FILES % name, files=REACT_FILES)
    report = runtime_sandbox.run(program, [Case()], _limits("react"))
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert case.status is status, case


HOSTILE_CONFIG = {
    name: 'require("fs").writeFileSync("/work/loaded", "1"); throw new Error("config read");'
    for name in ("babel.config.js", "jest.config.js", ".babelrc.js")
}


def test_react_reads_no_config_from_the_request(runtime_sandbox: Sandbox) -> None:
    """Babel and Jest take only the mode's own configuration: config files sent with the
    program (which would run code of the request's choosing at transform time) are not
    loaded, so the test passes as it would without them."""
    _skip_if_missing("react")
    files = {**HOSTILE_CONFIG, "package.json": '{"jest": {"testEnvironment": "node"}}'}
    program = Program(language="react", source=REACT_PASSES, files=files)
    report = runtime_sandbox.run(program, [Case()], _limits("react"))
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert case.status is CaseStatus.OK, case


def test_every_language_names_its_debian_package() -> None:
    assert [name for name, lang in languages.LANGUAGES.items() if not lang.package] == []


INHERITED_CAP = """
import resource, sys
from referee.sandbox import Case, Limits, Program, Sandbox, SandboxSettings
_, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (1 << 31, hard))  # what a pool worker does to itself
source = 'public class Main { public static void main(String[] a) { System.out.println(1); } }'
with Sandbox(SandboxSettings(backend=sys.argv[1], python_fast_path=False)) as sandbox:
    limits = Limits(wall_s=20, cpu_s=20, memory_mb=3072)
    report = sandbox.run(Program(language="java", source=source), [Case()], limits)
print(report.cases[0].status.value if report.cases else report.compile)
"""


@pytest.mark.parametrize("backend", ["bwrap", "process"])
def test_the_starting_process_address_space_cap_is_not_inherited(backend: str) -> None:
    """A pool worker caps its own address space; a JVM asked for a 3 GiB heap in a case
    must get it (it reserved the heap against the worker's cap: 'Could not reserve')."""
    done = subprocess.run(
        [sys.executable, "-c", INHERITED_CAP, backend],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.strip() == "ok", done.stdout + done.stderr


def test_junit_finds_no_tests_is_a_failure(bwrap_sandbox: Sandbox) -> None:
    """A class with no test is not a pass (the launcher's --fail-if-no-tests)."""
    source = "public class Nothing { public static int x = 1; }"
    report = bwrap_sandbox.run(Program(language="junit", source=source), [Case()], _limits("junit"))
    assert report.sandbox_status is SandboxStatus.OK, report.message
    [case] = report.cases
    assert case.status is CaseStatus.RUNTIME_ERROR, case
