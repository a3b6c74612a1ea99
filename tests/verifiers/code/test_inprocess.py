"""The completion proof of in-process assert tests (`verifiers.code.inprocess`): what says
the test ran to its end cannot be guessed, read from a name, or be a failure's status."""

from __future__ import annotations

import re

import pytest

from referee.sandbox import Sandbox, SandboxSettings
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code.inprocess import case, program, refusal
from referee.verifiers.code.proof import FAILURE_STATUSES, MARK, PROOF_STATUSES, Proof

TESTS = {
    "java": "public class Main {\n    public static void main(String[] a) {\n"
    "        assert new Solution().add(2, 3) == 5;\n    }\n}\n",
}
CODE = {
    "java": "class Solution { int add(int a, int b) { return a + b; } }",
}


def test_no_proof_status_is_a_failures_status() -> None:
    """With Rust's panic status (101) among the proofs, a Rust program whose assertion
    failed passed once in 117 runs: the hack corpus's plain wrong answer scored 1.0."""
    statuses = {Proof.drawn().status for _ in range(20 * len(PROOF_STATUSES))}
    assert statuses <= set(PROOF_STATUSES) and len(statuses) > len(PROOF_STATUSES) // 2
    assert not statuses & FAILURE_STATUSES


def test_the_status_alone_is_no_proof() -> None:
    """An exit status is ~7 bits: a wrong program exiting with a guessed one passed once
    in 116 runs. Only the status with the nonce's line, last on stdout, is the proof."""
    proof = Proof(42, 0x0123456789ABCDEF, 7)
    other = Proof(42, 0x0123456789ABCDEE, 7)
    assert proof.shown(42, "some output" + proof.marker)
    assert not proof.shown(42, "")
    assert not proof.shown(42, other.marker)
    assert not proof.shown(41, proof.marker)
    assert not proof.shown(42, proof.marker + "more\n")
    assert not proof.shown(None, proof.marker)


@pytest.mark.parametrize("language", sorted(TESTS))
def test_no_name_or_string_in_the_program_holds_the_proof(language: str) -> None:
    """The old launchers named the renamed test after the status (``RefereeTestMain42``):
    a Java program found the class with ``Class.forName`` and halted with its number.
    Names carry an independent label; the nonce is never a string in the source."""
    proof = Proof.drawn()
    source = "\n".join(
        [
            program(language, "", CODE[language], TESTS[language], proof).source,
            *program(language, "", CODE[language], TESTS[language], proof).files.values(),
        ]
    )
    literals = " ".join(re.findall(r'"(?:[^"\\\n]|\\.)*"', source))
    assert MARK in literals and f"{proof.nonce:x}"[-8:] not in literals
    assert proof.name in source
    if language == "java":  # Java's proof comes on stdin: no constant in a class file
        assert str(proof.nonce) not in source and f"halt({proof.status})" not in source
        assert case(language, proof).stdin.split() == [str(proof.status), f"{proof.nonce:016x}"]
    else:
        assert case(language, proof).stdin == ""


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(TESTS))
def test_a_right_program_shows_the_proof_and_a_wrong_one_does_not(language: str) -> None:
    """Through the real toolchains: the right program ends with the marker and status;
    the same program with its answer off by one does neither."""
    proof = Proof.drawn()
    right = program(language, "", CODE[language], TESTS[language], proof)
    wrong_code = CODE[language].replace("a + b", "a + b + 1")
    wrong = program(language, "", wrong_code, TESTS[language], proof)
    with Sandbox(SandboxSettings()) as sandbox:
        [passed] = sandbox.run(right, [case(language, proof)]).cases
        [failed] = sandbox.run(wrong, [case(language, proof)]).cases
    assert proof.shown(passed.exit_code, passed.stdout), passed
    assert passed.stdout.endswith(f"\n{MARK}{proof.nonce:016x}\n")
    assert not proof.shown(failed.exit_code, failed.stdout), failed
    assert MARK not in failed.stdout


