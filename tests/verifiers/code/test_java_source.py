"""One Java file from setup, program and test (`verifiers.code.java_source`): each way a
right Java program once failed to compile beside its test, and the same through the
code verifier with the real compiler."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Item, Registry, Status, score_items
from referee.verifiers.code.java_source import (
    hoisted,
    main_renamed,
    masked,
    open_class,
    shadowing,
    unescaped,
    unpublished,
)


def test_masked_blanks_literals_and_comments_and_keeps_positions() -> None:
    code = "String s = \"import x;\"; // public class A\nchar c = '{'; /* } */ int x;"
    shadow = masked(code)
    assert len(shadow) == len(code) and shadow.count("\n") == 1
    assert "import" not in shadow and "public" not in shadow and "{" not in shadow
    assert shadow.endswith("int x;")
    block = 'String t = """\n    class Main { }\n    """;'
    assert "Main" not in masked(block) and masked(block).count("\n") == 2


@pytest.mark.parametrize(
    ("code", "rest", "imports"),
    [
        ("import java.util.*;\nclass A {}", "class A {}", ["import java.util.*;"]),
        (
            "package com.example;\nimport static java.lang.Math.max;\nclass A {}",
            "class A {}",
            ["import static java.lang.Math.max;"],
        ),
        (
            "import java.util.List; import java.io.*;\nclass A {}",
            "class A {}",
            ["import java.util.List;", "import java.io.*;"],
        ),
        ('class A { String s = "import x;"; }', 'class A { String s = "import x;"; }', []),
        ("// import java.util.*;\nclass A {}", "// import java.util.*;\nclass A {}", []),
    ],
)
def test_hoisted(code: str, rest: str, imports: list[str]) -> None:
    left, found = hoisted(code)
    assert (left.strip(), found) == (rest, imports)
    assert left.count("\n") == code.count("\n")  # the compiler's line numbers still hold


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("public class Solution {}", "class Solution {}"),
        ("public final class A {}\npublic interface B {}", "final class A {}\ninterface B {}"),
        (
            "public abstract class A { public static class B {} }",
            "abstract class A { public static class B {} }",
        ),
        ("class A { public record R(int x) {} }", "class A { public record R(int x) {} }"),
        ('class A { String s = "public class B"; }', 'class A { String s = "public class B"; }'),
        ("public enum Color { RED }", "enum Color { RED }"),
    ],
)
def test_unpublished_removes_only_top_level_public(code: str, expected: str) -> None:
    assert " ".join(unpublished(code).split()) == " ".join(expected.split())


def test_main_renamed_only_when_the_program_declares_main() -> None:
    code = 'public class Main { static int f() { return Main.g(); } String s = "Main"; }'
    assert (
        main_renamed(code, "P")
        == 'public class P { static int f() { return P.g(); } String s = "Main"; }'
    )
    assert main_renamed("class Solution { int Main; }", "P") == "class Solution { int Main; }"


TEST = (
    "public class Main {\n public static void main(String[] a) {\n  Solution s = new Solution();\n"
    "  if (!s.f(Arrays.asList(1, 2)).equals(Arrays.asList(2, 1))) throw new AssertionError();\n"
    " }\n}\n"
)
CODE = (
    "import java.util.*;\nclass Solution { List<Integer> f(List<Integer> x) {\n"
    "  List<Integer> y = new ArrayList<>(x); Collections.reverse(y); return y; } }"
)
DEMO_MAIN = (
    "\npublic class Main { public static void main(String[] args) {"
    ' System.out.println(new Solution().f(List.of(1, 2)) + " from Main"); } }'
)
# (program, reference): each a right answer that scored 0 (a compile error) before
RIGHT: dict[str, tuple[str, dict[str, Any]]] = {
    "the test imports": (CODE, {"test": "import java.util.*;\n" + TEST}),
    "only the test imports": (
        CODE.replace("import java.util.*;\n", ""),
        {"test": "import java.util.*;\n" + TEST},
    ),
    "a package declared": ("package com.example;\n" + CODE, {"test": TEST}),
    "imports after a setup": (CODE, {"test": TEST, "setup": "class Helper {}"}),
    "public class Solution": (
        CODE.replace("class Solution", "public class Solution"),
        {"test": TEST},
    ),
    "a demonstration Main": (CODE + DEMO_MAIN, {"test": TEST}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RIGHT))
def test_right_java_programs_compile_beside_their_test(registry: Registry, name: str) -> None:
    code, reference = RIGHT[name]
    params = {"language": "java"}
    right = Item(
        verifier="code", response=f"```java\n{code}\n```", reference=reference, params=params
    )
    wrong_code = code.replace("Collections.reverse(y); ", "")
    wrong = Item(
        verifier="code", response=f"```java\n{wrong_code}\n```", reference=reference, params=params
    )
    passed, failed = score_items([right, wrong], registry)
    assert (passed.status, passed.reward) == (Status.OK, 1.0), passed.details
    assert (failed.status, failed.reward) == (Status.OK, 0.0), failed.details
    assert "compile_error" not in failed.details, failed.details


LIBRARY = {
    "java.lang": frozenset({"Math", "String", "Integer"}),
    "java.util": frozenset({"Arrays", "List", "Stack"}),
}
USES_ARRAYS = "public class Main { void main() { Arrays.asList(1); Math.max(1, 2); } }"


@pytest.mark.parametrize(
    ("code", "test", "setup", "hidden"),
    [
        ("import java.util.*;\nclass Arrays {}", USES_ARRAYS, "", ["java.util.Arrays"]),
        ("class Math {}", USES_ARRAYS, "", ["java.lang.Math"]),  # java.lang: always
        ("class Arrays {}", "import java.util.*;\n" + USES_ARRAYS, "", ["java.util.Arrays"]),
        ("class Arrays {}", USES_ARRAYS, "", []),  # java.util not imported on demand
        ("import java.util.*;\nclass Stack {}", USES_ARRAYS, "", []),  # the test never says Stack
        ("import java.util.*;\nclass S { class Arrays {} }", USES_ARRAYS, "", []),  # nested
        ("import java.util.*;\nclass Arrays {}", USES_ARRAYS, "class Arrays {}", []),  # setup's
        (
            'import java.util.*;\n// class Arrays {}\nString s = "class Arrays";',
            USES_ARRAYS,
            "",
            [],
        ),
    ],
)
def test_shadowing(code: str, test: str, setup: str, hidden: list[str]) -> None:
    assert shadowing(code, test, setup, LIBRARY) == hidden


@pytest.mark.slow
def test_a_program_never_hides_a_library_type_from_its_test(registry: Registry) -> None:
    """``corpus/java/shadow_arrays.java`` scored 1.0 while the test shared the program's
    file: its ``Arrays.asList`` copied the expected values into its result before the
    test compared them. Built apart, the test's ``Arrays`` is java.util's: a right answer
    beside a class of that name scores 1.0 (and the attack 0, in the corpus)."""
    test = TEST.replace("Solution s", "Stack<Integer> unused = new Stack<>(); Solution s")
    shadow = CODE + "\nclass Arrays { static <T> List<T> asList(T... a) { return null; } }"
    own = CODE + "\nclass Pair { int a, b; }"
    params = {"language": "java"}
    beside, kept = score_items(
        [
            Item(
                verifier="code",
                response=f"```java\n{c}\n```",
                reference={"test": test},
                params=params,
            )
            for c in (shadow, own)
        ],
        registry,
    )
    assert (beside.status, beside.reward) == (Status.OK, 1.0), beside.details
    assert (kept.status, kept.reward) == (Status.OK, 1.0), kept.details


STDIO_BODY = (
    "{ public static void main(String[] a) { java.util.Scanner in = new java.util.Scanner("
    "System.in); System.out.println(in.nextInt() + in.nextInt()); } }"
)
STDIO_RIGHT = {
    "public class Main": "public class Main " + STDIO_BODY,
    "public class Solution": "public class Solution " + STDIO_BODY,
    "a helper before the public class": "class Helper {}\npublic class Solution " + STDIO_BODY,
    "a package": "package com.example;\npublic class Main " + STDIO_BODY,
    "a nested public final class": "class Main {\n    public final class Inner {}\n"
    + STDIO_BODY.removeprefix("{"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STDIO_RIGHT))
def test_right_java_programs_run_on_stdin(registry: Registry, name: str) -> None:
    """A program's public class names its file and the class run; a package is dropped.
    Each scored 0 before (a compile error, or no class ``Main`` to run)."""
    reference = {"inputs": ["2 3\n", "10 -4\n"], "outputs": ["5\n", "6\n"]}
    code = STDIO_RIGHT[name]
    wrong_code = code.replace("in.nextInt() + in.nextInt()", "in.nextInt() - in.nextInt()")
    params = {"language": "java"}
    passed, failed = score_items(
        [
            Item(verifier="code", response=f"```java\n{c}\n```", reference=reference, params=params)
            for c in (code, wrong_code)
        ],
        registry,
    )
    assert (passed.status, passed.reward) == (Status.OK, 1.0), passed.details
    assert (failed.status, failed.reward) == (Status.OK, 0.0), failed.details


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("class Problem {\n    static long add(long x) {\n        return x;\n    }\n", "Problem"),
        ("class A {}\npublic class Problem {\n  // }\n  static int f() { return 1; }\n", "Problem"),
        ("class Problem { static long add(long x) { return x; } }", None),  # closed
        ("class Problem { static long add(long x) {", None),  # two still open
    ],
)
def test_open_class(code: str, name: str | None) -> None:
    assert open_class(code) == name


@pytest.mark.parametrize(
    ("code", "read"),
    [
        ("get\\u0044eclaredFields", "getDeclaredFields"),
        ("\\uuuu0041", "A"),  # any number of u's
        ("\\\\u0041", "\\\\u0041"),  # an escaped backslash: no escape follows
        ("\\\\\\u0041", "\\\\A"),  # an even run, then an escape
        ("\\u005cu0041", "\\u0041"),  # a backslash an escape made starts none (one pass)
        ("\\u00", "\\u00"),  # too short: javac's error, read as it is
    ],
)
def test_unicode_escapes_are_read_as_javac_reads_them(code: str, read: str) -> None:
    assert unescaped(code) == read
