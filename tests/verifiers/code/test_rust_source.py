"""A Rust program's top-level names (`verifiers.code.rust_source`), read for the
functions its test takes from it (`verifiers.code.boundary.rust`)."""

from __future__ import annotations

import pytest

from referee.verifiers.code.rust_source import item_names, masked


@pytest.mark.parametrize(
    ("code", "names"),
    [
        ("fn add(a: i32, b: i32) -> i32 { a + b }", ["add"]),
        (  # every kind of item, each once; none nested in a body or a module
            "struct S;\nenum E { A }\nconst N: i32 = 1;\nstatic M: i32 = 2;\ntype T = i32;\n"
            "mod m { fn inner() {} }\ntrait Tr {}\nfn f() { fn g() {} }\nfn f() {}",
            ["S", "E", "N", "M", "T", "m", "Tr", "f"],
        ),
        ('// fn hidden() {}\nconst S: &str = "fn quoted() {}";', ["S"]),
        ("fn f<'a>(x: &'a str) -> &'a str { x }\nfn g() {}", ["f", "g"]),  # 'a is no char
    ],
)
def test_item_names(code: str, names: list[str]) -> None:
    assert item_names(code) == names


def test_masked_keeps_positions_and_newlines() -> None:
    code = 'let s = r#"a "quoted" }"#; // }\nlet c = \'}\';'
    shadow = masked(code)
    assert len(shadow) == len(code) and shadow.count("\n") == 1 and "}" not in shadow
