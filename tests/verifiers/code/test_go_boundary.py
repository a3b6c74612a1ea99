"""Go assert tests run apart from the program (`verifiers.code.boundary.go`): the
signatures read from the program, the values that cross, and every way a call can end."""

from __future__ import annotations

import contextlib
import shutil
import time
from typing import Any

import pytest

from referee.verifiers import Result, Status
from referee.verifiers.code.boundary import go
from referee.verifiers.code.boundary.declarations import Refused
from referee.verifiers.code.boundary.go import Signature, signatures
from tests.verifiers.code.conftest import ScoreMany, code_item

S = Signature

SIGNATURES: list[tuple[str, str, list[Signature]]] = [
    ("func add(a, b int) int { return a + b }", "add(1, 2)", [S("add", ("int", "int"), ("int",))]),
    (  # every kind of type; names dropped; results named or not
        "func f(xs []float64, m map[string][]int, s string, b byte, r rune, x any,\n"
        "  e interface {}, arr [3]int, rest ...string) (n int, err error) { return }\n"
        "func g(int, []string) bool { return true }\n"
        "func h() map[string]interface{} { return nil }\nfunc k() {}\n",
        "f(); g(); h(); k()",
        [
            S(
                "f",
                (
                    "[]float64",
                    "map[string][]int",
                    "string",
                    "byte",
                    "rune",
                    "interface{}",
                    "interface{}",
                    "[3]int",
                    "...string",
                ),
                ("int", "error"),
            ),
            S("g", ("int", "[]string"), ("bool",)),
            S("h", (), ("map[string]interface{}",)),
            S("k", (), ()),
        ],
    ),
    (  # only what the test uses and does not declare; never a predeclared name but
        # those Go predeclares only from 1.21; never a method or init
        "func panic(v any) {}\nfunc len(s string) int { return 0 }\nfunc max(a, b int) int "
        "{ return a }\nfunc helper() {}\nfunc check() {}\ntype T int\nfunc (t T) add() {}\n"
        "func add(a, b int) int { return a + b }\nfunc init() {}\n",
        'func check() {}\nfunc main() { check(); if max(add(1, 2), len("x")) != 3 { panic("x") } }',
        [S("max", ("int", "int"), ("int",)), S("add", ("int", "int"), ("int",))],
    ),
    (  # a name in the test's comments or strings is not a use
        "func add(a, b int) int { return a + b }\nfunc sub(a, b int) int { return a - b }",
        '// sub(1, 2)\nfunc main() { _ = "sub"; add(1, 2) }',
        [S("add", ("int", "int"), ("int",))],
    ),
]


@pytest.mark.parametrize(("code", "test", "expected"), SIGNATURES)
def test_signatures(code: str, test: str, expected: list[Signature]) -> None:
    assert signatures(code, test) == expected


UNSUPPORTED = [
    "func f(p *int) int { return 0 }",
    "type Point struct{ X int }\nfunc f(p Point) int { return 0 }",
    "func f(p struct{ X int }) int { return 0 }",
    'import "math/big"\nfunc f(x big.Int) int { return 0 }',
    "func f(g func(int) int) int { return 0 }",
    "func f(c chan int) int { return 0 }",
    "func f[T any](x T) T { return x }",
    "const N = 3\nfunc f(a [N]int) int { return 0 }",
    "func f(x interface{ M() }) int { return 0 }",
    "type Ints = []int\nfunc f() Ints { return nil }",
    "func f() *int { return nil }",
    "func f(a ...int, b int) int { return 0 }",
]


@pytest.mark.parametrize("code", UNSUPPORTED)
def test_unsupported_signatures_are_refused(code: str) -> None:
    with pytest.raises(Refused) as refused:
        signatures(code, "func main() { f() }")
    assert refused.value.flag == "unsupported_signature"


def test_the_tests_side_imports_what_it_uses() -> None:
    """The test was written after the program's imports: those of the standard library
    it uses come with it (never a blank, dot, renamed or non-standard one, never one
    unused), after its own. A renamed one is the program's: ``import fmt "log"`` would
    give the test's ``fmt.Println`` another package's."""
    code = (
        'package main\nimport (\n\t"fmt"\n\tstr "strings"\n\t_ "embed"\n\t"os"\n'
        '\t"example.com/x"\n)\nimport "sort"\nfunc f() int { return 1 }'
    )
    test = (
        'import "math"\nfunc main() {\n\tif f() != 1 { panic(fmt.Sprint(str.ToUpper("x"),'
        " math.Pi)) }\n\t// sort.Ints\n\tos.Exit(0)\n}"
    )
    source = go.tester(code, "", test, signatures(code, test))[0].source
    imports = source[source.index("import (") : source.index(")")]
    assert imports.split() == ["import", "(", '"math"', '"fmt"']
    assert "referee_exit(0)" in source and "os.Exit" not in source


