"""A split test that does not parse is the reference's fault (`invalid_reference`),
never every program's 0; a test that parses but does not build with the program's
functions (a wrong name, a wrong type) stays the program's 0, and what a program
brings to the test's side never makes the test look unparsable."""

from __future__ import annotations

import shutil
from types import ModuleType

import pytest

from referee.verifiers import Status
from referee.verifiers.code import diagnostics, rust_source
from referee.verifiers.code.boundary import c, cpp
from referee.verifiers.code.boundary.declarations import Refused
from referee.verifiers.code.boundary.go import SETUP
from referee.verifiers.code.boundary.sides import SetupPlace
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

GO_RIGHT = "package main\n\nfunc Add(a int, b int) int { return a + b }"
RUST_RIGHT = "fn add(a: i64, b: i64) -> i64 { a + b }"
C_RIGHT = "int add(int a, int b) { return a + b; }"
JAVA_RIGHT = "class Solution { static int add(int a, int b) { return a + b; } }"

# (language, tool, right program, a test that does not parse, what the parser says)
UNPARSED = [
    (
        "go", "go", GO_RIGHT,
        'package main\nimport "fmt"\nfunc main() {\n    if Add(1, 2) != 3 { panic("x") }\n'
        '    fmt.Println("ok"\n}\n',
        "its line 5: unexpected newline",
    ),
    (  # go test's shape, its closing brace missing: the error is in our code after it
        "go", "go", GO_RIGHT,
        'import "testing"\n\nfunc TestAdd(t *testing.T) {\n'
        '    if Add(1, 2) != 3 { t.Fatal("x") }\n',
        "its end: ",
    ),
    (
        "rust", "rustc", RUST_RIGHT, "fn main() {\n    assert_eq!(add(1, 2), 3;\n}\n",
        "its line 2: mismatched closing delimiter",
    ),
    (
        "java", "javac", JAVA_RIGHT,
        "public class Main {\n    public static void main(String[] args) {\n"
        "        assert Solution.add(1, 2) == 3\n    }\n}\n",
        "its line 3: ';' expected",
    ),
    (  # C and C++: what no declaration changes, the lexer's errors...
        "c", "gcc", C_RIGHT,
        "#include <assert.h>\nint main(void) {\n  assert(add(1, 2) == 3) @;\n  return 0;\n}\n",
        "does not parse (its line 3: stray",
    ),
    (  # ... a header that is not there (the program includes only standard ones)...
        "c", "gcc", C_RIGHT,
        '#include <assert.h>\n#include "solution.h"\nint main(void) { return add(1, 2) != 3; }\n',
        "does not build (solution.h: No such file or directory)",
    ),
    (  # ... and a brace left open, found at the end of the input
        "cpp", "g++", C_RIGHT,
        "#include <cassert>\nint h(int x) { if (x) { return 1; }\n"
        "int main() { assert(add(1, 2) == 3); }\n",
        "does not parse (its end: expected",
    ),
    (  # MultiPL-E's shape: the test goes on inside the program's open class
        "java", "javac",
        "import java.util.*;\nclass Problem {\n    public static long add(long a, long b) {\n"
        "        return a + b;\n",
        "    }\n    public static void main(String[] args) {\n"
        "    assert(add((1l), (2l)) == (3l)));\n    }\n\n}\n",
        "its line 3: ';' expected",
    ),
]  # fmt: skip


