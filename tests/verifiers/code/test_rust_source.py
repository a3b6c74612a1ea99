"""A Rust program's names (`verifiers.code.rust_source`), read for the test appended to
it: a program's own ``String`` shadowed the prelude's the test built its expected values
with (``corpus/rust/shadow_string.rs`` scored 1.0)."""

from __future__ import annotations

import time

import pytest

from referee.verifiers.code.rust_source import crate_names, shadowing

SHADOW = (
    "#[derive(Debug, PartialEq)]\nstruct String;\n"
    "impl String { fn from(_: &str) -> String { String } }\n"
    "fn reverse(_: &str) -> String { String }"
)


@pytest.mark.parametrize(
    ("code", "names"),
    [
        (SHADOW, ["String", "from", "reverse"]),
        ("use std::collections::VecDeque as Vec;\nuse std::borrow::Cow;", ["Vec"]),
        ("use std::string::String;\nuse std::io::{self, Read};", []),  # the library's own
        ("mod m { pub struct Vec; }\nuse m::Vec;\nuse crate::m::{Vec as V};", ["m", "Vec", "V"]),
        (
            "enum Mine { Some(i32), None, Other { x: i32 } }\nuse Mine::*;",
            ["Mine", "Some", "None", "Other"],
        ),
        ("fn add(a: i32, b: i32) -> i32 { a + b }", ["add"]),
        ('// struct String;\nlet s = "enum X { Some }";', []),
        ("fn f<'a>(x: &'a str) -> &'a str { x }", ["f"]),  # lifetimes are not characters
    ],
)
def test_crate_names(code: str, names: list[str]) -> None:
    assert crate_names(code) == names


def test_shadowing_needs_a_prelude_name_the_test_uses() -> None:
    test = 'fn main() { assert_eq!(reverse("abc"), String::from("cba")); }'
    assert shadowing(SHADOW, test) == ["String"]
    assert shadowing("enum E { Some(i32) }\nfn reverse() {}", test) == []


def test_nested_enums_cost_one_pass() -> None:
    """Each `enum A {` once rescanned to its body's end: quadratic in the response."""
    start = time.perf_counter()
    crate_names("enum A {\n" * 20_000)
    assert time.perf_counter() - start < 5.0
