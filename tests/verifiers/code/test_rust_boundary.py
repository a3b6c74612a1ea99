"""Rust assert tests run apart from the program (`verifiers.code.boundary.rust`): the
signatures read from the program, the values that cross, and every way a call can end."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import pytest

from referee.verifiers import Result, Status
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code.boundary import rust
from referee.verifiers.code.boundary.declarations import Refused
from referee.verifiers.code.boundary.rust import RType, Signature, signatures
from tests.verifiers.code.conftest import ScoreMany, code_item

S = Signature
I32 = RType("i32", "i32")
STRING = RType("::std::string::String", "::std::string::String")
VEC = "::std::vec::Vec"

SIGNATURES: list[tuple[str, str, list[Signature]]] = [
    ("fn add(a: i32, b: i32) -> i32 { a + b }", "add(1, 2)", [S("add", "", (I32, I32), I32)]),
    (  # references, lifetimes, paths, tuples, arrays, unit results; patterns dropped
        "pub fn f<'a>(s: &'a str, xs: &[i64], m: &mut std::collections::HashMap<String, "
        "Vec<u8>>, (x, y): (f64, char), mut arr: [bool; 3]) -> &'a str { s }\n"
        "fn g(v: &mut Vec<i32>) -> () {}\nconst fn h() -> Option<Box<(i8,)>> { None }\n",
        "f(); g(); h();",
        [
            S(
                "f",
                "<'a>",
                (
                    RType("&'a str", "::std::string::String", "&", "str"),
                    RType("&[i64]", f"{VEC}<i64>", "&", "slice"),
                    RType(
                        f"&mut ::std::collections::HashMap<::std::string::String, {VEC}<u8>>",
                        f"::std::collections::HashMap<::std::string::String, {VEC}<u8>>",
                        "&mut",
                    ),
                    RType("(f64, char)", "(f64, char)"),
                    RType("[bool; 3]", "[bool; 3]"),
                ),
                RType("&'a str", "::std::string::String", "&", "str"),
            ),
            S("g", "", (RType(f"&mut {VEC}<i32>", f"{VEC}<i32>", "&mut"),), None),
            S(
                "h",
                "",
                (),
                RType(
                    "::std::option::Option<::std::boxed::Box<(i8,)>>",
                    "::std::option::Option<::std::boxed::Box<(i8,)>>",
                ),
            ),
        ],
    ),
    (  # aliases are read through
        "type Grid = Vec<Vec<i32>>;\nfn size(g: Grid) -> usize { 0 }",
        "size(vec![])",
        [
            S(
                "size",
                "",
                (RType(f"{VEC}<{VEC}<i32>>", f"{VEC}<{VEC}<i32>>"),),
                RType("usize", "usize"),
            )
        ],
    ),
    (  # only what the test uses and does not declare; never the prelude's, a method or main
        "fn drop(x: i32) {}\nfn helper() {}\nfn check() {}\nstruct T;\n"
        "impl T { fn add(&self) {} }\nfn add(a: i32, b: i32) -> i32 { a + b }\nfn main() {}",
        "fn check() {}\nfn main() { check(); drop(add(1, 2)); } // helper()\n"
        'const S: &str = "helper";',
        [S("add", "", (I32, I32), I32)],
    ),
    (  # LeetCode's shape: associated functions called by path, from the impl block only
        "pub struct Solution;\nimpl Solution {\n    pub fn two_sum(nums: Vec<i32>, t: i32) -> "
        "bool { Self::h() }\n    fn h() -> bool { true }\n    fn m(&self) {}\n}\n"
        "fn two_sum() {}\nimpl Other { fn two_sum(x: i8) {} }",
        "fn main() { assert!(Solution::two_sum(vec![1], 2)); }",
        [
            S(
                "two_sum",
                "",
                (RType(f"{VEC}<i32>", f"{VEC}<i32>"), I32),
                RType("bool", "bool"),
                owner="Solution",
            )
        ],
    ),
]


@pytest.mark.parametrize(("code", "test", "expected"), SIGNATURES)
def test_signatures(code: str, test: str, expected: list[Signature]) -> None:
    assert signatures(code, test) == expected


UNSUPPORTED = [
    "fn f(p: *const i32) -> i32 { 0 }",
    "struct P { x: i32 }\nfn f(p: P) -> i32 { 0 }",
    "fn f<T: Ord>(x: T) -> T { x }",
    "fn f(x: impl Fn(i32) -> i32) -> i32 { 0 }",
    "fn f(x: &dyn std::fmt::Debug) {}",
    "fn f(x: Vec<&str>) {}",
    "fn f(x: &&i32) {}",
    "fn f(x: &mut str) {}",
    "const N: usize = 3;\nfn f(x: [i32; N]) {}",
    "fn f(x: i32) -> i32 where i32: Copy { x }",
    "async fn f() {}",
    "unsafe fn f() {}",
    "fn f(x: std::rc::Rc<i32>) {}",
    "fn f(x: (i8, i8, i8, i8, i8, i8, i8)) {}",
    "fn f(x: Vec<i32, i32>) {}",
]


@pytest.mark.parametrize("code", UNSUPPORTED)
def test_unsupported_signatures_are_refused(code: str) -> None:
    with pytest.raises(Refused) as refused:
        signatures(code, "fn main() { f(); }")
    assert refused.value.flag == "unsupported_signature"


def test_the_tests_side_takes_the_programs_uses_as_a_glob() -> None:
    """The test was written after the program's ``use`` lines: those of the standard
    library come to its side as a glob import, which its own ``use`` of the same name
    overrides instead of colliding with it."""
    code = (
        "use std::collections::HashMap;\nuse std::io::{self, Read};\nuse crate::x::Y;\n"
        "use std::fmt::Result;\nuse std::collections::VecDeque as Vec;\nfn f() -> i32 { 1 }"
    )
    test = "use std::collections::HashMap;\nfn main() { std::process::exit(f()); }"
    source = rust.tester(code, "", test, signatures(code, test))[0].source
    assert "pub use std::collections::HashMap;\n    pub use std::io::{self, Read};\n}" in source
    assert "use referee_program_uses::*;" in source and "crate::x" not in source
    # a rename, or a prelude name a glob would shadow, is the program's own
    assert "fmt::Result" not in source and "VecDeque as Vec" not in source
    assert "referee_boundary::exit(f())" in source and "fn referee_test_main()" in source
    with pytest.raises(ItemInvalid, match="no `fn main\\(\\)`"):
        rust.tester(code, "", "f();", [])


def _score(score_many: ScoreMany, code: str, test: str, setup: str = "") -> Result:
    reference = {"test": test, **({"setup": setup} if setup else {})}
    item = code_item(f"```rust\n{code}\n```", reference, language="rust", time_limit_s=10)
    return score_many([item])[0]


_VALUES = """use std::collections::{BTreeMap, HashSet, VecDeque};
fn big() -> (i64, u64, i8, i128, u128) { (i64::MIN, u64::MAX, -128, i128::MIN, u128::MAX) }
fn floats(x: f64) -> (f64, f32, char) { (x, x as f32, 'é') }
fn texts(s: &str, t: String) -> (String, Vec<String>) { (s.to_uppercase(), vec![t, String::new()]) }
fn shapes(v: VecDeque<i8>, o: Option<Box<u16>>, r: Result<u8, String>) -> Vec<Option<i32>> {
    let mut out: Vec<Option<i32>> = v.iter().map(|&x| Some(x as i32)).collect();
    out.push(o.map(|b| *b as i32));
    out.push(r.ok().map(|x| x as i32));
    out
}
fn sets(s: HashSet<i32>, m: BTreeMap<String, [bool; 2]>) -> (usize, usize) { (s.len(), m.len()) }
fn first<'a>(words: &'a [String]) -> &'a str { &words[0] }
fn nothing() {}
"""

_VALUES_TEST = """use std::collections::{BTreeMap, HashSet, VecDeque};
fn main() {
    assert_eq!(big(), (i64::MIN, u64::MAX, -128, i128::MIN, u128::MAX));
    let (x, y, c) = floats(-0.0);
    assert!(x == 0.0 && x.is_sign_negative() && y == 0.0 && c == 'é');
    assert!(floats(f64::NAN).0.is_nan() && floats(f64::INFINITY).1 == f32::INFINITY);
    let (upper, list) = texts("héllo", "x".to_string());
    assert_eq!((upper.as_str(), list), ("HÉLLO", vec!["x".to_string(), String::new()]));
    let v: VecDeque<i8> = vec![1, -2].into();
    let shaped = shapes(v, Some(Box::new(7)), Err("no".into()));
    assert_eq!(shaped, vec![Some(1), Some(-2), Some(7), None]);
    let s: HashSet<i32> = [1, 2, 2].into_iter().collect();
    let mut m = BTreeMap::new();
    m.insert("k".to_string(), [true, false]);
    assert_eq!(sets(s, m), (2, 1));
    let words = vec!["first".to_string(), "second".to_string()];
    assert_eq!(first(&words), "first");
    nothing();
}
"""

_IN_PLACE = """fn sort_in(xs: &mut Vec<i32>) { xs.sort(); xs.push(9); }
fn rotate(m: &mut [Vec<i32>]) { m.reverse(); }
fn bump(n: &mut i64) -> i64 { *n += 1; *n * 10 }
"""

_IN_PLACE_TEST = """fn main() {
    let mut xs = vec![3, 1, 2];
    sort_in(&mut xs);
    assert_eq!(xs, vec![1, 2, 3, 9]);
    let mut m = vec![vec![1], vec![2, 3]];
    rotate(&mut m);
    assert_eq!(m, vec![vec![2, 3], vec![1]]);
    let mut n = 4;
    assert_eq!(bump(&mut n), 50);
    assert_eq!(n, 5);
}
"""

# (program, test, reward, the case's status or a flag, text in its diff or message)
CALLS: list[tuple[str, str, float, str, str]] = [
    (_VALUES, _VALUES_TEST, 1.0, "passed", ""),
    (_IN_PLACE, _IN_PLACE_TEST, 1.0, "passed", ""),
    (  # functions named like the serving code's own names (its reader, writer, values)
        "fn w(x: i64) -> i64 { x + 1 }\nfn r(s: &str) -> usize { s.len() }\n"
        "fn result(v: &mut Vec<i64>) { v.push(1) }\nfn a0(x: i64) -> i64 { x }",
        'fn main() {\n    assert_eq!(w(1), 2);\n    assert_eq!(r("ab"), 2);\n'
        "    let mut v = vec![];\n    result(&mut v);\n    assert_eq!(v, vec![1]);\n"
        "    assert_eq!(a0(5), 5);\n}",
        1.0,
        "passed",
        "",
    ),
    (  # the program's panic is the call's: the test may expect it
        "fn div(a: i32, b: i32) -> i32 { a / b }",
        "fn main() {\n    assert!(std::panic::catch_unwind(|| div(1, 0)).is_err());\n}",
        1.0,
        "passed",
        "",
    ),
    (  # and fails the test it does not expect it
        'fn div(a: i32, b: i32) -> i32 { panic!("boom") }',
        "fn main() { assert_eq!(div(1, 1), 1); }",
        0.0,
        "wrong_answer",
        "the program panicked in div: boom",
    ),
    (  # a program that ends during a call fails the test, whatever the test catches
        "fn div(a: i32, b: i32) -> i32 { std::process::exit(0) }",
        "fn main() { let _ = std::panic::catch_unwind(|| div(1, 1)); }",
        0.0,
        "early_exit",
        "the program ended during a call to div",
    ),
    (  # a test that ends by process::exit fails by its status (a wrong answer)
        "fn one() -> i32 { 2 }",
        "fn main() { if one() != 1 { std::process::exit(3); } }",
        0.0,
        "wrong_answer",
        "the test exited with status 3",
    ),
    (  # one process serves every call, its own main renamed: state carries over
        "use std::sync::atomic::{AtomicI32, Ordering};\nstatic N: AtomicI32 = AtomicI32::new(0);\n"
        "fn next() -> i32 { N.fetch_add(1, Ordering::SeqCst) + 1 }\n"
        'fn main() { println!("demo {}", next()); }',
        "fn main() { next(); assert_eq!(next(), 2); }",
        1.0,
        "passed",
        "",
    ),
    (  # MultiPL-E's shape: the test closes the function the prompt opened
        "/// Add two numbers\nfn add(x: isize, y: isize) -> isize {\n    x + y\n",
        "}\n\nfn main() {\n    let candidate = add;\n    assert_eq!(candidate(0, 1), 1);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # the program's own String, assert_eq! and unsafe code stay on its side
        "#[allow(unused_macros)]\nmacro_rules! assert_eq { ($($t:tt)*) => {} }\n"
        "fn twice(x: i32) -> i32 { unsafe { std::ptr::read(&x) * 3 } }",
        "fn main() { assert_eq!(twice(2), 4); }",
        0.0,
        "wrong_answer",
        "the test panicked",
    ),
    (  # calls from threads take turns on the channel
        "fn add(a: i32, b: i32) -> i32 { a + b }",
        "fn main() {\n    let handles: Vec<_> = (0..8)\n"
        "        .map(|g| std::thread::spawn(move || (0..50).all(|i| add(g, i) == g + i)))\n"
        "        .collect();\n    assert!(handles.into_iter().all(|h| h.join().unwrap()));\n}",
        1.0,
        "passed",
        "",
    ),
    (  # LeetCode's shape: the test calls Solution's associated function by path
        "pub struct Solution;\nimpl Solution {\n    pub fn two_sum(nums: Vec<i32>, t: i32) -> "
        "Vec<i32> { vec![0, 0] }\n}",
        "fn main() { assert_eq!(Solution::two_sum(vec![2, 7], 9), vec![0, 1]); }",
        0.0,
        "wrong_answer",
        "the test panicked: assertion failed",
    ),
    (  # a test's own helper is the test's, not the program's of the same name
        "fn check(x: i32) -> bool { true }\nfn f() -> i32 { 1 }",
        "fn check(x: i32) -> bool { x == 2 }\nfn main() { assert!(check(f())); }",
        0.0,
        "wrong_answer",
        "assertion failed",
    ),
]


@pytest.mark.parametrize(("code", "test", "reward", "status", "text"), CALLS)
def test_calls(
    score_many: ScoreMany, code: str, test: str, reward: float, status: str, text: str
) -> None:
    result = _score(score_many, code, test)
    assert result.status is Status.OK, result.error
    assert result.reward == reward, result.details
    case: dict[str, Any] = (result.details.get("cases") or [{}])[0]
    flags = result.details.get("flags", [])
    assert case.get("status") == status or status in flags or not status, result.details
    assert text in (case.get("diff") or "") + result.details.get("message", ""), result.details


def test_the_references_setup_is_on_both_sides(score_many: ScoreMany) -> None:
    setup = "fn double(x: i32) -> i32 { 2 * x }"
    code = "fn quad(x: i32) -> i32 { double(double(x)) }"
    test = "fn main() { assert_eq!(quad(1), double(2)); }"
    result = _score(score_many, code, test, setup)
    assert result.status is Status.OK and result.reward == 1.0, result.details


def test_an_unsupported_signature_scores_zero_with_its_flag(score_many: ScoreMany) -> None:
    code = "struct Node { next: Option<Box<Node>> }\nfn len(n: Node) -> usize { 0 }"
    result = _score(score_many, code, "fn main() { len(Node { next: None }); }")
    assert result.status is Status.OK and result.reward == 0.0
    assert result.details["flags"] == ["unsupported_signature"], result.details


_ZEROS = "\\x00" * 8  # a little-endian 64-bit count's high bytes, sliced

FORGED = {  # what goes wrong: (the function's result type, the reply it forges)
    "a count larger than its message": ("String", "\\x00\\xff" + "\\xff" * 6 + "\\x7f"),
    "a bool that is neither 0 nor 1": ("bool", "\\x00\\x02"),
    "an integer out of its type's range": ("i8", "\\x00\\x2c\\x01" + _ZEROS[:24]),
    "a message with bytes left over": ("bool", "\\x00\\x01\\x00"),
    "a reply of no known kind": ("bool", "\\x07"),
    "a message ends too soon": ("bool", "\\x00"),
    "a presence byte that is neither 0 nor 1": ("Option<i32>", "\\x00\\x05"),
    "a string that is not UTF-8": ("String", "\\x00\\x01" + _ZEROS[:28] + "\\xff"),
    "a char out of range": ("char", "\\x00\\x00\\xd8" + _ZEROS[:24]),
    "a message larger than 64 MiB": ("bool", ""),
}


@pytest.mark.parametrize("why", sorted(FORGED))
def test_a_forged_reply_fails_the_test(score_many: ScoreMany, why: str) -> None:
    """The program owns its end of the channel: whatever it writes there is read within
    bounds and fails the test, never the harness."""
    kind, body = FORGED[why]
    size = "0xffff_ffffu32" if not body else "body.len() as u32"
    code = (
        "use std::io::Write;\nuse std::os::unix::io::FromRawFd;\n"
        f"fn f(s: &str) -> {kind} {{\n"
        '    let fd: i32 = std::env::var("REFEREE_CHANNEL_OUT").unwrap().parse().unwrap();\n'
        "    let mut out = unsafe { std::fs::File::from_raw_fd(fd) };\n"
        f'    let body: &[u8] = b"{body}";\n'
        f"    let mut message = ({size}).to_le_bytes().to_vec();\n"
        "    message.extend_from_slice(body);\n"
        "    out.write_all(&message).unwrap();\n    std::process::exit(0)\n}\n"
    )
    result = _score(score_many, code, 'fn main() { f("abc"); }')
    assert result.status is Status.OK and result.reward == 0.0, result.details
    assert why in result.details["cases"][0]["diff"], result.details


ADVERSARIAL = {  # each read in bounded time, refused or not, never a RecursionError
    "vectors nested 3,000 deep": "fn f(x: " + "Vec<" * 3_000 + "i32" + ">" * 3_000 + ") {}",
    "an unclosed parameter list": "fn f(" + "a: i32, " * 50_000,
    "3,000 functions the test uses": "".join(
        f"fn f{i}(a: i32) -> i32 {{ a }}\n" for i in range(3_000)
    ),
    "an alias of itself": "type A = A;\nfn f(x: A) {}",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_reading_signatures_takes_one_pass(name: str) -> None:
    """Each function's header is read from a bounded window: the rest of the program
    tokenized once per function was quadratic (3,000 functions: 4.8 s)."""
    test = " ".join(f"f{i}();" for i in range(3_000)) + " f();"
    start = time.perf_counter()
    with contextlib.suppress(Refused):
        signatures(ADVERSARIAL[name], test)
    assert time.perf_counter() - start < 5.0