def test_a_test_without_main_is_the_references_fault() -> None:
    with pytest.raises(Exception, match="no `func main\\(\\)` found, nor a `func TestX"):
        go.tester("func f() {}", "", "f()", [])


def test_the_programs_unused_imports_are_dropped() -> None:
    """MultiPL-E's prompt imports what its test uses (``testing``): built alone, the
    program would not compile (Go refuses an unused import)."""
    code = (
        'package x_test\n\nimport (\n    "testing"\n    "fmt"\n    s "strings"\n    _ "embed"\n)\n'
        'import "math"\nimport "sort"\nfunc f() { fmt.Println(s.ToUpper("a")); sort.Ints(nil) }'
    )
    kept = go.program(code, "", []).source
    assert '"testing"' not in kept and '"math"' not in kept
    assert all(p in kept for p in ('"fmt"', 's "strings"', '_ "embed"', 'import "sort"'))


def test_go_tests_shape_is_built_by_go_test() -> None:
    test = 'import "testing"\nfunc TestF(t *testing.T) { if f() != 1 { t.Error("no") } }'
    built, _ = go.tester("func f() int { return 1 }", "", test, [])
    assert built.language == "go_test" and "referee_run_tests(m.Run)" in built.source


needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")


def _score(score_many: ScoreMany, code: str, test: str, setup: str = "") -> Result:
    reference = {"test": test, **({"setup": setup} if setup else {})}
    item = code_item(f"```go\n{code}\n```", reference, language="go", time_limit_s=10)
    return score_many([item])[0]


_VALUES = """package main

import "math"

func Big() (int64, uint64, int8) { return math.MinInt64, math.MaxUint64, -128 }
func Floats(x float64) (float64, float32, complex128) { return x, float32(x), complex(x, -x) }
func Bytes() string { return "h\\xffi\\x00" }
func Nils() ([]int, []int, map[string]int, []interface{}) {
	return nil, []int{}, nil, []interface{}{nil, 1, int8(2), "s", []byte{1}, map[int]bool{3: true},
		[2]string{"a", "b"}, []interface{}{1.5}}
}
func Errs(fail bool) error {
	if fail {
		return errorString("failed")
	}
	return nil
}
type errorString string
func (e errorString) Error() string { return string(e) }
func Sum(xs ...int) (t int) { for _, x := range xs { t += x }; return }
func Echo(m map[int][]string, a [2][]int) (map[int][]string, [2][]int) { return m, a }
"""

_VALUES_TEST = """import (
	"math"
	"reflect"
)

func main() {
	a, b, c := Big()
	if a != math.MinInt64 || b != math.MaxUint64 || c != -128 { panic("big") }
	x, y, z := Floats(math.Copysign(0, -1))
	if x != 0 || !math.Signbit(x) || y != 0 || z != complex(x, 0) { panic("zero") }
	if n, _, _ := Floats(math.NaN()); !math.IsNaN(n) { panic("nan") }
	if i, _, _ := Floats(math.Inf(-1)); !math.IsInf(i, -1) { panic("inf") }
	if Bytes() != "h\\xffi\\x00" { panic("bytes") }
	nilSlice, empty, nilMap, mixed := Nils()
	if nilSlice != nil || empty == nil || len(empty) != 0 || nilMap != nil { panic("nils") }
	want := []interface{}{nil, 1, int8(2), "s", []byte{1}, map[int]bool{3: true},
		[2]string{"a", "b"}, []interface{}{1.5}}
	if !reflect.DeepEqual(mixed, want) { panic("mixed") }
	if Errs(false) != nil || Errs(true) == nil || Errs(true).Error() != "failed" { panic("errs") }
	if Sum() != 0 || Sum(1, 2, 3) != 6 || Sum([]int{4, 5}...) != 9 { panic("sum") }
	m, arr := Echo(map[int][]string{1: {"x"}, -2: nil}, [2][]int{{1}, nil})
	if !reflect.DeepEqual(m, map[int][]string{1: {"x"}, -2: nil}) || arr[1] != nil { panic("echo") }
}
"""

_IN_PLACE = """package main

import "sort"

func SortIn(xs []int) { sort.Ints(xs) }
func Rotate(m [][]int) {
	n := len(m)
	for i := 0; i < n/2; i++ { m[i], m[n-1-i] = m[n-1-i], m[i] }
	for i := range m { for j := 0; j < i; j++ { m[i][j], m[j][i] = m[j][i], m[i][j] } }
}
func Grow(xs []int) []int { xs[0] = 9; return append(xs, 1) }
func Count(m map[string]int, word string) { m[word]++; delete(m, "gone") }
"""

