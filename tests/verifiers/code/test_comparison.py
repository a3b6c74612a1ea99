from __future__ import annotations

import pytest

from referee.verifiers.code.comparison import Comparator, Tolerance, compare, compare_values

TOL = Tolerance(abs_tol=1e-6, rel_tol=1e-6)

CASES: list[tuple[str, str, Comparator, bool]] = [
    # (actual, expected, comparator, passes)
    ("1 2\n", "1 2\n", "exact", True),
    ("1 2", "1 2\n", "exact", False),
    ("1 2 \n", "1 2\n", "exact", False),
    ("1\r\n", "1\n", "exact", False),
    ("1 2 \n", "1 2\n", "lines", True),  # trailing space
    ("  1   2\n", "1 2\n", "lines", True),  # inner runs collapse
    ("1\n2", "1\n2\n", "lines", True),  # final newline is a terminator
    ("1\r\n2\r\n", "1\n2\n", "lines", True),
    ("1\n", "1\n2\n", "lines", False),  # missing trailing line
    ("1\n2\n3\n", "1\n2\n", "lines", False),  # extra trailing line
    ("1\n2\n\n", "1\n2\n", "lines", True),  # blank lines at the end: trailing whitespace
    ("1\n2\n \n\t\n", "1\n2", "lines", True),
    ("1\n2\n", "1\n2\n\n", "lines", True),
    ("\n1\n2\n", "1\n2\n", "lines", False),  # a blank line before others counts
    ("1\n\n2\n", "1\n2\n", "lines", False),
    ("\n\n", "", "lines", True),
    ("\n\n", "0\n", "lines", False),
    ("a\n\n", "a\n", "unordered_lines", True),
    ("A\n\n", "a\n", "casefold", True),
    ("", "", "lines", True),
    ("", "0\n", "lines", False),
    ("YES\n", "yes\n", "lines", False),
    ("YES\n", "yes\n", "casefold", True),
    ("Straße\n", "STRASSE\n", "casefold", True),
    ("b\na\n", "a\nb\n", "unordered_lines", True),
    ("a\na\n", "a\nb\n", "unordered_lines", False),  # multiplicity kept
    ("a\n", "a\na\n", "unordered_lines", False),
    ("0.3333333\n", "0.333333333\n", "numeric", True),
    ("0.33\n", "0.333333333\n", "numeric", False),
    ("1e9\n", "1000000001\n", "numeric", True),  # relative tolerance
    ("1.5 abc\n", "1.5000000 abc\n", "numeric", True),
    ("1.5 abd\n", "1.5 abc\n", "numeric", False),
    ("1.5\n2\n", "1.5 2\n", "numeric", True),  # tokens, not lines
    ("1.5\n", "1.5 2\n", "numeric", False),
    ("nan\n", "nan\n", "numeric", True),  # equal strings
    ("inf\n", "1e308\n", "numeric", False),
]


@pytest.mark.parametrize(("actual", "expected", "how", "passes"), CASES)
def test_compare(actual: str, expected: str, how: Comparator, passes: bool) -> None:
    verdict = compare(actual, expected, how, TOL)
    assert verdict.passed is passes
    assert (verdict.diff is None) is passes


@pytest.mark.parametrize(
    ("actual", "expected", "diff"),
    [
        ("1\n3\n", "1\n2\n", "line 2: expected '2', got '3'"),
        ("1\n", "1\n2\n", "line 2: expected '2', got EOF"),
        ("1\n2\n", "1\n", "line 2: expected EOF, got '2'"),
    ],
)
def test_first_differing_line(actual: str, expected: str, diff: str) -> None:
    assert compare(actual, expected, "lines", TOL).diff == diff


def test_diff_is_truncated() -> None:
    diff = compare("x" * 10_000, "y", "lines", TOL).diff
    assert diff is not None
    assert len(diff) < 400


@pytest.mark.parametrize(
    ("actual", "expected", "equal"),
    [
        ([1, 2], [1, 2], True),
        ([1, 2], [2, 1], False),
        (0.1 + 0.2, 0.3, True),
        (1, 1.0, True),
        (True, 1, False),
        (1, True, False),
        (None, None, True),
        ({"a": [1.0]}, {"a": [1]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ("1", 1, False),
        ([[1, 2]], [[1, 2, 3]], False),
    ],
)
def test_compare_values(actual: object, expected: object, equal: bool) -> None:
    assert compare_values(actual, expected, TOL) is equal
