"""What of a C or C++ program could change the code of ours after it: the macros it
defines, undefined first (`native.defined`, read as the preprocessor reads them, so no
spelling hides one)."""

from __future__ import annotations

import pytest

from referee.verifiers.code import go_source, identifiers
from referee.verifiers.code.boundary import c
from referee.verifiers.code.native import defined


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


def test_the_programs_macros_are_undefined_before_code_of_ours_follows() -> None:
    source = c.program("#define fabs(x) 0\n", "", []).source
    assert source.index("#define fabs") < source.index("#undef fabs") < source.index("int main(")


def test_identifiers_renamed_outside_literals_and_package_clauses() -> None:
    code = 'package main\n// main\nfunc main() { s := "main"; main() }'
    shadow = go_source.masked(code)
    assert identifiers.renamed(code, shadow, "main", "m2") == (
        'package main\n// main\nfunc m2() { s := "main"; m2() }'
    )
    assert not identifiers.calls_or_defines(go_source.masked('s := "main()"'), "main")
