"""Assert tests for Java: the test is appended to the program and runs in its process,
so this module hardens that run as far as one process allows.

- **Completion proof** (`verifiers.code.proof`): the test's ``main`` is renamed (to a
  random name that says nothing of the proof) and called from a ``main`` of ours that,
  once it returned and no assertion failed, prints a line holding a random 64-bit nonce
  and exits with a random status; any other ending, an early ``exit(0)`` or a guessed
  status included, is not a pass. Java's launcher reads them from standard input,
  before any of the program's code runs, into locals no reflection reaches.
- **No second process** (``Limits.spawn``): a fork could try guesses against the test.
- **Assertions the program cannot switch off**: Java runs with ``-ea`` and assertion
  failures made fatal
  (``Program.hosts_test``), so a test called again by reflection cannot be caught, and
  its test's ``main`` ends the VM when it is entered a second time, for tests that fail
  by other exceptions.
- **Nothing readable holds the test** (``Program.hosts_test``, `sandbox.runner`): the
  binary is execute-only, the run has no ``/proc``, and Java's class files come to its
  launcher on stdin instead of the class path.
- **Refusals** (`refusal`): a program that defines equality or comparison for its own
  types (``equals``) scores 0 with flag ``custom_eq``, since the appended test would
  compare through it; one using reflection (with which it could find the test's class
  and read its fields) scores 0 with flag ``unsafe_code``; one standing in for a library
  type its test would use (an ``Arrays`` of its own) scores 0 with flag
  ``shadows_library``.
- **The test's own names** (`_hidden`): the test's classes besides ``Main`` take a
  random suffix, so the program cannot name a table-driven test's cases.

What one process cannot promise is stated in docs/security.md. Results carry the flag
``in_process_tests``. Python, JavaScript, TypeScript, bash, C, C++, Go and Rust tests
run in a second sandbox instead (`verifiers.code.boundary`) and are not affected.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from referee.sandbox import Case, Program, toolchains
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import identifiers, java_source
from referee.verifiers.code.proof import MARK, Proof

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _strip_comments(code: str) -> str:
    return _COMMENTS.sub(" ", code)


@dataclass(frozen=True)
class _Rules:
    build: Callable[[str, str, str, Proof], Program]
    custom_eq: re.Pattern[str] | None
    unsafe: re.Pattern[str] | None = None
    """The test's classes and members reached by reflection, with which a program could
    read the test it is part of, or call it and recover from its failures."""
    read: Callable[[str], str] = _strip_comments
    """The program as the screens above read it (Java: its Unicode escapes read, its
    comments and literals blanked)."""
    shadows: Callable[[str, str, str], list[str]] | None = None
    """The library types the program (code, test, setup) would stand in for, so that the
    test compares through the program's (types under a library type's name)."""


def check_language(language: str, linked: Iterable[str] = ("python3",)) -> None:
    """Raise `ItemInvalid` when appended tests are not supported for ``language``; the
    message names these languages and the ``linked`` ones (tests in a second sandbox)."""
    if language not in _LANGUAGES:
        supported = ", ".join(sorted({*linked, *_LANGUAGES}))
        raise ItemInvalid(
            "invalid_params",
            f"params.language: assert-style tests run for {supported}; "
            f"for {language} give stdin/stdout tests",
        )


def program(language: str, setup: str, code: str, test: str, proof: Proof) -> Program:
    """The program that runs ``test`` after ``code`` and shows ``proof`` once it
    completed. Raises `ItemInvalid` for an unsupported language.

    A test that begins by closing braces finishes the code first (`finished`)."""
    check_language(language)
    code, test = finished(code, test)
    return _LANGUAGES[language].build(setup, code, test, proof)


def finished(code: str, test: str) -> tuple[str, str]:
    """``code`` and ``test`` with the braces ``test`` begins by closing moved to the end
    of ``code``: MultiPL-E's prompts open a function (for Java a class too) that the
    completion never closes, and its tests start with the ``}``."""
    closing = _CLOSING.match(test)
    if closing is None:
        return code, test
    return f"{code}\n{closing.group().strip()}\n", test[closing.end() :]


_CLOSING = re.compile(r"\A\s*\}(?:\s*\})*")


def case(language: str, proof: Proof) -> Case:
    """The one run of an in-process test: Java's launcher reads the proof from stdin."""
    return Case(stdin=f"{proof.status} {proof.nonce:016x}\n" if language == "java" else "")


