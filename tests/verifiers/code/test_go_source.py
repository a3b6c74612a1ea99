"""A Go program's package-level names (`verifiers.code.go_source`), read for the test
appended to it: a program declaring ``panic`` made its test's failures no-ops."""

from __future__ import annotations

import time

import pytest

from referee.verifiers.code.go_source import as_command, package_names


@pytest.mark.parametrize(
    ("code", "names"),
    [
        (
            "package main\nfunc panic(v interface{}) {}\nfunc add(a, b int) int { return 0 }",
            ["panic", "add"],
        ),
        ("func (s *S) len() int { return 0 }\nfunc max[T int](a, b T) T { return a }", ["max"]),
        ("var len = 3\nconst true = false\ntype string int", ["len", "true", "string"]),
        (
            "var (\n\tx, copy int\n\ty = 2\n)\nconst (\n\ta = iota\n\tb\n)",
            ["x", "copy", "y", "a", "b"],
        ),
        ("type (\n\tT struct {\n\t\tlen int\n\t}\n\tU int\n)", ["T", "U"]),  # not fields
        ("func f() { var panic = 1; _ = panic }", ["f"]),  # a local shadows nothing of the test
        ('// func panic()\nvar s = "func len()"', ["s"]),
    ],
)
def test_package_names(code: str, names: list[str]) -> None:
    assert package_names(code) == names


@pytest.mark.parametrize(
    ("code", "command"),
    [
        ("package main\nfunc main() {}", "package main\nfunc main() {}"),
        ('import "fmt"\nfunc main() {}', 'package main\nimport "fmt"\nfunc main() {}'),
        ("// note\npackage solution\nfunc main() {}", "// note\npackage main\nfunc main() {}"),
        ('func main() { s := "package x" }', 'package main\nfunc main() { s := "package x" }'),
    ],
)
def test_as_command(code: str, command: str) -> None:
    assert as_command(code) == command


def test_nested_groups_cost_one_pass() -> None:
    """Each `var (` once rescanned to its group's end: 20,000 of them took over 5 minutes."""
    start = time.perf_counter()
    package_names("var (\n" * 20_000)
    assert time.perf_counter() - start < 5.0