_IN_PLACE_TEST = """func main() {
	xs := []int{3, 1, 2}
	view := xs[:2]
	SortIn(xs)
	if xs[0] != 1 || xs[2] != 3 || view[1] != 2 { panic("sort") }
	m := [][]int{{1, 2}, {3, 4}}
	row := m[0]
	Rotate(m)
	if m[0][0] != 3 || m[0][1] != 1 || m[1][0] != 4 || m[1][1] != 2 { panic("rotate") }
	_ = row
	ys := make([]int, 1, 4)
	grown := Grow(ys)
	if ys[0] != 9 || len(ys) != 1 || len(grown) != 2 { panic("grow") }
	counts := map[string]int{"a": 1, "gone": 1}
	Count(counts, "a")
	if counts["a"] != 2 || len(counts) != 1 { panic("count") }
}
"""

_MULTIPL_E_PROMPT = (
    'package add_test\n\nimport (\n    "testing"\n    "fmt"\n)\n\n'
    "// Add two numbers\nfunc add(a int, b int) int {\n"
)
_MULTIPL_E_TEST = """func TestAdd(t *testing.T) {
  candidate := add
	type test struct {
		actual   interface{}
		expected interface{}
	}
   tests := []test{
     { actual: candidate(2, 3), expected: 5 },
   }

	for i, tc := range tests {
		t.Run(fmt.Sprintf("test num % d", i), func(t *testing.T) {
			if fmt.Sprintf("%v", tc.actual) != fmt.Sprintf("%v", tc.expected) {
				t.Errorf("expected '%s', got '%s'", tc.expected, tc.actual)
			}
		})
	}
}
"""

