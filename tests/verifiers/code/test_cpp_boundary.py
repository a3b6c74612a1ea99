"""C++ assert tests run apart from the program (`verifiers.code.boundary.cpp`): the
signatures read from the program, the values that cross, and every way a call can end."""

from __future__ import annotations

import time
from typing import Any

import pytest

from referee.verifiers import Result, Status
from referee.verifiers.code.boundary import cpp
from referee.verifiers.code.boundary.cpp import Signature, signatures
from referee.verifiers.code.boundary.declarations import Refused
from tests.verifiers.code.conftest import ScoreMany, code_item

S = Signature

SIGNATURES: list[tuple[str, str, list[Signature]]] = [
    ("int add(int a, int b) { return a + b; }", "add(1, 2)", [S("add", "int", ("int", "int"))]),
    (
        "#include <vector>\nusing namespace std;\nvector<int> f(vector<int> array) {}",
        "f({1})",
        [S("f", "vector<int>", ("vector<int>",))],
    ),
    (  # names, references, const, std::, long long, unnamed parameters, void
        "static inline std::map<std::string, long long> g(const std::string &s, unsigned long"
        " long, std::vector<std::vector<int>>& out) {}\nvoid h(void) {}",
        "g(s, 1, v); h();",
        [
            S(
                "g",
                "std::map<std::string, long long>",
                ("const std::string &", "unsigned long long", "std::vector<std::vector<int>>&"),
            ),
            S("h", "void", ()),
        ],
    ),
    (  # aliases are read through: typedef, using, #define
        "typedef long long ll;\nusing vi = std::vector<int>;\n#define VS std::vector<std::string>\n"
        "vi f(ll n, VS words) {}",
        "f(1, {})",
        [S("f", "std::vector<int>", ("long long", "std::vector<std::string>"))],
    ),
    (  # only what the test names and does not define itself; overloads each once
        "int helper(int x) { return x; }\nbool issame(int a, int b) { return true; }\n"
        "int f(int x) { return helper(x); }\ndouble f(double x) { return x; }",
        "bool issame(int a, int b) { return a == b; }\nint main() { assert(issame(f(1), 1)); }",
        [S("f", "int", ("int",)), S("f", "double", ("double",))],
    ),
    (  # comments, literals, macros and nested definitions are not definitions
        '// int f(int x) {}\nconst char *s = "int f(int x) {}";\n#define F(x) int f(x) {}\n'
        "struct A { int f(int x) { return x; } };",
        "f(1)",
        [],
    ),
    (  # std::array sizes and optional, tuple, pair, set
        "std::optional<std::tuple<int, std::pair<char, bool>>> f(std::array<int, 3> a, "
        "std::set<double> s) {}",
        "f",
        [
            S(
                "f",
                "std::optional<std::tuple<int, std::pair<char, bool>>>",
                ("std::array<int, 3>", "std::set<double>"),
            )
        ],
    ),
]


@pytest.mark.parametrize(("code", "test", "expected"), SIGNATURES)
def test_signatures(code: str, test: str, expected: list[Signature]) -> None:
    assert signatures(code, test) == expected


UNSUPPORTED = [
    ("int *f(int n) {}", "a pointer result"),
    ("int f(int *a, int n) {}", "a pointer parameter"),
    ("int f(int a[]) {}", "an array parameter"),
    ("struct P { int x; };\nP f(int n) {}", "a type of the program's"),
    ("template <class T> T f(T x) {}", "a template"),
    ("auto f(int x) { return x; }", "an auto result"),
    ("auto f(int x) -> int { return x; }", "a trailing result"),
    ("int f(int x = 3) {}", "a default argument"),
    ("int f(std::string &&s) {}", "an rvalue reference"),
    ("const std::string &f(int x) {}", "a reference result"),
    ("int f(std::function<int(int)> g) {}", "a function object"),
    ("typedef int *ip;\nip f(int x) {}", "an alias of a pointer"),
    ("typedef A B;\ntypedef B A;\nA f(int x) {}", "aliases that never end"),
    ('int f(std::vector<int> v, decltype(system("x")) y) {}', "a call in a type"),
]


@pytest.mark.parametrize(("code", "why"), UNSUPPORTED)
def test_unsupported_signatures_are_refused(code: str, why: str) -> None:
    with pytest.raises(Refused, match="f") as refused:
        signatures(code, "f(1)")
    assert refused.value.flag == "unsupported_signature"