def test_java_runs_as_a_test_host() -> None:
    """Java's launcher asks for the runtime's test-host options
    (`sandbox.Program.hosts_test`): a test called again by reflection cannot have its
    AssertionError caught."""
    proof = Proof.drawn()
    assert program("java", "", CODE["java"], TESTS["java"], proof).hosts_test


@pytest.mark.parametrize(
    "declaration",
    [
        "public static void main(String[] args) {",
        "static public void main(final String... args) throws Exception, Error {",
        "public static void main(String args[])\n    throws java.io.IOException\n{",
    ],
)
def test_java_gates_the_tests_main_however_it_is_declared(declaration: str) -> None:
    proof = Proof.drawn()
    test = f"public class Main {{\n  {declaration}\n    assert true;\n  }}\n}}\n"
    source = program("java", "", CODE["java"], test, proof).source
    assert f"{declaration} RefereeGate{proof.name}.enter();" in source
    assert f"final class RefereeGate{proof.name} {{" in source


def test_a_java_test_without_a_main_method_is_the_references_fault() -> None:
    test = "public class Main {\n  static void run() { assert true; }\n}\n"
    with pytest.raises(ItemInvalid, match=r"reference\.test: `Main` has no `main`"):
        program("java", "", CODE["java"], test, Proof.drawn())


REFUSALS = [
    # (language, code, flag or None)
    # Java's reflection reaches the test's class and its static fields
    ("java", "class S { Object f() { return StackWalker.getInstance(); } }", "unsafe_code"),
    (
        "java",
        'class S { Object f() throws Exception { return Class.forName("M"); } }',
        "unsafe_code",
    ),
    (
        "java",
        "class S { int n(Class<?> k) { return k.getDeclaredFields().length; } }",
        "unsafe_code",
    ),
    ("java", "class S { int n(Class<?> k) { return k.get\\u0046ields().length; } }", "unsafe_code"),
    ("java", 'class S { String s = "getDeclaredFields"; } // forName', None),
    ("java", "class S { String f() { return getClass().getSimpleName(); } }", None),
]


@pytest.mark.parametrize(("language", "code", "flag"), REFUSALS)
def test_programs_that_could_reach_the_test_are_not_run(
    language: str, code: str, flag: str | None
) -> None:
    """Java's reflection reaches the test's class and its static fields (the corpus's
    ``reflect_fields.java`` scored 1.0 so): refused, flagged ``unsafe_code``."""
    refused = refusal(language, code)
    assert (refused[0] if refused else None) == flag, refused


JAVA_CLASSES_TEST = """
public class Main {
    static class Derived extends Base { int twice(int x) { return 2 * base(x); } }
    static class Base { int base(int x) { return x; } }
    interface Check { boolean ok(int got); }
    public static void main(String[] args) {
        Solution s = new Solution();
        Check five = new Check() { public boolean ok(int got) { return got == 5; } };
        java.util.function.IntUnaryOperator twice = x -> new Derived().twice(x);
        if (!five.ok(s.add(2, 3))) throw new AssertionError("add");
        if (twice.applyAsInt(s.add(1, 1)) != 4) throw new AssertionError("twice");
        if (s.shape().area() != 6) throw new AssertionError("area");
    }
}
"""
JAVA_CLASSES_CODE = """
class Solution {
    int add(int a, int b) { return a + b; }
    Shape shape() { return new Rectangle(2, 3); }
}
class Rectangle extends Polygon implements Shape {
    Rectangle(int w, int h) { super(w, h); }
    public int area() { return sides[0] * sides[1]; }
}
abstract class Polygon { final int[] sides; Polygon(int... sides) { this.sides = sides; } }
interface Shape { int area(); }
"""