def _require(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")


@pytest.mark.parametrize(
    ("language", "tool", "right", "test", "said"),
    UNPARSED,
    ids=[f"{u[0]}-{i}" for i, u in enumerate(UNPARSED)],
)
def test_a_test_that_does_not_parse_is_the_references_fault(
    score_many: ScoreMany, language: str, tool: str, right: str, test: str, said: str
) -> None:
    _require(tool)
    [result] = score_many([code_item(fenced(right, language), {"test": test}, language=language)])
    assert result.status is Status.INVALID, result
    assert result.error is not None and result.error.code == "invalid_reference"
    assert result.error.message.startswith("reference.test: does not "), result.error
    assert said in result.error.message, result.error


# (language, tool, a program whose signature the test cannot use, a test that parses)
WRONG_SIGNATURE = [
    (
        "go", "go", 'package main\n\nfunc Add(a string) string { return a }',
        "package main\nfunc main() {\n    if Add(1, 2) != 3 { panic(\"x\") }\n}\n",
    ),
    ("rust", "rustc", "fn add(a: &str) -> i64 { 0 }", "fn main() { assert_eq!(add(1, 2), 3); }"),
    (  # C and C++: a type error, and a call the program's declarations parse otherwise
        "c", "gcc", "struct s { int x; };\nint add(const char *a) { return a[0]; }",
        "#include <assert.h>\nint main(void) { assert(add(1, 2) == 3); return 0; }",
    ),
    (
        "cpp", "g++", "int add(int a, int b) { return a + b; }",
        "#include <cassert>\nint main() { assert(add<int>(1, 2) == 3); }",
    ),
    (
        "java", "javac", "class Solution { static String add(String a) { return a; } }",
        "public class Main { public static void main(String[] a) {\n"
        "    assert Solution.add(1, 2) == 3; } }",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("language", "tool", "program", "test"), WRONG_SIGNATURE, ids=[w[0] for w in WRONG_SIGNATURE]
)
def test_a_test_that_parses_but_does_not_build_is_the_programs_zero(
    score_many: ScoreMany, language: str, tool: str, program: str, test: str
) -> None:
    _require(tool)
    [result] = score_many([code_item(fenced(program, language), {"test": test}, language=language)])
    assert result.status is Status.OK and result.reward == 0.0, result
    assert result.details["message"] == "the test does not compile with the program's functions"


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")
def test_a_program_that_does_not_build_is_its_zero_whatever_its_test(
    score_many: ScoreMany,
) -> None:
    """The program's own build is read first: a program that does not build is its 0,
    beside a test that does not parse too (it never turns its 0 into an invalid item)."""
    program = "package main\n\nfunc Add(a int, b int) int { return a + }"
    test = UNPARSED[0][3]
    [result] = score_many([code_item(fenced(program, "go"), {"test": test}, language="go")])
    assert result.status is Status.OK and result.reward == 0.0, result
    assert result.details["message"] == "the program does not compile"


@pytest.mark.parametrize(
    ("language", "output", "lines", "found"),
    [
        ("go", "./main.go:4:5: syntax error: unexpected newline", range(3, 9), 4),
        ("go", "main.go:5:5: syntax error: unexpected newline", range(3, 9), 5),  # go tool compile
        ("go", "main.go:5:8: expected ';', found x", range(3, 9), None),  # not go test's words
        ("go_test", "./main_test.go:12:1: syntax error: unexpected EOF", range(3, 9), 12),
        ("go_test", "main_test.go:25:6: expected '(', found TestMain", range(3, 9), 25),
        ("go_test", "main_test.go:5:8: package foo/bar is not in std", range(3, 9), None),
        # before the test: stubs or imports, which the program brought
        ("go", "./main.go:2:5: syntax error: x\n./main.go:4:5: syntax error: y", range(3, 9), None),
        ("go", "./main.go:4:5: undefined: Add", range(3, 9), None),
        ("rust", "error: expected `;`, found `}`\n  --> main.rs:5:9\n", range(3, 9), 5),
        ("rust", "error[E0425]: cannot find function `add`\n --> main.rs:5:9\n", range(3, 9), None),
        ("rust", "error: no rules expected the token `;`\n --> main.rs:6:1\n", range(3, 9), 6),
        ("java", "Main.java:7: error: ';' expected", range(3, 9), 7),
        ("java", "Main.java:7: error: cannot find symbol", range(3, 9), None),
        ("java", "Main.java:7: error: unexpected type", range(3, 9), None),
        ("java", "Main.java:7: error: reached end of file while parsing", range(3, 9), 7),
        # C and C++ parse by their declarations: only what none changes is concluded
        ("c", "main.c:4:5: error: expected ';' before '}' token", range(3, 9), None),
        ("cpp", "main.cpp:4:5: error: expected primary-expression", range(3, 9), None),
        ("c", "main.c:9:3: error: stray \u2018@\u2019 in program", range(3, 9), 9),
        ("c", "main.c:4:1: error: unterminated comment", range(3, 9), 4),
        ("c", 'main.c:2:9: error: missing terminating " character', range(3, 9), None),
        ("cpp", "main.cpp:40:1: error: expected \u2018}\u2019 at end of input", range(3, 9), 40),
        # a header that is not there is the reference's wherever it is included
        ("c", "main.c:2:10: fatal error: sol.h: No such file or directory", range(3, 9), 2),
        ("c", "main.c:5:1: error: unknown type name \u2018Node\u2019", range(3, 9), None),
    ],
)
def test_parse_errors_are_read_where_they_are(
    language: str, output: str, lines: range, found: int | None
) -> None:
    error = diagnostics.reference_parse_error(language, output, lines)
    assert (error.line if error else None) == found


def test_rust_block_comments_nest() -> None:
    """``/* /* */ ... */`` is one comment in Rust: a ``use`` or ``fn`` after the inner
    ``*/`` is no code of the program's."""
    code = 'use std::io /* /* */ ; */;\n/* /* */ fn fake() {} */ fn real() {} "/*" /* open /* */'
    shadow = rust_source.masked(code)
    assert len(shadow) == len(code) and shadow.count("\n") == code.count("\n")
    assert "fake" not in shadow and "fn real() {}" in shadow and "open" not in shadow
    assert shadow.startswith("use std::io ") and shadow.split("\n")[0].rstrip().endswith(";")


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
def test_a_nested_comment_in_a_programs_use_does_not_break_its_test(
    score_many: ScoreMany,
) -> None:
    """The program's ``use`` lines go to the test's side: one holding a nested comment
    was cut at the inner ``*/``, and the test did not build (a right answer's 0)."""
    program = (
        "use std::collections::HashMap /* /* */ ; */;\n"
        "fn add(a: i64, b: i64) -> i64 { let _m: HashMap<i64, i64> = HashMap::new(); a + b }"
    )
    test = (
        "fn main() {\n    let _m: HashMap<i64, i64> = HashMap::new();\n"
        "    assert_eq!(add(1, 2), 3);\n}"
    )
    [result] = score_many([code_item(fenced(program, "rust"), {"test": test}, language="rust")])
    assert result.status is Status.OK and result.reward == 1.0, result


@pytest.mark.parametrize(
    ("module", "code"),
    [
        (c, "int f(__typeof__(({1;})) x) { return x; }"),
        (c, "int f(struct {int a;} *p) { return 0; }"),
        (cpp, "int f(decltype([]{ return 1; }()) x) { return x; }"),
        (cpp, "using T = decltype([]{ return 1; }());\nint f(T x) { return x; }"),
    ],
)
def test_no_signature_brings_a_brace_to_the_tests_side(module: ModuleType, code: str) -> None:
    """A brace left open on the test's side is the reference's (`diagnostics`); a type the
    stubs would copy with a brace in it (a statement expression, an anonymous struct, a
    lambda in ``decltype``, through an alias too) is refused before anything is built."""
    with pytest.raises(Refused):
        module.signatures(code, "int main() { f(1); }")


GO_TEST = 'package main\nfunc main() {\n    if Add(1, 2) != 3 { panic("x") }\n}\n'
RUST_TEST = "fn main() { assert_eq!(add(1, 2), 3); }"
C_TEST = "#include <assert.h>\nint main(void) { assert(add(1, 2) == 3); return 0; }\n"
JAVA_TEST = (
    "public class Main { public static void main(String[] a) {\n"
    "    if (Solution.add(1, 2) != 3) throw new AssertionError(); } }"
)

TESTER_SIDE = SetupPlace(range(2, 5), side="tester")
RUSTC_USE_ERROR = "error: expected one of `::`, `;`, or `as`, found `x`\n --> main.rs:1:9\n\n"
RUSTC_UNCLOSED = (
    "error: this file contains an unclosed delimiter\n  --> main.rs:19:2\n   |\n"
    " {opened} | mod helpers {{\n   |             - unclosed delimiter\n...\n19 |\n   | ^\n\n"
)

GPP_UNCLOSED = (  # g++ in a UTF-8 locale quotes typographically
    "main.cpp:9:26: error: expected \u2018}}\u2019 at end of input\n    9 | }}\n      |  ^\n"
    "main.cpp:{opened}:18: note: to match this \u2018{{\u2019\n"
)

# (language, tool, right program, test, a setup that does not parse, what is said)
UNPARSED_SETUP = [
    ("go", "go", GO_RIGHT, GO_TEST, "func helper( {}", "its line 1: unexpected {"),
    (  # its own file: a package clause, or none (one is added), the lines its own
        "go", "go", GO_RIGHT, GO_TEST, "package main\n\nvar x = [}\n", "its line 3: unexpected }",
    ),
    (
        "java", "javac", JAVA_RIGHT, JAVA_TEST,
        "import java.util.*;\nclass Helper { int f() { return 1 } }", "its line 2: ';' expected",
    ),
    ("c", "gcc", C_RIGHT, C_TEST, "int helper(void) { return 1 @; }", "its line 1: stray"),
    (  # a comment left open runs on to the end: the program is no comment of its own
        "c", "gcc", C_RIGHT, C_TEST, "int helper(void) { return 1; }\n/* open", "unterminated",
    ),
    ("c", "gcc", C_RIGHT, C_TEST, "#include <referee_none.h>", "referee_none.h: No such file"),
    ("cpp", "g++", C_RIGHT, C_TEST.replace("assert.h", "cassert"), "/* open", "unterminated"),
    (  # a brace it leaves open: gcc's C says only that the input ended, its text says where
        "c", "gcc", C_RIGHT, C_TEST, "int helper(void) { return 1; }\nint other(void) {\n",
        "its line 2: a delimiter it opens is never closed",
    ),
    (  # a brace it leaves open: g++ notes where, at the end of the input
        "cpp", "g++", C_RIGHT, C_TEST.replace("assert.h", "cassert"),
        "int helper() {\n    return 1;", "its line 1: a delimiter it opens is never closed",
    ),
    # Rust's is read on the test's side, after our code and the program's `use` lines
    ("rust", "rustc", RUST_RIGHT, RUST_TEST, "fn helper() -> i64 {\n    3 +\n}", "its line 3"),
    ("rust", "rustc", RUST_RIGHT, RUST_TEST, "const X: i64 = 1;\nconst Y: i64 = ;", "its line 2"),
    (
        "rust", "rustc", "use std::collections::HashMap;\n" + RUST_RIGHT, RUST_TEST,
        "mod helpers {\n    pub fn h() -> i64 { 1 }\n", "its line 1: a delimiter it opens",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("language", "tool", "right", "test", "setup", "said"),
    UNPARSED_SETUP,
    ids=[f"{u[0]}-{i}" for i, u in enumerate(UNPARSED_SETUP)],
)
def test_a_setup_that_does_not_parse_is_the_references_fault(
    score_many: ScoreMany, language: str, tool: str, right: str, test: str, setup: str, said: str
) -> None:
    """The setup comes before anything of the program's on its side (Go's in a file of
    its own): where its build stops in the setup's lines, no program would build."""
    _require(tool)
    reference = {"test": test, "setup": setup}
    [result] = score_many([code_item(fenced(right, language), reference, language=language)])
    assert result.status is Status.INVALID, result
    assert result.error is not None and result.error.code == "invalid_reference"
    assert result.error.message.startswith("reference.setup: does not parse ("), result.error
    assert said in result.error.message, result.error


# (language, tool, a program that does not build beside a setup that does, test, setup)
BROKEN_BESIDE_SETUP = [
    ("go", "go", "package main\nfunc Add(a int, b int) int { return a + }", GO_TEST, "var x = 1"),
    (  # a name of the setup's declared again: an error in the setup's file, not its parse
        "go", "go", "package main\nvar x = 2\nfunc Add(a int, b int) int { return a + b }",
        GO_TEST, "var x = 1",
    ),
    (  # the program's own comment left open
        "c", "gcc", C_RIGHT + " /* open", C_TEST, "int helper(void) { return 1; }",
    ),
    ("c", "gcc", "int add(int a, int b) { return a + b @; }", C_TEST, "int helper(void);"),
    (  # the program's own brace left open, beside a setup with braces that are no braces
        "c", "gcc", "int add(int a, int b) { return a + b;", C_TEST,
        '#define OPEN {\nstatic const char *s = "{"; /* { */\n// {\n'
        "static int helper(void) { return '{' + s[0]; }",
    ),
    (  # the program's own brace left open: g++'s note points into the program
        "cpp", "g++", "int add(int a, int b) { return a + b;",
        C_TEST.replace("assert.h", "cassert"), "int helper() { return 1; }",
    ),
    (
        "java", "javac", "class Solution { static int add(int a, int b) { return a + b } }",
        JAVA_TEST, "class Helper {}",
    ),
    (  # Rust's setup follows the program on its side: it is read on the test's
        "rust", "rustc", "fn add(a: i64, b: i64) -> i64 { a + b", RUST_TEST, "fn helper() {}",
    ),
    (  # a program's `use` left open is not carried to the test's side, before the setup
        "rust", "rustc", "use std::{fmt;\n" + RUST_RIGHT, RUST_TEST, "fn helper() {}",
    ),
    (  # nor read as the setup's when it does not parse there
        "rust", "rustc", "use std::fmt x;\n" + RUST_RIGHT, RUST_TEST, "fn helper() {}",
    ),
    ("rust", "rustc", RUST_RIGHT.replace("a + b", "a +"), RUST_TEST, "fn helper() {}"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("language", "tool", "program", "test", "setup"),
    BROKEN_BESIDE_SETUP,
    ids=[f"{b[0]}-{i}" for i, b in enumerate(BROKEN_BESIDE_SETUP)],
)
def test_a_program_that_does_not_build_beside_a_setup_is_its_zero(
    score_many: ScoreMany, language: str, tool: str, program: str, test: str, setup: str
) -> None:
    _require(tool)
    reference = {"test": test, "setup": setup}
    [result] = score_many([code_item(fenced(program, language), reference, language=language)])
    assert result.status is Status.OK and result.reward == 0.0, result
    assert result.details["message"] == "the program does not compile"


@pytest.mark.parametrize(
    ("language", "output", "place", "found"),
    [
        ("go", "./referee_setup.go:3:5: syntax error: x", SetupPlace(range(2, 5), SETUP), 3),
        ("go", "referee_setup.go:3:5: syntax error: x", SetupPlace(range(2, 5), SETUP), 3),
        ("go", "./main.go:3:5: syntax error: x", SetupPlace(range(2, 5), SETUP), None),
        ("go", "./referee_setup.go:3:5: x redeclared", SetupPlace(range(2, 5), SETUP), None),
        ("c", "main.c:3:1: error: unterminated comment", SetupPlace(range(2, 5)), 3),
        ("c", "main.c:6:1: error: unterminated comment", SetupPlace(range(2, 5)), None),
        ("c", "main.c:3:1: error: expected ';' before '}' token", SetupPlace(range(2, 5)), None),
        ("java", "Main.java:3: error: ';' expected", SetupPlace(range(2, 5)), 3),
        ("java", "Main.java:3: error: cannot find symbol", SetupPlace(range(2, 5)), None),
        ("rust", "error: expected `;`, found `}`\n --> main.rs:3:5\n", TESTER_SIDE, 3),
        ("rust", f"{RUSTC_USE_ERROR}error: expected `;`\n --> main.rs:3:5\n", TESTER_SIDE, None),
        ("rust", "error[E0425]: cannot find value `x`\n --> main.rs:3:5\n", TESTER_SIDE, None),
        ("rust", RUSTC_UNCLOSED.format(opened=3), TESTER_SIDE, 3),
        ("cpp", GPP_UNCLOSED.format(opened=3), SetupPlace(range(2, 5)), 3),
        ("cpp", GPP_UNCLOSED.format(opened=6), SetupPlace(range(2, 5)), None),
        ("c", GPP_UNCLOSED.format(opened=3).replace(".cpp", ".c"), SetupPlace(range(2, 5)), None),
        ("rust", RUSTC_UNCLOSED.format(opened=6), TESTER_SIDE, None),
    ],
)
def test_setup_errors_are_read_in_its_lines(
    language: str, output: str, place: SetupPlace, found: int | None
) -> None:
    error = diagnostics.setup_parse_error(language, output, place)
    assert (error.line if error else None) == found
