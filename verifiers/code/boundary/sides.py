"""The two programs of a split test (`verifiers.code.harness`), as its builders give them."""

from __future__ import annotations

from typing import Literal, NamedTuple

from referee.sandbox import Program


class Sides(NamedTuple):
    """The program's side, the test's, the lines of the test's main source that hold the
    test's own text (`diagnostics.reference_parse_error` reads a failed build by them),
    and where the program's side holds the reference's setup (`SetupPlace`)."""

    program: Program
    tester: Program
    test_lines: range
    setup_place: SetupPlace | None = None


class SetupPlace(NamedTuple):
    """The lines of a side's build that hold the reference's setup, after nothing of the
    program's that may not parse, in ``file`` (the main source: None): a lexer's or
    parser's error there is the setup's (`diagnostics.setup_parse_error`). The program's
    side (``side``) unless the setup follows the program there (Rust: the program's inner
    attributes lead the file); then the test's, where the setup follows only our code and
    the program's well-formed ``use`` lines."""

    lines: range
    file: str | None = None
    side: Literal["program", "tester"] = "program"


def lines_after(prefix: str, text: str) -> range:
    """The (1-based) lines of ``text`` in a file that holds ``prefix`` and then it."""
    first = prefix.count("\n") + 1
    return range(first, first + text.count("\n") + 1)
