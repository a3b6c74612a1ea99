"""Rust assert tests, side by side in one run: `bench.cpp_asserts`'s two paths (referee's
two linked sandboxes, `verifiers.code.boundary.rust`, against the test appended to the
program, one ``rustc`` and one run per response, no isolation) on MultiPL-E-shaped Rust
problems whose functions take and return numbers, strings and vectors.

Usage: python -m bench.rust_asserts [--group 8] [--out bench/results]
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.cpp_asserts import arguments, run
from referee.verifiers import Item

# (right answer, the bug a wrong one has as (old, new), the test)
PROBLEMS: list[tuple[str, tuple[str, str], str]] = [
    (
        "fn fib(n: u32) -> u64 {\n    let (mut a, mut b) = (0u64, 1u64);\n"
        "    for _ in 0..n {\n        let c = a + b;\n        a = b;\n        b = c;\n    }\n"
        "    a\n}",
        ("let c = a + b;", "let c = a + b + 1;"),
        "fn main() {\n    let candidate = fib;\n    assert_eq!(candidate(0), 0);\n"
        "    assert_eq!(candidate(10), 55);\n    assert_eq!(candidate(50), 12586269025);\n}",
    ),
    (
        "fn flip_case(s: String) -> String {\n    s.chars().map(|c| if c.is_uppercase() "
        "{ c.to_ascii_lowercase() } else { c.to_ascii_uppercase() }).collect()\n}",
        ("c.to_ascii_uppercase()", "c"),
        "fn main() {\n    let candidate = flip_case;\n"
        '    assert_eq!(candidate(String::from("")), String::from(""));\n'
        '    assert_eq!(candidate(String::from("Hello!")), String::from("hELLO!"));\n}',
    ),
    (
        "fn sort_array(a: Vec<isize>) -> Vec<isize> {\n    let mut v = a.clone();\n"
        "    v.sort();\n    v\n}",
        ("v.sort();", "v.sort_by(|x, y| y.cmp(x));"),
        "fn main() {\n    let candidate = sort_array;\n"
        "    assert_eq!(candidate(vec![3, 1, 2]), vec![1, 2, 3]);\n"
        "    assert_eq!(candidate(Vec::<isize>::new()), Vec::<isize>::new());\n}",
    ),
    (
        "fn below_zero(operations: Vec<isize>) -> bool {\n    let mut balance = 0;\n"
        "    for op in operations {\n        balance += op;\n        if balance < 0 {\n"
        "            return true;\n        }\n    }\n    false\n}",
        ("balance < 0", "balance < -1"),
        "fn main() {\n    let candidate = below_zero;\n"
        "    assert_eq!(candidate(vec![1, 2, -4, 5]), true);\n"
        "    assert_eq!(candidate(vec![1, 2, -3]), false);\n}",
    ),
]


def items(group: int) -> list[tuple[Item, bool]]:
    """``group`` responses per problem, every other one wrong; with whether it is right."""
    made = []
    for right, (old, new), test in PROBLEMS:
        for index in range(group):
            code = right if index % 2 == 0 else right.replace(old, new)
            item = Item(
                verifier="code",
                response=f"```rust\n{code}\n```",
                reference={"test": test},
                params={"language": "rust"},
            )
            made.append((item, index % 2 == 0))
    return made


def naive_one(item: Item, folder: Path, index: int) -> bool:
    """Append the test, ``rustc -O``, run: exit status 0 is a pass."""
    code = item.response_text().split("```rust\n", 1)[1].rsplit("\n```", 1)[0]
    source = folder / f"item{index}.rs"
    source.write_text(f"{code}\n{item.reference['test']}\n")
    binary = folder / f"item{index}"
    built = subprocess.run(
        ["rustc", "--edition", "2021", "-O", "-o", str(binary), str(source)],
        capture_output=True,
        check=False,
    )
    if built.returncode != 0:
        return False
    ran = subprocess.run([str(binary)], capture_output=True, timeout=10, check=False)
    return ran.returncode == 0


def main() -> None:
    args = arguments()
    label = "test appended, rustc -O and run"
    run(items(args.group), "rust_asserts", args.group, args.out, (label, naive_one))


if __name__ == "__main__":
    main()