def refusal(language: str, code: str, test: str = "", setup: str = "") -> tuple[str, str] | None:
    """Why ``code`` is not run with ``test`` in its process, as (flag, message), or None:
    it defines equality for its own types (the test would compare through it), uses
    unsafe code (it could call the test and recover from its failures), or stands in
    for a library function or type the test (or the library) would call (`_Rules`)."""
    rules = _LANGUAGES.get(language)
    if rules is None:
        return None
    hidden = rules.shadows(code, test, setup) if rules.shadows else []
    if hidden:
        return "shadows_library", (
            f"the program declares its own {', '.join(hidden)}, which the test appended "
            "to it (or the library it calls) would use instead of the language's; it is "
            "not run"
        )
    bare = rules.read(code)
    if rules.custom_eq and rules.custom_eq.search(bare):
        return "custom_eq", (
            "the program defines equality for its own types, through which the test "
            "appended to it would compare; it is not run"
        )
    if rules.unsafe and rules.unsafe.search(bare):
        return "unsafe_code", (
            "the program uses unsafe code, reflection or a file read as it is compiled, "
            "with which it could reach the test appended to it; it is not run"
        )
    return None


def _hidden(test: str, shadow: str, declared: set[str], proof: Proof) -> str:
    """``test`` with the names it ``declared`` at its top level given a random suffix:
    appended to the program, they were the program's to name, and a program returned the
    expected values of its test's table (``helper_class.java`` scored 1.0, as Go's
    ``test_table.go`` and Rust's ``test_table.rs`` did before their tests ran apart)."""
    return identifiers.suffixed(test, shadow, declared, f"_referee{proof.name}")


# --- Java ------------------------------------------------------------------------------------

PROGRAM_MAIN = "RefereeProgramMain"
"""What a program's own class ``Main`` is renamed (the launcher is ``Main``)."""
_JAVA_MAIN_CLASS = re.compile(r"\b(public\s+)?(final\s+)?class\s+Main\b")
_JAVA_MAIN_METHOD = re.compile(r"\bvoid\s+main\s*\([^)]*\)\s*(?:throws\s+[\w.\s,]+)?\{")


def _java_entry(code: str, test: str, label: str, gate: str) -> tuple[str, str, str]:
    """The test ready to append, with the class and the static method the launcher
    calls: the test's ``Main`` renamed (`_java_gated`), or, for a test that goes on
    inside the program's open class (MultiPL-E), its ``main`` renamed and gated."""
    test_class = f"RefereeTest{label}"
    if _JAVA_MAIN_CLASS.search(test) is not None:
        return _java_gated(test, test_class, gate), test_class, "main"
    host, method = java_source.open_class(code), _JAVA_MAIN_METHOD.search(test)
    if host is None or method is None:
        raise ItemInvalid(
            "invalid_reference",
            "reference.test: no `class Main` found, nor a `main` method inside a class the "
            "program leaves open (MultiPL-E)",
        )
    entry = f"refereeTestMain{label}"
    header = re.sub(r"\bmain\b", entry, method.group(), count=1)
    gated = f"{test[: method.start()]}{header} {gate}.enter();{test[method.end() :]}"
    return gated, host, entry