# (program, test, reward, the case's status or a flag, text in its diff or message)
CALLS: list[tuple[str, str, float, str, str]] = [
    (_VALUES, _VALUES_TEST, 1.0, "passed", ""),
    (_IN_PLACE, _IN_PLACE_TEST, 1.0, "passed", ""),
    (  # functions named like the serving code's own names (its reader, writer, values)
        "package main\nfunc in(x int) int { return x + 1 }\n"
        'func out(s string) string { return s + "!" }\nfunc a0(xs []int) int { return len(xs) }\n'
        "func r0(x int) (int, int) { return x, -x }",
        'func main() {\n\tif in(1) != 2 || out("a") != "a!" || a0([]int{1, 2}) != 2 {\n'
        '\t\tpanic("fail")\n\t}\n\tif p, q := r0(3); p != 3 || q != -3 {\n\t\tpanic("r0")\n\t}\n}',
        1.0,
        "passed",
        "",
    ),
    (  # the program's panic is the call's: the test may expect it
        'package main\nfunc Div(a, b int) int { if b == 0 { panic("zero") }; return a / b }',
        'func main() {\n\tdefer func() { if recover() == nil { panic("no panic") } }()\n'
        "\tDiv(1, 0)\n}",
        1.0,
        "passed",
        "",
    ),
    (  # and fails the test it does not expect it
        'package main\nfunc Div(a, b int) int { panic("boom") }',
        'func main() { if Div(1, 1) != 1 { panic("fail") } }',
        0.0,
        "wrong_answer",
        "the program panicked in Div: boom",
    ),
    (  # a program that ends during a call fails the test, whatever the test recovers
        'package main\nimport "os"\nfunc Div(a, b int) int { os.Exit(0); return 0 }',
        "func main() {\n\tdefer func() { recover() }()\n\tDiv(1, 1)\n}",
        0.0,
        "early_exit",
        "the program ended during a call to Div",
    ),
    (  # a test that ends by os.Exit or log.Fatal fails by it (a wrong answer)
        "package main\nfunc One() int { return 2 }",
        'import "os"\nfunc main() { if One() != 1 { os.Exit(3) } }',
        0.0,
        "wrong_answer",
        "the test exited with status 3",
    ),
    (
        "package main\nfunc One() int { return 2 }",
        'import "log"\nfunc main() { if One() != 1 { log.Fatalf("got %d", One()) } }',
        0.0,
        "wrong_answer",
        "the test failed: got 2",
    ),
    (  # and passes by os.Exit(0)
        "package main\nfunc One() int { return 1 }",
        'import "os"\nfunc main() { if One() != 1 { panic("fail") }; os.Exit(0) }',
        1.0,
        "passed",
        "",
    ),
    (  # a value of a type of the program's never crosses
        "package main\ntype T struct{ v int }\nfunc F() interface{} { return T{1} }",
        "func main() { _ = F() }",
        0.0,
        "custom_type",
        "returned a main.T, which cannot cross",
    ),
    (  # the program's package-level names are its own (none is the harness's)
        'package main\nimport "fmt"\nvar errors = []string{}\nvar strings, reflect = 1, 2\n'
        "func Add(a, b int) int { return len(fmt.Sprint(errors, strings, reflect)) }",
        'import "strings"\n'
        'func main() { if Add(2, 3) != 5 || strings.ToUpper("a") != "A" { panic("fail") } }',
        0.0,
        "wrong_answer",
        "the test panicked: fail",
    ),
    (  # a program that declares Go's own panic (the test's panic stays Go's): its side
        # does not build, as one that breaks Go's builtins would not in one package
        "package main\nfunc panic(v interface{}) {}\nfunc Add(a, b int) int { return 0 }",
        'func main() { if Add(2, 3) != 5 { panic("fail") } }',
        0.0,
        "",
        "the program does not compile",
    ),
    (  # one process serves every call, its own main renamed: state carries over
        'package main\nimport "fmt"\nvar n int\nfunc Next() int { n++; return n }\n'
        'func main() { fmt.Println("demo", Next()) }',
        'func main() { Next(); if Next() != 2 { panic("fail") } }',
        1.0,
        "passed",
        "",
    ),
    (  # a call in the test's package-level initialisation, before its main (the
        # harness opened the channel in main: the test ended with no verdict, an error)
        "package main\nfunc Add(a, b int) int { return a + b }",
        'var sum = Add(2, 3)\nfunc main() { if sum != 5 { panic("fail") } }',
        1.0,
        "passed",
        "",
    ),
    (  # and a wrong answer there fails
        "package main\nfunc Add(a, b int) int { return a - b }",
        'var sum = Add(2, 3)\nfunc main() { if sum != 5 { panic("fail") } }',
        0.0,
        "wrong_answer",
        "the test panicked: fail",
    ),
    (  # Go 1.21's builtins are the program's when it declares them
        "package main\nfunc max(a, b int) int { if a > b { return a }; return b }",
        'func main() { if max(2, 7) != 7 { panic("fail") } }',
        1.0,
        "passed",
        "",
    ),
    (  # calls from goroutines take turns on the channel
        "package main\nfunc Add(a, b int) int { return a + b }",
        'import "sync"\nfunc main() {\n\tvar wg sync.WaitGroup\n\tbad := make(chan int, 400)\n'
        "\tfor g := 0; g < 8; g++ {\n\t\twg.Add(1)\n\t\tgo func(g int) {\n\t\t\tdefer wg.Done()\n"
        "\t\t\tfor i := 0; i < 50; i++ {\n\t\t\t\tif Add(g, i) != g+i {\n\t\t\t\t\tbad <- 1\n"
        '\t\t\t\t}\n\t\t\t}\n\t\t}(g)\n\t}\n\twg.Wait()\n\tif len(bad) != 0 { panic("fail") }\n}',
        1.0,
        "passed",
        "",
    ),
    (  # MultiPL-E's shape: the prompt's package and imports, a `go test` test
        _MULTIPL_E_PROMPT + "    return 0\n}\n",
        _MULTIPL_E_TEST,
        0.0,
        "wrong_answer",
        "go test failed: main_test.go:",
    ),
    (
        _MULTIPL_E_PROMPT + "    return a + b\n}\n",
        _MULTIPL_E_TEST,
        1.0,
        "passed",
        "",
    ),
    (  # under `go test` a test's own panic (a short slice indexed) is that test's failure
        "package main\nfunc Pair() []int { return nil }",
        'import "testing"\nfunc TestPair(t *testing.T) {\n\tt.Run("first", func(t *testing.T) {\n'
        '\t\tif Pair()[0] != 1 { t.Error("wrong") }\n\t})\n}\n',
        0.0,
        "wrong_answer",
        "the test panicked: runtime error: index out of range",
    ),
    (  # under `go test` the program's panic fails the run at once
        _MULTIPL_E_PROMPT + '    panic("boom")\n}\n',
        _MULTIPL_E_TEST,
        0.0,
        "wrong_answer",
        "the program panicked in add: boom",
    ),
    (  # a test's own helper is the test's, not the program's of the same name
        "package main\nfunc check(x int) bool { return true }\nfunc F() int { return 1 }",
        "func check(x int) bool { return x == 2 }\n"
        'func main() { if !check(F()) { panic("fail") } }',
        0.0,
        "wrong_answer",
        "the test panicked: fail",
    ),
]


