"""Java assert tests run apart from the program (`verifiers.code.boundary.java`): the
members read from the program, the values that cross, and every way a call can end."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

import pytest

from referee.sandbox import Sandbox, SandboxSettings
from referee.verifiers import Result, Status
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code.boundary import java
from referee.verifiers.code.boundary.declarations import Refused
from referee.verifiers.code.boundary.java import Member, exports
from referee.verifiers.code.multipl_e import finished
from referee.verifiers.code.verifier import CodeVerifier
from tests.verifiers.code.conftest import ScoreMany, code_item

M = Member
LIST_LONG = "java.util.ArrayList<java.lang.Long>"
MAIN_TEST = "public class Main {\n    public static void main(String[] a) { new Solution(); }\n}\n"

EXPORTS: list[tuple[str, str, list[Member], str | None]] = [
    (  # a test with its own Main: every member of the classes it names that crosses
        "import java.util.*;\npublic class Solution {\n    private int seen;\n"
        "    public Solution(int start) { seen = start; }\n    Solution() {}\n"
        "    public int add(int a, int b) { return a + b; }\n"
        "    static List<String> words(String[] parts, Map<String, Integer> counts) "
        "{ return null; }\n    private void hidden() {}\n    <T> T any(T x) { return x; }\n"
        "    long sum(long... xs) { return 0; }\n"
        "    class Inner { int add(int a) { return a; } }\n}\n"
        "class Unused { int f() { return 1; } }",
        MAIN_TEST,
        [
            M("Solution", "<init>", False, ("int",), "void"),
            M("Solution", "<init>", False, (), "void"),
            M("Solution", "add", False, ("int", "int"), "int"),
            M(
                "Solution",
                "words",
                True,
                ("java.lang.String[]", "java.util.Map<java.lang.String, java.lang.Integer>"),
                "java.util.List<java.lang.String>",
            ),
            M("Solution", "sum", False, ("long[]",), "long", variadic=True),
        ],
        None,
    ),
    (  # without a constructor of its own, the default one
        "class Solution { int f() { return 1; } }",
        MAIN_TEST,
        [M("Solution", "f", False, (), "int"), M("Solution", "<init>", False, (), "void")],
        None,
    ),
    (  # MultiPL-E's shape: the static methods of the class the prompt leaves open
        "import java.util.*;\nclass Problem {\n    public static ArrayList<Long> sorted("
        "ArrayList<Long> xs) {\n        return xs;\n    }\n    public static long twice(long x) {\n"
        "        return 2 * x;\n",
        "    }\n    public static void main(String[] args) {\n    assert(twice(1l) == 2l);\n"
        "    }\n\n}\n",
        [
            M("Problem", "sorted", True, (LIST_LONG,), LIST_LONG),
            M("Problem", "twice", True, ("long",), "long"),
        ],
        "Problem",
    ),
    (  # a class named like a library one the test imports is not the test's
        "import java.util.*;\n"
        "class Arrays { static List<Integer> asList(int a) { return null; } }\n"
        "class Solution { int f() { return 1; } }",
        "import java.util.*;\npublic class Main {\n    public static void main(String[] a) {\n"
        "        new Solution().f(); Arrays.asList(1);\n    }\n}\n",
        [M("Solution", "f", False, (), "int"), M("Solution", "<init>", False, (), "void")],
        None,
    ),
]


@pytest.mark.parametrize(("code", "test", "members", "host"), EXPORTS)
def test_exports(code: str, test: str, members: list[Member], host: str | None) -> None:
    code, test = finished(code, test)
    assert exports(code, test) == (members, host)


UNSUPPORTED = [
    "class Solution { Runnable f() { return null; } }",
    "class Solution { int f(Solution other) { return 0; } }",
    "class Solution { <T> T f(T x) { return x; } }",
    "class Solution { int f(List<? extends Number> xs) { return 0; } }",
    "class Solution { int f(List xs) { return 0; } }",
    "class Solution { int f(java.util.function.Function<Integer, Integer> g) { return 0; } }",
]


@pytest.mark.parametrize("code", UNSUPPORTED)
def test_a_member_the_test_calls_that_cannot_cross_is_refused(code: str) -> None:
    test = (
        "public class Main {\n"
        "    public static void main(String[] a) { new Solution().f(null); }\n}\n"
    )
    with pytest.raises(Refused) as refused:
        exports(code, test)
    assert refused.value.flag == "unsupported_signature"


def test_a_test_of_neither_shape_is_the_references_fault() -> None:
    with pytest.raises(ItemInvalid, match="no `class Main` found"):
        exports("class Solution {}", "assert true;")


def test_the_tests_system_exit_is_the_harness_s() -> None:
    test = "public class Main {\n    public static void main(String[] a) { System.exit(3); }\n}\n"
    source = java.tester("class S {}", "", test, [], None)[0].source
    assert "RefereeBoundary.exit(3)" in source and "class RefereeTestMain" in source


def _score(score_many: ScoreMany, code: str, test: str) -> Result:
    item = code_item(f"```java\n{code}\n```", {"test": test}, language="java", time_limit_s=15)
    return score_many([item])[0]


_VALUES = """import java.util.*;
class Solution {
    static long[] limits() { return new long[] {Long.MIN_VALUE, Long.MAX_VALUE}; }
    static double half(double x) { return x / 2; }
    static String echo(String s) { return s; }
    static char next(char c) { return (char) (c + 1); }
    static Integer maybe(Integer x) { return x == null ? null : x + 1; }
    static int[][] grid(int n) {
        int[][] g = new int[n][];
        for (int i = 0; i < n; i++) g[i] = new int[i];
        return g;
    }
    static Map<String, List<Integer>> group(List<String> words) {
        Map<String, List<Integer>> out = new TreeMap<>();
        for (String w : words) out.computeIfAbsent(w, k -> new ArrayList<>()).add(w.length());
        return out;
    }
    static Set<Optional<Boolean>> flags() {
        return new HashSet<>(Arrays.asList(Optional.of(true), Optional.empty()));
    }
    static byte tiny(short s) { return (byte) s; }
    static float third(float x) { return x / 3; }
}
"""

_VALUES_TEST = """import java.util.*;
public class Main {
    public static void main(String[] a) {
        long[] l = Solution.limits();
        if (l[0] != Long.MIN_VALUE || l[1] != Long.MAX_VALUE) throw new AssertionError("limits");
        assert Double.isNaN(Solution.half(Double.NaN)) && Solution.half(1e308) == 5e307;
        String odd = "h\\u00e9\\ud83d\\ude00\\ud800x";
        assert Solution.echo(odd).equals(odd) && Solution.echo(null) == null : "echo";
        assert Solution.next('a') == 'b' && Solution.maybe(null) == null : "boxes";
        assert Solution.maybe(4) == 5 : "box";
        int[][] g = Solution.grid(3);
        if (g.length != 3 || g[2].length != 2) throw new AssertionError("grid");
        Map<String, List<Integer>> m = Solution.group(Arrays.asList("ab", "c", "ab"));
        assert m.equals(Map.of("ab", List.of(2, 2), "c", List.of(1))) : "group " + m;
        assert Solution.flags().equals(Set.of(Optional.of(true), Optional.empty())) : "flags";
        assert Solution.tiny((short) 5) == 5 && Solution.third(1f) == 1f / 3 : "tiny";
    }
}
"""

_IN_PLACE = """import java.util.*;
class Solution {
    private int count;
    Solution() {}
    Solution(int start) { count = start; }
    int next() { return ++count; }
    static void sortIn(int[] xs) { Arrays.sort(xs); }
    static void fill(List<Integer> xs) { xs.add(9); Collections.sort(xs); }
    static void bump(Map<String, Integer> m) { m.merge("a", 1, Integer::sum); }
}
"""

_IN_PLACE_TEST = """import java.util.*;
public class Main {
    public static void main(String[] a) {
        int[] xs = {3, 1, 2};
        Solution.sortIn(xs);
        if (xs[0] != 1 || xs[2] != 3) throw new AssertionError("sort");
        List<Integer> list = new ArrayList<>(List.of(2, 1));
        Solution.fill(list);
        if (!list.equals(List.of(1, 2, 9))) throw new AssertionError("fill " + list);
        Map<String, Integer> m = new HashMap<>(Map.of("a", 1));
        Solution.bump(m);
        if (m.get("a") != 2) throw new AssertionError("bump");
        Solution one = new Solution(), two = new Solution(10);
        one.next();
        if (one.next() != 2 || two.next() != 11) throw new AssertionError("objects");
    }
}
"""

# (program, test, reward, the case's status or a flag, text in its diff or message)
CALLS: list[tuple[str, str, float, str, str]] = [
    (_VALUES, _VALUES_TEST, 1.0, "passed", ""),
    (_IN_PLACE, _IN_PLACE_TEST, 1.0, "passed", ""),
    (  # the program's exception is thrown again by its class: the test may expect it
        "class Solution { static int div(int a, int b) { if (b == 0) throw new "
        'IllegalArgumentException("zero"); return a / b; } }',
        "public class Main {\n    public static void main(String[] a) {\n        try {\n"
        '            Solution.div(1, 0);\n            throw new AssertionError("no throw");\n'
        '        } catch (IllegalArgumentException e) { assert e.getMessage().equals("zero"); }\n'
        "    }\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # and fails the test that does not expect it
        "class Solution {\n"
        '    static int div(int a, int b) { throw new IllegalStateException("boom"); }\n}',
        "public class Main {\n    public static void main(String[] a) { Solution.div(1, 1); }\n}\n",
        0.0,
        "wrong_answer",
        "java.lang.IllegalStateException: boom",
    ),
    (  # a program that ends during a call fails the test, whatever the test catches
        "class Solution { static int div(int a, int b) { System.exit(0); return 0; } }",
        "public class Main {\n    public static void main(String[] a) {\n"
        "        try { Solution.div(1, 1); } catch (Throwable e) {}\n    }\n}\n",
        0.0,
        "early_exit",
        "the program ended during a call to Solution.div",
    ),
    (  # a test that ends by System.exit fails by its status
        "class Solution { static int one() { return 2; } }",
        "public class Main {\n    public static void main(String[] a) {\n"
        "        if (Solution.one() != 1) System.exit(3);\n    }\n}\n",
        0.0,
        "wrong_answer",
        "the test exited with status 3",
    ),
    (  # Object values cross with their classes (MultiPL-E's filter_integers)
        "import java.util.*;\nclass Problem {\n"
        "    public static ArrayList<Long> filterIntegers(ArrayList<Object> values) {\n"
        "        ArrayList<Long> out = new ArrayList<>();\n"
        "        for (Object v : values) if (v instanceof Long) out.add((Long) v);\n"
        "        return out;\n",
        "    }\n    public static void main(String[] args) {\n"
        "    assert(filterIntegers((new ArrayList<Object>(Arrays.asList((Object)4l, (Object)new "
        "HashMap<Long,Long>(), (Object)new ArrayList<Long>(Arrays.asList()), (Object)23.2f, "
        '(Object)9l, (Object)"adasd")))).equals((new ArrayList<Long>(Arrays.asList((long)4l, '
        "(long)9l)))));\n    }\n\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # but never an object of the program's own class
        "class Mine {}\nclass Solution { static Object f() { return new Mine(); } }",
        "public class Main {\n    public static void main(String[] a) { Solution.f(); }\n}\n",
        0.0,
        "custom_type",
        "returned a Mine, which cannot cross",
    ),
    (  # an assertion failing in a thread the test started fails the test
        "class Solution { static int one() { return 2; } }",
        "public class Main {\n    public static void main(String[] a) throws Exception {\n"
        "        Thread t = new Thread(() -> { assert Solution.one() == 1; });\n"
        "        t.start();\n        t.join();\n    }\n}\n",
        0.0,
        "wrong_answer",
        "a thread of the test threw java.lang.AssertionError",
    ),
    (  # a list of the program's own class crosses as its items: its equals stays there
        "import java.util.*;\nclass Mine extends ArrayList<Integer> {\n"
        "    public boolean equals(Object o) { return true; }\n}\n"
        "class Solution { static List<Integer> f() { return new Mine(); } }",
        "import java.util.*;\npublic class Main {\n    public static void main(String[] a) {\n"
        "        assert Solution.f().equals(List.of(1, 2));\n    }\n}\n",
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


FORGED = {  # what goes wrong: (the function's result type, the reply it forges, as bytes)
    "a count larger than its message": ("String", [0, 1, 0x7F, *[0xFF] * 7]),
    "a bool that is neither 0 nor 1": ("boolean", [0, 2]),
    "an integer out of its type's range": ("int", [0, 0, 0, 0, 1, 0, 0, 0, 0]),
    "a message with bytes left over": ("boolean", [0, 1, 0]),
    "a reply of no known kind": ("boolean", [7]),
    "a message ends too soon": ("boolean", [0]),
    "a presence byte that is neither 0 nor 1": ("Integer", [0, 5]),
    "a message larger than 64 MiB": ("boolean", None),
}


@pytest.mark.parametrize("why", sorted(FORGED))
def test_a_forged_reply_fails_the_test(score_many: ScoreMany, why: str) -> None:
    """The program owns its end of the channel: whatever it writes there is read within
    bounds and fails the test, never the harness."""
    kind, body = FORGED[why]
    message = (
        "new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff}"
        if body is None
        else "new byte[] {0, 0, 0, " + ", ".join(f"(byte) {b}" for b in [len(body), *body]) + "}"
    )
    code = (
        "class Solution {\n"
        f"    static {kind} f(String s) throws Exception {{\n"
        '        java.io.FileOutputStream out = new java.io.FileOutputStream("/proc/self/fd/" '
        '+ System.getenv("REFEREE_CHANNEL_OUT"));\n'
        f"        out.write({message});\n        out.flush();\n"
        "        Runtime.getRuntime().halt(0);\n        throw new Exception();\n    }\n}\n"
    )
    test = 'public class Main {\n    public static void main(String[] a) { Solution.f("x"); }\n}\n'
    result = _score(score_many, code, test)
    assert result.status is Status.OK and result.reward == 0.0, result.details
    assert why in result.details["cases"][0]["diff"], result.details


RUNTIME = Path(os.environ.get("REFEREE_TEST_RUNTIME_DIR", "/opt/referee/runtime"))
"""The runtime scripts/test.sh builds: javatuples comes from it."""

_PAIR_PROMPT = (
    "import java.util.*;\nimport org.javatuples.*;\n\nclass Problem {\n"
    "    public static Pair<Long, Long> sumProduct(ArrayList<Long> numbers) {\n"
    "        long s = 0, p = 1;\n        for (long n : numbers) { s += n; p *= n; }\n"
    "        return Pair.with(s, p);\n"
)
_PAIR_TEST = (
    "    }\n    public static void main(String[] args) {\n"
    "    assert(sumProduct((new ArrayList<Long>(Arrays.asList((long)3l, (long)5l))))"
    ".equals((Pair.with(8l, 15l))));\n    }\n\n}\n"
)


def test_javatuples_pairs_cross() -> None:
    """MultiPL-E's HumanEval-Java returns javatuples' Pair (from the sandbox's runtime)."""
    settings = SandboxSettings(backend="bwrap", python_fast_path=False, runtime_dir=RUNTIME)
    right, wrong = (_PAIR_PROMPT, _PAIR_PROMPT.replace("p *= n", "p += n"))
    with Sandbox(settings) as box:
        results = CodeVerifier(sandbox=box).score(
            [
                code_item(f"```java\n{c}\n```", {"test": _PAIR_TEST}, language="java")
                for c in (right, wrong)
            ]
        )
    assert [r.reward for r in results] == [1.0, 0.0], [r.details for r in results]


ADVERSARIAL = {  # each read in bounded time, refused or not, never a RecursionError
    "a run of words": "class Solution {\n int " + "a " * 40_000 + "\n}",
    "an unclosed type parameter": "class Solution {\n <" + "a " * 40_000 + "\n}",
    "unclosed calls": "class Solution {\n" + "f(" * 40_000 + "\n}",
    "a long throws clause": "class Solution { int f() throws " + "a, " * 40_000 + "\n}",
    "lists nested 40 deep": "class Solution { int f("
    + "List<" * 40
    + "Integer"
    + ">" * 40
    + " x) { return 0; } }",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_reading_members_takes_one_pass(name: str) -> None:
    """One regular expression over the class body was quadratic: 16 KB of words took 9 s
    of the host's time. Each member is read within bounds now."""
    test = MAIN_TEST.replace("new Solution();", "new Solution().f(null);")
    start = time.perf_counter()
    with contextlib.suppress(Refused):
        exports(ADVERSARIAL[name], test)
    assert time.perf_counter() - start < 5.0


def test_a_type_nested_too_deep_is_refused() -> None:
    with pytest.raises(Refused, match="nested deeper"):
        exports(ADVERSARIAL["lists nested 40 deep"], MAIN_TEST.replace("();", "().f(null);"))