def _java_gated(test: str, test_class: str, gate: str) -> str:
    """``test`` with its ``Main`` renamed ``test_class`` and the first thing its ``main``
    does a call to ``gate``, which ends the VM on a second entry. A test failing by an
    exception other than ``AssertionError`` (not fatal) could otherwise be called again
    by reflection, with guesses, and its failures caught (corpus:
    java/reflect_exception.java)."""
    declared = _JAVA_MAIN_CLASS.search(test)
    if declared is None:
        raise ItemInvalid("invalid_reference", "reference.test: no `class Main` found")
    renamed = f"{test[: declared.start()]}class {test_class}{test[declared.end() :]}"
    method = _JAVA_MAIN_METHOD.search(renamed, declared.start())
    if method is None:
        raise ItemInvalid("invalid_reference", "reference.test: `Main` has no `main` method")
    return f"{renamed[: method.end()]} {gate}.enter();{renamed[method.end() :]}"


def _java_gate(gate: str) -> str:
    """A class whose ``enter`` ends the VM (status 1, never a proof) when called a second
    time. A latch only counts down: no reflection on Java SE's modules resets it (nor
    can the program swap the static final field; ``sun.misc.Unsafe``, which could, is
    outside the modules an in-process test runs with)."""
    return (
        f"\nfinal class {gate} {{\n"
        "    private static final java.util.concurrent.CountDownLatch OPEN =\n"
        "        new java.util.concurrent.CountDownLatch(1);\n"
        "    static synchronized void enter() {\n"
        "        if (OPEN.getCount() == 0) java.lang.Runtime.getRuntime().halt(1);\n"
        "        OPEN.countDown();\n"
        "    }\n}\n"
    )


def _java_shadowing(code: str, test: str, setup: str) -> list[str]:
    inside = _JAVA_MAIN_CLASS.search(test) is None  # MultiPL-E's: in the program's class
    library = toolchains.java_library_types()
    # read as javac reads it: `class \u0041rrays` is a class Arrays
    return java_source.shadowing(java_source.unescaped(code), test, setup, library, inside)


_JAVA_REFLECTION = re.compile(
    r"\b(?:getDeclaredFields?|getFields?|getDeclaredMethods?|getMethods?"
    r"|getDeclaredConstructors?|getConstructors?|getRecordComponents|getDeclaredClasses"
    r"|getClasses|getEnclosingClass|getEnclosingMethod|getEnclosingConstructor"
    r"|getDeclaringClass|getNestHost|getNestMembers|getPermittedSubclasses|forName"
    r"|StackWalker|MethodHandles|VarHandle|getClassLoader|getSystemClassLoader"
    r"|getPlatformClassLoader|ClassLoader|loadClass|ModuleLayer)\b"
)
"""The ways a Java program reaches classes or members it does not name: the test's
class from the stack (``StackWalker``, ``forName``), then its static fields
(``getDeclaredFields``): a table-driven test's expected values were read so and
returned (``reflect_fields.java`` scored 1.0)."""