@needs_go
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


@needs_go
def test_the_references_setup_is_on_both_sides(score_many: ScoreMany) -> None:
    setup = "package main\nfunc double(x int) int { return 2 * x }"
    code = "package main\nfunc Quad(x int) int { return double(double(x)) }"
    test = 'func main() { if Quad(1) != double(2) { panic("fail") } }'
    result = _score(score_many, code, test, setup)
    assert result.status is Status.OK and result.reward == 1.0, result.details


@needs_go
def test_a_value_the_test_cannot_send_is_the_references_fault(score_many: ScoreMany) -> None:
    code = "package main\nfunc F(xs []interface{}) int { return len(xs) }"
    test = "func main() { x := 1; F([]interface{}{&x}) }"
    result = _score(score_many, code, test)
    assert result.status is Status.INVALID and result.error is not None, result
    assert "the test passes a *int to F" in result.error.message


@needs_go
def test_an_unsupported_signature_scores_zero_with_its_flag(score_many: ScoreMany) -> None:
    code = "package main\ntype Node struct{ Next *Node }\nfunc Len(n *Node) int { return 0 }"
    result = _score(score_many, code, "func main() { Len(nil) }")
    assert result.status is Status.OK and result.reward == 0.0
    assert result.details["flags"] == ["unsupported_signature"], result.details


_ZEROS = "\\x00" * 8  # a little-endian 64-bit count's high bytes, sliced

FORGED = {  # what goes wrong: (the function's result type, the reply it forges)
    "a count larger than its message": ("string", "\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x7f"),
    "a bool that is neither 0 nor 1": ("bool", "\\x00\\x02"),
    "an integer out of its type's range": ("int8", "\\x00\\x2c\\x01\\x00\\x00\\x00\\x00\\x00\\x00"),
    "a message with bytes left over": ("bool", "\\x00\\x01\\x00"),
    "a reply of no known kind": ("bool", "\\x07"),
    "a message ends too soon": ("bool", "\\x00"),
    "a presence byte that is neither 0 nor 1": ("[]int", "\\x00\\x05"),
    "a value of no known type": ("interface{}", "\\x00\\x01\\x06" + _ZEROS[:28] + "main.T"),
    "a map key that cannot be hashed": (
        "map[interface{}]int",
        "\\x00\\x01\\x01" + _ZEROS[:28] + "\\x01\\x05" + _ZEROS[:28] + "[]int\\x00" + _ZEROS,
    ),
    "a message larger than 64 MiB": ("bool", ""),
}


@needs_go
@pytest.mark.parametrize("why", sorted(FORGED))
def test_a_forged_reply_fails_the_test(score_many: ScoreMany, why: str) -> None:
    """The program owns its end of the channel: whatever it writes there is read within
    bounds and fails the test, never the harness."""
    kind, body = FORGED[why]
    size = "0xffffffff" if not body else "uint32(len(body))"
    code = (
        'package main\nimport (\n\t"encoding/binary"\n\t"os"\n\t"strconv"\n)\n'
        f"func F(s string) {kind} {{\n"
        '\tfd, _ := strconv.Atoi(os.Getenv("REFEREE_CHANNEL_OUT"))\n'
        '\tout := os.NewFile(uintptr(fd), "out")\n'
        f'\tbody := []byte("{body}")\n'
        f"\tvar n [4]byte\n\tbinary.LittleEndian.PutUint32(n[:], {size})\n"
        "\tout.Write(append(n[:], body...))\n\tos.Exit(0)\n"
        f"\tvar zero {kind}\n\treturn zero\n}}\n"
    )
    result = _score(score_many, code, 'func main() { F("abc") }')
    assert result.status is Status.OK and result.reward == 0.0, result.details
    assert why in result.details["cases"][0]["diff"], result.details


ADVERSARIAL = {  # each read in bounded time, refused or not, never a RecursionError
    "slices nested 5,000 deep": "func f(x " + "[]" * 5_000 + "int) int { return 0 }",
    "maps nested 3,000 deep": "func f(x " + "map[int]" * 3_000 + "int) int { return 0 }",
    "an unclosed parameter list": "func f(" + "a, " * 50_000,
    "3,000 functions the test uses": "".join(
        f"func f{i}(a int) int {{ return a }}\n" for i in range(3_000)
    ),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_reading_signatures_takes_one_pass(name: str) -> None:
    test = " ".join(f"f{i}()" for i in range(3_000)) + " f()"
    start = time.perf_counter()
    with contextlib.suppress(Refused):
        signatures(ADVERSARIAL[name], test)
    assert time.perf_counter() - start < 5.0