@pytest.mark.slow
def test_java_classes_defined_from_stdin_keep_their_language() -> None:
    """The launcher defines every class from stdin (none is on the class path): nested,
    anonymous and lambda classes of the test, and the program's classes declared before
    their superclasses and interfaces, all still work; a wrong answer still fails."""
    proof = Proof.drawn()
    right = program("java", "", JAVA_CLASSES_CODE, JAVA_CLASSES_TEST, proof)
    wrong = program(
        "java", "", JAVA_CLASSES_CODE.replace("(2, 3)", "(3, 3)"), JAVA_CLASSES_TEST, proof
    )
    with Sandbox(SandboxSettings()) as sandbox:
        [passed] = sandbox.run(right, [case("java", proof)]).cases
        [failed] = sandbox.run(wrong, [case("java", proof)]).cases
    assert proof.shown(passed.exit_code, passed.stdout), passed
    assert not proof.shown(failed.exit_code, failed.stdout), failed
    assert "Saw java.lang.AssertionError" in failed.stdout, failed  # the test's own failure


# MultiPL-E's shape: the prompt opens a function (and for Java a class) that the
# completion never closes; the test starts by closing it.
MULTIPL_E = {
    "java": (
        "import java.util.*;\nimport java.io.*;\nclass Problem {\n"
        "    public static long add(long x, long y) {\n        return x + y;\n",
        "    }\n    public static void main(String[] args) {\n"
        "    assert(add((0l), (1l)) == (1l));\n    assert(add((5l), (7l)) == (12l));\n    }\n\n}\n",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(MULTIPL_E))
def test_multipl_e_tests_close_what_the_prompt_opened(language: str) -> None:
    """Once a compile error for every answer, right or wrong (our launcher landed
    inside the open function; Java: no `class Main`)."""
    proof = Proof.drawn()
    code, test = MULTIPL_E[language]
    right = program(language, "", code, test, proof)
    wrong_code = code.replace("x + y", "x - y")
    wrong = program(language, "", wrong_code, test, proof)
    with Sandbox(SandboxSettings()) as sandbox:
        [passed] = sandbox.run(right, [case(language, proof)]).cases
        [failed] = sandbox.run(wrong, [case(language, proof)]).cases
    assert proof.shown(passed.exit_code, passed.stdout), passed
    assert not proof.shown(failed.exit_code, failed.stdout), failed


def test_a_java_test_inside_the_programs_class_is_gated() -> None:
    """Called again by reflection, it ends the VM, as a test's `Main.main` does."""
    code, test = MULTIPL_E["java"]
    proof = Proof.drawn()
    source = program("java", "", code, test, proof).source
    entry = f"refereeTestMain{proof.name}"
    assert f"static void {entry}(String[] args) {{ RefereeGate{proof.name}.enter();" in source
    assert f'forName("Problem"), "{entry}"' in source
    with pytest.raises(ItemInvalid, match="MultiPL-E"):
        program("java", "", "class Problem { }", "static void helper() {}", proof)


# (language, test, what a right program's test keeps, what it no longer names)
HIDDEN = [
    (
        "java",
        "class Cases { static int[] ALL = {1}; }\npublic class Main {\n"
        "  public static void main(String[] a) { int n = Cases.ALL.length; }\n}\n",
        [".ALL.length"],
        ["class Cases ", " Cases.ALL"],
    ),
]


@pytest.mark.parametrize(("language", "test", "kept", "hidden"), HIDDEN)
def test_the_tests_own_names_are_hidden_from_the_program(
    language: str, test: str, kept: list[str], hidden: list[str]
) -> None:
    """Appended to the program, the names a test declares at its top level were the
    program's to name: a table-driven test's cases were read and returned
    (corpus: ``test_table.rs``, ``helper_class.java``). They take a
    random suffix; members, paths and literals keep theirs."""
    proof = Proof.drawn()
    source = program(language, "", "", test, proof).source
    assert all(text in source for text in kept), source
    assert not any(text in source for text in hidden), source
    assert f"_referee{proof.name}" in source