def _java(setup: str, code: str, test: str, proof: Proof) -> Program:
    gate = f"RefereeGate{proof.name}"
    (setup, above), (code, mine), (test, theirs) = map(java_source.hoisted, (setup, code, test))
    imports = "\n".join(dict.fromkeys([*above, *mine, *theirs]))
    code = java_source.main_renamed(code, PROGRAM_MAIN)
    declared = set(java_source.top_level_types(test)) - {"Main"}
    test = _hidden(test, java_source.masked(test), declared, proof)
    entered, test_class, entry = _java_entry(code, test, proof.name, gate)
    renamed = java_source.unpublished(entered)
    setup, code = java_source.unpublished(setup), java_source.unpublished(code)
    # Every class but this launcher comes on stdin (`Language.test_host_withheld`): the
    # test's class files hold its expected values as constants and bytecode, which a
    # program read from the class path (corpus: java/class_file.java). They are defined
    # in this class's own package and loader, so the test and the program reach each
    # other's package-private members as when loaded from disk; a class whose superclass
    # is not defined yet waits for the next round.
    # The proof follows, read before the test loads any class of the program: no
    # constant in a class file holds it. It is read unbuffered into an array parsed into
    # primitive locals and zeroed: a heap dump (a standard management API) found the
    # text of a buffered read and passed (corpus: java/heap_dump.java).
    # Output goes to the real descriptor, whatever System.out became.
    launcher = (
        "\nclass Main {\n"
        "    static int size(java.io.InputStream in) throws java.io.IOException {\n"
        "        int size = 0;\n"
        "        for (int got; (got = in.read()) >= '0'; ) size = size * 10 + got - '0';\n"
        "        return size;\n"
        "    }\n"
        "    static void define(java.io.InputStream in) throws java.lang.Throwable {\n"
        "        java.lang.invoke.MethodHandles.Lookup here =\n"
        "            java.lang.invoke.MethodHandles.lookup();\n"
        "        java.util.List<byte[]> waiting = new java.util.ArrayList<>();\n"
        "        for (int size; (size = size(in)) > 0; ) {\n"
        "            byte[] bytes = new byte[size];\n"
        "            for (int at = 0, got; at < size; at += got)\n"
        "                if ((got = in.read(bytes, at, size - at)) < 0)\n"
        "                    throw new java.io.EOFException();\n"
        "            waiting.add(bytes);\n"
        "        }\n"
        "        for (int before = -1; !waiting.isEmpty() && waiting.size() != before; ) {\n"
        "            before = waiting.size();\n"
        "            for (java.util.Iterator<byte[]> it = waiting.iterator(); it.hasNext(); ) {\n"
        "                byte[] bytes = it.next();\n"
        "                try { here.defineClass(bytes); }\n"
        "                catch (java.lang.NoClassDefFoundError e) { continue; }\n"
        "                java.util.Arrays.fill(bytes, (byte) 0);\n"
        "                it.remove();\n"
        "            }\n"
        "        }\n"
        "        if (!waiting.isEmpty())\n"
        '            throw new java.lang.NoClassDefFoundError("a superclass is missing");\n'
        "    }\n"
        "    public static void main(java.lang.String[] args) throws java.lang.Throwable {\n"
        "        java.io.FileInputStream in =\n"
        "            new java.io.FileInputStream(java.io.FileDescriptor.in);\n"
        "        define(in);\n"
        "        byte[] given = new byte[64];\n"
        "        int size = 0, got, status = 0, at = 0;\n"
        "        long nonce = 0;\n"
        "        while (size < given.length\n"
        "               && (got = in.read(given, size, given.length - size)) > 0)\n"
        "            size += got;\n"
        "        for (; at < size && given[at] != ' '; at++)\n"
        "            status = status * 10 + given[at] - '0';\n"
        "        for (at++; at < size && given[at] != '\\n'; at++)\n"
        "            nonce = (nonce << 4) | java.lang.Character.digit(given[at], 16);\n"
        "        java.util.Arrays.fill(given, (byte) 0);\n"
        "        java.lang.invoke.MethodHandles.lookup().findStatic(\n"
        f'            java.lang.Class.forName("{test_class}"), "{entry}",\n'
        "            java.lang.invoke.MethodType.methodType(void.class, java.lang.String[].class)\n"
        "        ).invokeExact(args);\n"
        "        java.lang.System.out.flush();\n        java.lang.System.err.flush();\n"
        "        java.io.FileOutputStream out =\n"
        "            new java.io.FileOutputStream(java.io.FileDescriptor.out);\n"
        f'        java.lang.String line = java.lang.String.format("\\n{MARK}%016x\\n", nonce);\n'
        "        out.write(line.getBytes());\n"
        "        out.flush();\n"
        "        java.lang.Runtime.getRuntime().halt(status);\n"
        "    }\n}\n"
    )
    return Program(
        language="java",
        source=f"{imports}\n{setup}\n{code}\n{renamed}\n{_java_gate(gate)}{launcher}",
        hosts_test=True,
        keep_build=False,  # the renamed test carries this run's label
    )


_LANGUAGES: dict[str, _Rules] = {
    "java": _Rules(
        _java,
        re.compile(r"\b(?:boolean\s+equals|int\s+compareTo|int\s+hashCode)\s*\("),
        _JAVA_REFLECTION,
        read=lambda code: java_source.masked(java_source.unescaped(code)),
        shadows=_java_shadowing,
    ),
}