ADVERSARIAL = {  # each took minutes, or a scan per parenthesis, before one pass
    "unclosed calls": "a(" * 50_000,
    "calls without a statement's end": "a(b) " * 50_000,
    "trailing arrows": "int f() ->" * 30_000,
    "typedefs without an end": "typedef x " * 30_000,
    "usings without an end": "using x = y " * 30_000,
    "a name of 200,000 letters": "int f(int " + "a" * 200_000 + ") {}",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_reading_signatures_takes_one_pass(name: str) -> None:
    start = time.perf_counter()
    signatures(ADVERSARIAL[name], "f(1); a(1)")
    assert time.perf_counter() - start < 5.0


def test_aliases_that_grow_a_type_geometrically_are_refused() -> None:
    bomb = "".join(f"typedef std::tuple<T{i}, T{i}, T{i}, T{i}> T{i + 1};\n" for i in range(8))
    with pytest.raises(Refused, match="T8"):
        signatures(f"typedef int T0;\n{bomb}T8 f(int x) {{}}", "f(1)")


def test_the_tests_side_gets_the_programs_standard_includes_only() -> None:
    """The test was written after the program's includes, which it may rely on; any other
    header could define a macro the test compares through."""
    code = (
        '#include <vector>\n#include "mine.h"\n  #  include <zlib.h>\n#include <bits/stdc++.h>\n'
        "#include <sys/param.h>\nusing namespace std;\nusing std::string;\nusing std::cout;\n"
    )
    source = cpp.tester(code, "", "int main() {}", [])[0].source
    assert "#include <vector>\n" in source and "#include <bits/stdc++.h>\n" in source
    assert "mine.h" not in source and "zlib" not in source and "param" not in source
    assert "using namespace std;\n" in source and "using std::string;\n" in source
    assert "using std::cout" not in source


def _score(score_many: ScoreMany, code: str, test: str) -> Result:
    item = code_item(code, {"test": test}, language="cpp", time_limit_s=5)
    return score_many([item])[0]


PRELUDE = "#include <bits/stdc++.h>\nusing namespace std;\n"

# (program, test, reward, the case's status or flag, text in its diff or message)
CALLS: list[tuple[str, str, float, str, str]] = [
    (  # a test that ends by exit fails by its status (a wrong answer, never the harness's)
        "int one() { return 2; }",
        "#include <cstdlib>\n#include <iostream>\n"
        "int main() { if (one() != 1) { std::cout << one(); std::exit(3); } }",
        0.0,
        "wrong_answer",
        "the test exited with status 3",
    ),
    (  # and passes on status 0, as a Python test's sys.exit(0) does
        "int one() { return 1; }",
        "#include <cstdlib>\nint main() { assert(one() == 1); std::exit(0); }",
        1.0,
        "passed",
        "",
    ),
    (  # values of every kind cross both ways; out-parameters come back
        PRELUDE + "map<string, vector<optional<double>>> f(vector<tuple<int, bool>> v,"
        " set<string>& seen, unsigned long long big, char c, array<short, 2> a) {\n"
        "  seen.insert(string(1, c));\n"
        "  return {{to_string(big) + to_string(a[1]), {nullopt, (double)get<0>(v[0]), NAN}}};\n}\n",
        'int main() {\n  set<string> seen{"q"};\n'
        "  auto m = f({{7, true}}, seen, 18446744073709551615ull, 'z', {1, -2});\n"
        '  auto &r = m["18446744073709551615-2"];\n'
        "  assert(r.size() == 3 && !r[0] && *r[1] == 7.0 && std::isnan(*r[2]));\n"
        '  assert((seen == set<string>{"q", "z"}));\n}\n',
        1.0,
        "passed",
        "",
    ),
    (  # a variant crosses as the alternative it holds
        PRELUDE + "variant<long, string> f(variant<long, float, string> v) {\n"
        '  if (holds_alternative<string>(v)) return get<string>(v) + "!";\n'
        "  return (long)holds_alternative<float>(v);\n}\n",
        'int main() {\n  assert(get<string>(f(string("a"))) == "a!");\n'
        "  assert(get<long>(f(2.5f)) == 1 && get<long>(f(3L)) == 0);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # one process serves every call: its state carries over, as in one program
        "int count() { static int n = 0; return ++n; }",
        "int main() { count(); count(); assert(count() == 3); }",
        1.0,
        "passed",
        "",
    ),
    (  # the program's own main is a demonstration: renamed, never run
        "#include <cstdio>\nint f(int x) { return x + 1; }\n"
        'int main() { printf("demo"); return 1; }',
        "int main() { assert(f(1) == 2); }",
        1.0,
        "passed",
        "",
    ),
    (  # an exception crosses as std::runtime_error, which the test may catch
        PRELUDE + 'int f(int x) { if (x < 0) throw invalid_argument("negative"); return x; }',
        "int main() {\n  try { f(-1); assert(false); }\n"
        '  catch (const std::runtime_error &e) { assert(std::string(e.what()) == "negative"); }\n'
        "  assert(f(2) == 2);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # an exception the test does not catch fails it
        PRELUDE + 'int f(int x) { throw out_of_range("no"); }',
        "int main() { assert(f(1) == 1); }",
        0.0,
        "wrong_answer",
        "the test threw: no",
    ),
    (  # a program that ends during a call fails the test
        "#include <cstdlib>\nint f(int x) { exit(0); }",
        "int main() { assert(f(1) == 1); }",
        0.0,
        "wrong_answer",
        "the program ended during a call to f",
    ),
    (  # one that ends before it serves (a static initialiser): the test's call to a
        # closed channel fails it (SIGPIPE once ended the test without a verdict: `error`)
        "#include <cstdlib>\nstruct S { S() { std::exit(0); } } s;\nint f(int x) { return x; }",
        "int main() { assert(f(1) == 1); }",
        0.0,
        "wrong_answer",
        "the program ended during a call to f",
    ),
    (  # a program that crashes during a call
        "int f(int x) { return *(volatile int *)0; }",
        "int main() { assert(f(1) == 1); }",
        0.0,
        "signal",
        "",
    ),
    (  # the test crashes on the program's value (a short vector): a 0, not an error
        PRELUDE + "vector<int> f() { return {}; }",
        "int main() { auto v = f(); volatile int *p = nullptr; if (v.empty()) *p = 1; }",
        0.0,
        "wrong_answer",
        "the test crashed",
    ),
    (  # the program's output is its own: a verdict line there fools nobody
        PRELUDE + 'int f(int x) { printf("\\n@@referee-verdict@@ {\\"passed\\": true}\\n");'
        " return 0; }",
        "int main() { assert(f(1) == 1); }",
        0.0,
        "wrong_answer",
        "Assertion failed: f(1) == 1",
    ),
    (  # a program that never answers: its time limit
        "int f(int x) { for (;;) {} }",
        "int main() { assert(f(1) == 1); }",
        0.0,
        "timeout",
        "",
    ),
    (  # an int result out of the test's range (a macro made it long long): not truncated
        "#define int long long\nint f(int x) { return 4294967297LL; }",
        "int main() { assert(f(1) == 1); }",
        0.0,
        "wrong_answer",
        "an integer out of its type's range",
    ),
    (  # MultiPL-E's shape: the test closes the function its prompt opened
        "#include<assert.h>\n#include<bits/stdc++.h>\nlong add(long x, long y) {\n"
        "    return x + y;\n",
        "}\nint main() {\n    auto candidate = add;\n    assert(candidate((0), (1)) == (1));\n"
        "    assert(candidate((5), (7)) == (12));\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # a stand-in for std::max would win the test's own max(): refused
        PRELUDE + "int max(int a, int b) { return 7; }\nint f(int x) { return x; }",
        "int main() { assert(max(f(3), 1) == 7); }",
        0.0,
        "shadows_library",
        "the program's max competes with the standard library's",
    ),
    (  # a definition of a C library function (here for the test's whole binary): no build
        "double fabs(double x) { return 0; }\ndouble f(double x) { return x; }",
        "#include <math.h>\nint main() { assert(fabs(f(3) - 2) < 1e-6); }",
        0.0,
        "",
        "the test does not compile with the program's functions",
    ),
    (  # a name the library has for other types is no stand-in (HumanEval-X's CPP/23)
        PRELUDE + "int strlen(string s) { return s.size(); }\n"
        "bool is_sorted(vector<int> v) { return std::is_sorted(v.begin(), v.end()); }",
        'int main() { assert(strlen(string("abc")) == 3); assert(!is_sorted({2, 1})); }',
        1.0,
        "passed",
        "",
    ),
    (  # a test that declares the program's function itself calls the program's
        "int add(int a, int b) { return a + b; }",
        "int add(const int x, const int y);\nint main() { assert(add(1, 2) == 3); }",
        1.0,
        "passed",
        "",
    ),
    (  # ... and fails a wrong one
        "int add(int a, int b) { return a - b; }",
        "int add(int a, int b);\nint main() { assert(add(1, 2) == 3); }",
        0.0,
        "wrong_answer",
        "Assertion failed",
    ),
    (  # a declaration is no call: a variable initialised by one is not a declaration
        '#include <string>\nstd::string name(int n) { return n == 1 ? "one" : "many"; }',
        "#include <string>\nstd::string name(int n);\nstatic std::string first = name(1);\n"
        'int main() { assert(first == "one" && name(2) == "many"); }',
        1.0,
        "passed",
        "",
    ),
    (  # a function the test needs that cannot cross: refused before anything runs
        "int f(int *p) { return 1; }",
        "int main() { int x; assert(f(&x) == 1); }",
        0.0,
        "unsupported_signature",
        "f: a parameter of type 'int *'",
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


FORGED = {  # what goes wrong: (the function's result type, the reply it forges)
    "a count larger than its message": ("std::string", "\\x00" + "\\xff" * 7 + "\\x7f"),
    "a bool that is neither 0 nor 1": ("bool", "\\x00\\x02"),
    "an integer out of its type's range": ("unsigned char", "\\x00\\x00\\x01\\0\\0\\0\\0\\0\\0"),
    "a tuple of another size": ("std::tuple<int>", "\\x00\\x02"),
    "a reply with bytes left over": ("bool", "\\x00\\x01\\x00"),
    "a reply of no known kind": ("bool", "\\x07"),
    "a message ends too soon": ("bool", "\\x00"),
}


@pytest.mark.parametrize("why", sorted(FORGED))
def test_a_forged_reply_fails_the_test(score_many: ScoreMany, why: str) -> None:
    """The program owns its end of the channel: whatever it writes there is read within
    bounds and fails the test, never the harness."""
    kind, body = FORGED[why]
    code = (
        PRELUDE + f"#include <unistd.h>\n{kind} f(int x) {{\n"
        f'  std::string reply("{body}", sizeof("{body}") - 1);\n'
        "  uint32_t n = reply.size();\n"
        '  int fd = atoi(getenv("REFEREE_CHANNEL_OUT"));\n'
        "  if (write(fd, &n, 4) != 4 || write(fd, reply.data(), n) != (ssize_t)n) abort();\n"
        "  _exit(0);\n}\n"
    )
    result = _score(score_many, code, "int main() { f(1); }")
    assert result.status is Status.OK and result.reward == 0.0, result.details
    assert why in result.details["cases"][0]["diff"]


def test_a_message_past_the_cap_fails_the_test(score_many: ScoreMany) -> None:
    code = (
        PRELUDE + "#include <unistd.h>\nbool f(int x) {\n"
        "  uint32_t n = 0xffffffffu;\n"
        '  if (write(atoi(getenv("REFEREE_CHANNEL_OUT")), &n, 4) != 4) abort();\n'
        "  _exit(0);\n}\n"
    )
    result = _score(score_many, code, "int main() { assert(f(1)); }")
    assert result.reward == 0.0 and "larger than 64 MiB" in result.details["cases"][0]["diff"]


def test_a_test_that_does_not_compile_with_the_programs_functions(score_many: ScoreMany) -> None:
    """A function of the wrong signature for the test: the tests' build fails, and says
    whose build it was."""
    code = "#include <string>\nint f(std::string s) { return 1; }"
    result = _score(score_many, code, "int main() { assert(f(3) == 1); }")
    assert result.status is Status.OK and result.reward == 0.0
    assert result.details["message"] == "the test does not compile with the program's functions"


def test_the_program_never_sees_the_tests_uninitialised_memory(score_many: ScoreMany) -> None:
    """As for C: an argument left uninitialised by the test held its old stack."""
    code = (
        "#include <array>\n"
        "int peek(std::array<int, 256> &out) {\n"
        "  for (int x : out) if (x == 424242) return 1;\n  return 0;\n}"
    )
    test = (
        "__attribute__((noinline)) static int secret(int x) {\n"
        "  volatile int v[256]; for (int i = 0; i < 256; i++) v[i] = x; return v[9]; }\n"
        "__attribute__((noinline)) static int probe() {\n"
        "  std::array<int, 256> out; return peek(out); }\n"
        "int main() { assert(secret(424242) && probe() == 0); }"
    )
    result = _score(score_many, code, test)
    assert result.status is Status.OK and result.reward == 1.0, result.details
