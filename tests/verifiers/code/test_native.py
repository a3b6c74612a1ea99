"""What of a C or C++ program could change its test: the macros it defines, undefined
before the test (`native.defined`, read as the preprocessor reads them, so no spelling
hides one), and the library functions it defines anew (`native.overridden`)."""

from __future__ import annotations

import time

import pytest

from referee.verifiers.code import go_source, identifiers
from referee.verifiers.code.native import build_c, defined, overridden
from referee.verifiers.code.proof import Proof


@pytest.mark.parametrize(
    ("code", "names"),
    [
        ("#define fabs(x) 0", ["fabs"]),
        ("%: def\\\nine fabs(x) 0", ["fabs"]),  # a digraph, a line continuation
        ("??=define H 1", ["H"]),  # a trigraph
        ("# /* c */ define  A 1\n#  define B", ["A", "B"]),
        ("#/*\n*/define C 1", ["C"]),  # a comment is one space, newlines and all
        ('const char *s = R"a(")/*")a";\n#define E 0\n// */', ["E"]),  # a raw string
        ('const char *s = "\\n#define D";', []),
        ("// #define F\n/* #define G */", []),
        ("int x; # define I", []),  # not at the start of a line: no directive
    ],
)
def test_defined(code: str, names: list[str]) -> None:
    assert defined(code) == names


def test_the_programs_macros_are_undefined_before_the_test() -> None:
    source = build_c("", "#define fabs(x) 0\n", "int main() { return 7; }", Proof.drawn()).source
    assert source.index("#define fabs") < source.index("#undef fabs") < source.index("return 7;")


@pytest.mark.parametrize(
    ("code", "names"),
    [
        ("int strcmp(const char *a, const char *b) { return 0; }", ["strcmp"]),
        (
            'extern "C" { int memcmp(const void *a, const void *b, size_t n) noexcept '
            "{ return 0; } }",
            ["memcmp"],
        ),
        (
            'extern "C" int memcmp(const void *a, const void *b, size_t n) throw() { return 0; }',
            ["memcmp"],
        ),
        ("namespace x { double fabs(double x) { return 0; } }", ["fabs"]),
        ("static inline int abs(int x) { return x < 0 ? -x : x; }", ["abs"]),
        ("int *strchr(const char *s, int c) { return 0; }", ["strchr"]),
        ("long long llabs(long long v) __attribute__((const)) { return v; }", ["llabs"]),
        # C++ overloads the test's calls may prefer: any parameters count. (HumanEval-X's
        # CPP/23 asks for `int strlen(string)`, which its tests never call: they pass
        # string literals, for which the library's strlen is the better match.)
        ("int strlen(string str) { return str.size(); }", ["strlen"]),
        ("struct Half {};\ndouble fabs(Half h) { return 0; }", ["fabs"]),
        ("bool issame(vector<int> a, initializer_list<int> b) { return true; }", ["issame"]),
        ("template <class A, class B> bool issame(A a, B b) { return true; }", ["issame"]),
        ("std::enable_if_t<true, bool> issame(V a, L b) { return true; }", ["issame"]),
        ("decltype(true) issame(V a, L b) { return true; }", ["issame"]),
        # made by macros, which no scan of the text sees through
        ("#define F fabs\ndouble F(Half h) { return 0; }", ["macro F"]),
        ("#define CAT(a, b) a##b\ndouble CAT(fa, bs)(Half h) { return 0; }", ["macro CAT"]),
        ("#define DEF(n) bool n(V a, L b) { return true; }\nDEF(issame)", ["macro DEF"]),
        ("#define D(x) x\nD(double) D(fabs)(Half h) { return 0; }", ["macro D"]),
        # macros used inside functions make no definitions
        ("#define FOR(i, n) for (int i = 0; i < n; i++)\nint f() { FOR(i, 3) {} return 0; }", []),
        ("#define ll long long\nll add(ll a, ll b) { return a + b; }", []),
        # not definitions of the library's or the test's functions
        ("int f() { if (strcmp(a, b)) { return 1; } return 0; }", []),  # a call
        ("void f() { while (isdigit(c)) { c++; } }", []),
        ("struct V { double abs(double x) { return x; } };", []),  # a member
        ("int x = abs(y); struct S { int a; };", []),
        ("int add(int a, int b) { return a + b; }", []),
        ('const char *s = "int strcmp(const char *a) {";', []),
    ],
)
def test_overridden(code: str, names: list[str]) -> None:
    test = "bool issame(vector<int> a, vector<int> b) { return a == b; }\nint main() {}"
    assert overridden(code, test) == names


def test_a_test_defines_only_its_own_functions() -> None:
    assert (
        overridden("int main() { return 0; }\nint add(int a) { return a; }", "int main() {}") == []
    )


def test_identifiers_renamed_outside_literals_and_package_clauses() -> None:
    code = 'package main\n// main\nfunc main() { s := "main"; main() }'
    shadow = go_source.masked(code)
    assert identifiers.renamed(code, shadow, "main", "m2") == (
        'package main\n// main\nfunc m2() { s := "main"; m2() }'
    )
    assert not identifiers.calls_or_defines(go_source.masked('s := "main()"'), "main")


def test_many_macros_cost_one_pass() -> None:
    """Each function-like macro once rescanned the whole program for its uses."""
    macros = "".join(f"#define M{i}(x) x\n" for i in range(5_000))
    start = time.perf_counter()
    overridden(macros + "int f() { return 0; }\n" * 20_000)
    assert time.perf_counter() - start < 5.0
