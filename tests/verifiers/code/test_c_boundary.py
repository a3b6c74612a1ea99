"""C assert tests run apart from the program (`verifiers.code.boundary.c`): the
signatures read from the program, the values that cross, and every way a call can end."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import pytest

from referee.verifiers import Result, Status
from referee.verifiers.code.boundary import c
from referee.verifiers.code.boundary.c import CType, Kind, Signature, signatures
from referee.verifiers.code.boundary.declarations import Refused
from tests.verifiers.code.conftest import ScoreMany, code_item

S = Signature
INT = CType("int", Kind.SIGNED)
DOUBLE = CType("double", Kind.FLOAT)
INTS = CType("int*", Kind.ARRAY, written=True, item=INT)
STRING = CType("char *", Kind.STRING, written=True)
ARRAY_OF_INT = CType("int *", Kind.ARRAY, written=True, item=INT)

SIGNATURES: list[tuple[str, str, list[Signature]]] = [
    ("int add(int a, int b) { return a + b; }", "add(1, 2)", [S("add", INT, (INT, INT))]),
    (  # every kind; names dropped, specifiers too; (void)
        "static inline unsigned long long f(const char *s, char *out, _Bool b, long double x,"
        " size_t n, char c, unsigned u) {}\nvoid g(void) {}\nconst char *h() {}",
        "f(); g(); h();",
        [
            S(
                "f",
                CType("unsigned long long", Kind.UNSIGNED),
                (
                    CType("const char *", Kind.STRING),
                    CType("char *", Kind.STRING, written=True),
                    CType("_Bool", Kind.BOOL),
                    CType("long double", Kind.FLOAT),
                    CType("size_t", Kind.UNSIGNED),
                    CType("char", Kind.SIGNED),
                    CType("unsigned", Kind.UNSIGNED),
                ),
            ),
            S("g", CType("void", Kind.VOID), ()),
            S("h", CType("const char *", Kind.STRING), ()),
        ],
    ),
    (  # aliases are read through: typedef and #define
        "typedef long long ll;\n#define STR char *\nll f(STR s, const ll n) {}",
        "f(s, 1)",
        [
            S(
                "f",
                CType("long long", Kind.SIGNED),
                (CType("char *", Kind.STRING, written=True), CType("const long long", Kind.SIGNED)),
            )
        ],
    ),
    (  # arrays of numbers: pointers, or declared as arrays of one dimension
        "#define MAX 10\n"
        "void sort(int arr[], int n) {}\nint g(const double xs[MAX], unsigned char *b) {}",
        "sort(a, 1); g(x, y);",
        [
            S("sort", CType("void", Kind.VOID), (ARRAY_OF_INT, INT)),
            S(
                "g",
                INT,
                (
                    CType("const double *", Kind.ARRAY, item=CType("const double", Kind.FLOAT)),
                    CType(
                        "unsigned char *",
                        Kind.ARRAY,
                        written=True,
                        item=CType("unsigned char", Kind.UNSIGNED),
                    ),
                ),
            ),
        ],
    ),
    (  # only what the test names and does not define itself
        "int helper(int x) { return x; }\nint issame(int a, int b) { return 1; }\n"
        "int f(int x) { return helper(x); }",
        "int issame(int a, int b) { return a == b; }\nint main() { assert(issame(f(1), 1)); }",
        [S("f", INT, (INT,))],
    ),
    (  # comments, literals and macros are not definitions
        '// int f(int x) {}\nconst char *s = "int f(int x) {}";\n#define F(x) int f(x) {}\n',
        "f(1)",
        [],
    ),
    (  # LeetCode's returned array: its length is what `returnSize` holds after the call
        "int* twoSum(int* nums, int numsSize, int target, int* returnSize) { return 0; }\n"
        "char **names(int n, int* returnSize) { return 0; }\n"
        "int counts(char **a, const char** b) { return 0; }\n"
        "int **rows(int* returnSize, int** returnColumnSizes) { return 0; }\n"
        "double *halves(const int *a, int n, long *returnSize) { return 0; }",
        "twoSum(); names(); counts(); rows(); halves();",
        [
            S(
                "twoSum",
                CType("int*", Kind.ARRAY, written=True, item=INT, counted_by=3),
                (INTS, INT, INT, INTS),
            ),
            S(
                "names",
                CType(
                    "char **",
                    Kind.ARRAY,
                    written=True,
                    item=STRING,
                    counted_by=1,
                ),
                (INT, INTS),
            ),
            S(
                "counts",
                INT,
                (
                    CType("char **", Kind.ARRAY, written=True, item=STRING),
                    CType("const char**", Kind.ARRAY, written=True, item=STRING),
                ),
            ),
            S(
                "rows",
                CType(
                    "int **",
                    Kind.ARRAY,
                    written=True,
                    item=CType("int *", Kind.ARRAY, written=True, item=INT),
                    counted_by=0,
                    columns_by=1,
                ),
                (INTS, CType("int**", Kind.COLUMNS, written=True)),
            ),
            S(
                "halves",
                CType("double *", Kind.ARRAY, written=True, item=DOUBLE, counted_by=2),
                (
                    CType("const int *", Kind.ARRAY, item=CType("const int", Kind.SIGNED)),
                    INT,
                    CType("long *", Kind.ARRAY, written=True, item=CType("long", Kind.SIGNED)),
                ),
            ),
        ],
    ),
]


@pytest.mark.parametrize(("code", "test", "expected"), SIGNATURES)
def test_signatures(code: str, test: str, expected: list[Signature]) -> None:
    assert signatures(code, test) == expected


UNSUPPORTED = [
    ("int *f(int n) {}", "a pointer result"),
    ("int *f(int n) {}", "a returned array: its length is nowhere"),
    ("int *f(int *size) {}", "a returned array whose length is not LeetCode's returnSize"),
    ("int *f(const int *returnSize) {}", "a returnSize the function cannot write"),
    ("int *f(double *returnSize) {}", "a returnSize that is no integer"),
    ("int **f(int *returnSize) {}", "rows whose lengths are nowhere"),
    ("int **f(int *returnSize, int **columns) {}", "lengths not where LeetCode leaves them"),
    ("char ***f(int *returnSize, int **returnColumnSizes) {}", "rows of strings"),
    ("char **f(int n) {}", "strings whose count is nowhere"),
    ("int f(int a[2][3]) {}", "an array of two dimensions"),
    ("int f(void *p) {}", "a pointer to no type"),
    ("int f(char ***words) {}", "a pointer to pointers to pointers"),
    ("int f(char *const *words) {}", "strings whose pointers the function cannot change"),
    ("int f(int **rows) {}", "rows of numbers"),
    ("unsigned char *f(int n) {}", "bytes, not a string"),
    ("struct P { int x; };\nstruct P f(int n) {}", "a struct"),
    ("int f(int (*g)(int)) {}", "a function pointer"),
    ("typedef int *ip;\nip f(int x) {}", "an alias of a pointer"),
    ("typedef A B;\ntypedef B A;\nA f(int x) {}", "aliases that never end"),
    ("int f(int x, ...) {}", "variadic"),
]


@pytest.mark.parametrize(("code", "why"), UNSUPPORTED)
def test_unsupported_signatures_are_refused(code: str, why: str) -> None:
    with pytest.raises(Refused, match="f") as refused:
        signatures(code, "f(1)")
    assert refused.value.flag == "unsupported_signature"


def test_a_function_the_boundary_links_to_is_refused() -> None:
    """A stub named ``write`` would be the one the boundary's own writes call."""
    with pytest.raises(Refused, match="write") as refused:
        signatures("long write(int fd, const char *s, size_t n) { return 0; }", "write(1, s, 1)")
    assert refused.value.flag == "shadows_library"


ADVERSARIAL = {
    "unclosed calls": "a(" * 50_000,
    "calls without a statement's end": "a(b) " * 50_000,
    "typedefs without an end": "typedef x " * 30_000,
    "a name of 200,000 letters": "int f(int " + "a" * 200_000 + ") {}",
    "stars": "char " + "*" * 100_000 + " f(int x) {}",
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_reading_signatures_takes_one_pass(name: str) -> None:
    start = time.perf_counter()
    with contextlib.suppress(Refused):
        signatures(ADVERSARIAL[name], "f(1); a(1)")
    assert time.perf_counter() - start < 5.0


def test_the_tests_side_gets_the_standard_headers_and_its_own_directives_first() -> None:
    """The test was written after the program's includes, which it may rely on; any other
    header of the program's could define a macro the test compares through. The test's
    leading directives (a feature macro, its includes) come before every header."""
    code = '#include <string.h>\n#include "mine.h"\n#include <sys/param.h>\n#include <math.h>\n'
    test = "#define _GNU_SOURCE\n#include <ctype.h>\n\nint main() {}\n#include <search.h>\n"
    source = c.tester(code, "", test, [])[0].source
    assert source.startswith("#define _GNU_SOURCE\n#include <ctype.h>\n")
    assert "#include <search.h>\n#include <string.h>\n#include <math.h>\n" in source
    assert "mine.h" not in source and "param" not in source
    assert source.index("<stdlib.h>") < source.index(c.HEADER) < source.index("referee_test_main")


def _score(score_many: ScoreMany, code: str, test: str) -> Result:
    item = code_item(code, {"test": test}, language="c", time_limit_s=5)
    return score_many([item])[0]


# (program, test, reward, the case's status or flag, text in its diff or message)
CALLS: list[tuple[str, str, float, str, str]] = [
    (  # numbers of every kind cross both ways, at their types' limits
        "#include <stdbool.h>\n#include <limits.h>\n"
        "unsigned long long big(unsigned long long x) { return x; }\n"
        "long long low(long long x) { return x; }\n"
        "char next(char c) { return c + 1; }\n"
        "bool flip(bool b) { return !b; }\n"
        "float third(float x) { return x / 3; }\n"
        "double half(double x) { return x / 2; }\n"
        "short neg(short s) { return -s; }\n",
        "#include <math.h>\nint main() {\n"
        "  assert(big(ULLONG_MAX) == ULLONG_MAX && low(LLONG_MIN) == LLONG_MIN);\n"
        "  assert(next('a') == 'b' && flip(false) && !flip(true));\n"
        "  assert(third(1.0f) == 1.0f / 3 && half(1e300) == 5e299 && isnan(half(NAN)));\n"
        "  assert(neg(-32767) == 32767);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # strings: in, written back in place, returned as the argument or a new one, NULL
        "#include <string.h>\n#include <stdlib.h>\n"
        "char *upper(char *s) { for (char *p = s; *p; p++) *p -= 32; return s; }\n"
        "const char *skip(const char *s) { return s + 1; }\n"
        "char *copy(const char *s) { return s == NULL ? NULL : strdup(s); }\n"
        "int length(const char *s) { return s == NULL ? -1 : (int)strlen(s); }\n"
        "void cut(char *s) { s[1] = 0; }\n",
        "#include <string.h>\nint main() {\n"
        '  char a[] = "abc";\n  assert(upper(a) == a && strcmp(a, "ABC") == 0);\n'
        '  const char *t = "xyz";\n  assert(skip(t) == t + 1);\n'
        '  char *d = copy(t);\n  assert(d != t && strcmp(d, "xyz") == 0 && copy(NULL) == NULL);\n'
        '  assert(length(NULL) == -1 && length("") == 0 && length("h\\xc3\\xa9") == 3);\n'
        '  char e[] = "long";\n  cut(e);\n  assert(strcmp(e, "l") == 0);\n}\n',
        1.0,
        "passed",
        "",
    ),
    (  # a test that ends by exit fails by its status (a wrong answer, never the harness's)
        "int one(void) { return 2; }",
        "#include <stdlib.h>\n#include <stdio.h>\n"
        'int main() { if (one() != 1) { printf("got %d\\n", one()); exit(3); } }',
        0.0,
        "wrong_answer",
        "the test exited with status 3",
    ),
    (  # and passes on status 0, as a Python test's sys.exit(0) does
        "int one(void) { return 1; }",
        "#include <stdlib.h>\nint main() { assert(one() == 1); exit(0); }",
        1.0,
        "passed",
        "",
    ),
    (  # one process serves every call: its state carries over, as in one program
        "int count(void) { static int n = 0; return ++n; }",
        "int main() { count(); count(); assert(count() == 3); }",
        1.0,
        "passed",
        "",
    ),
    (  # the program's own main is a demonstration: renamed, never run
        "#include <stdio.h>\nint f(int x) { return x + 1; }\n"
        'int main() { printf("demo"); return 1; }',
        "int main() { assert(f(1) == 2); }",
        1.0,
        "passed",
        "",
    ),
    (  # MultiPL-E's shape: the test closes the function its prompt opened
        "#include <assert.h>\nlong add(long x, long y) {\n    return x + y;\n",
        "}\nint main() {\n    assert(add(0, 1) == 1);\n    assert(add(5, 7) == 12);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # a buffer's size is the test's: filled as in one program (C's output parameter)
        "#include <stdio.h>\n#include <string.h>\n"
        'void show(int n, char *out) { sprintf(out, "<%d>", n); }\n'
        'void grow(char *s) { strcat(s, "cd"); }',
        "#include <string.h>\n#include <stdlib.h>\nint main() {\n"
        '  char out[16];\n  show(42, out);\n  assert(strcmp(out, "<42>") == 0);\n'
        '  char s[8] = "ab";\n  grow(s);\n  assert(strcmp(s, "abcd") == 0);\n'
        '  char *h = malloc(6);\n  strcpy(h, "xy");\n  grow(h);\n'
        '  assert(strcmp(h, "xycd") == 0);\n}\n',
        1.0,
        "passed",
        "",
    ),
    (  # a string written back longer than the test's buffer: the test fails, its memory
        # untouched
        '#include <string.h>\nvoid grow(char *s) { strcpy(s, "longer than four"); }',
        'int main() { char s[5] = "ab"; grow(s); }',
        0.0,
        "wrong_answer",
        "a string written back longer than its buffer",
    ),
    (  # a program that ends during a call fails the test
        "#include <stdlib.h>\nint f(int x) { exit(0); }",
        "int main() { assert(f(1) == 1); }",
        0.0,
        "wrong_answer",
        "the program ended during a call to f",
    ),
    (  # one that ends before it serves (a constructor): the call to a closed channel
        "#include <stdlib.h>\n__attribute__((constructor)) static void end(void) { exit(0); }\n"
        "int f(int x) { return x; }",
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
    (  # the test crashes on the program's value: a 0, not an error
        "const char *f(void) { return 0; }",
        "#include <string.h>\nint main() { assert(strlen(f()) == 0); }",
        0.0,
        "wrong_answer",
        "the test crashed",
    ),
    (  # the program's output is its own: a verdict line there fools nobody
        "#include <stdio.h>\n"
        'int f(int x) { printf("\\n@@referee-verdict@@ {\\"passed\\": true}\\n");'
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
    (  # a test's main that returns non-zero fails
        "int f(int x) { return x; }",
        "int main() { return f(3); }",
        0.0,
        "wrong_answer",
        "the test's main returned non-zero",
    ),
    (  # a definition of a C library function the test compares through: no build (in
        # the program's process it was the strcmp the test called)
        "int strcmp(const char *a, const char *b) { return 0; }\nchar *f(char *s) { return s; }",
        '#include <string.h>\nint main() { char s[] = "ab"; assert(strcmp(f(s), "ba") == 0); }',
        0.0,
        "",
        "the test does not compile with the program's functions",
    ),
    (  # the same without the test's include: the standard headers are there anyway
        "int abs(int x) { return 7; }\nint f(int x) { return x; }",
        "int main() { assert(abs(f(-7)) == 7); }",
        0.0,
        "",
        "the test does not compile with the program's functions",
    ),
    (  # a function the test needs that cannot cross: refused before anything runs
        "int f(int **p) { return 1; }",
        "int main() { int *x = 0; assert(f(&x) == 1); }",
        0.0,
        "unsupported_signature",
        "f: a parameter of type 'int **'",
    ),
    (  # arrays cross with as many items as the test's object holds, and come back;
        # out-parameters are arrays of one; NULL stays NULL
        "#include <stdbool.h>\n"
        "void sort(int a[], int n) { for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++)"
        " if (a[j] < a[i]) { int t = a[i]; a[i] = a[j]; a[j] = t; } }\n"
        "long sum(const long *a, int n) { long s = 0; for (int i = 0; i < n; i++) s += a[i];"
        " return s; }\n"
        "void stats(const double *xs, int n, double *mean, int *count) { double s = 0;"
        " for (int i = 0; i < n; i++) s += xs[i]; *mean = n ? s / n : 0; *count = n; }\n"
        "bool all(const bool *b, int n) { for (int i = 0; i < n; i++) if (!b[i]) return false;"
        " return true; }\n",
        "#include <stdlib.h>\nint main() {\n"
        "  int a[] = {3, 1, 2};\n  sort(a, 3);\n  assert(a[0] == 1 && a[1] == 2 && a[2] == 3);\n"
        "  assert(sum((long[]){1, 2, 3, 4}, 4) == 10 && sum(NULL, 0) == 0);\n"
        "  double mean = 0; int count = 0;\n  stats((double[]){1.0, 2.0}, 2, &mean, &count);\n"
        "  assert(mean == 1.5 && count == 2);\n"
        "  int *h = malloc(4 * sizeof *h);\n  for (int i = 0; i < 4; i++) h[i] = 4 - i;\n"
        "  sort(h, 4);\n  assert(h[0] == 1 && h[3] == 4);\n"
        "  int b[] = {9, 3, 1};\n  sort(b + 1, 2);\n  assert(b[0] == 9 && b[1] == 1);\n"
        "  assert(all((bool[]){true, true}, 2) && !all((bool[]){true, false}, 2));\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # LeetCode's returned array: the test frees it; NULL; a length the program got wrong
        "#include <stdlib.h>\n"
        "int* twoSum(int* nums, int numsSize, int target, int* returnSize) {\n"
        "  for (int i = 0; i < numsSize; i++) for (int j = i + 1; j < numsSize; j++)\n"
        "    if (nums[i] + nums[j] == target) {\n"
        "      int *r = malloc(2 * sizeof *r); r[0] = i; r[1] = j; *returnSize = 2;\n"
        "      return r; }\n  *returnSize = 0; return NULL;\n}\n",
        "#include <stdlib.h>\nint main() {\n  int nums[] = {2, 7, 11, 15}, n = -1;\n"
        "  int *r = twoSum(nums, 4, 9, &n);\n  assert(n == 2 && r[0] == 0 && r[1] == 1);\n"
        "  free(r);\n  assert(twoSum(nums, 4, 100, &n) == NULL && n == 0);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # LeetCode's returned strings: each and the array the test's to free; NULL ones
        "#include <stdlib.h>\n#include <string.h>\n"
        "char **words(int n, int *returnSize) {\n  char **out = malloc(n * sizeof *out);\n"
        '  for (int i = 0; i < n; i++) out[i] = i == 1 ? NULL : strdup(i ? "b" : "a");\n'
        "  *returnSize = n; return out;\n}\n"
        "const char **none(int *returnSize) { *returnSize = 3; return NULL; }\n",
        "#include <stdlib.h>\n#include <string.h>\nint main() {\n  int n = 0;\n"
        "  char **w = words(3, &n);\n"
        '  assert(n == 3 && strcmp(w[0], "a") == 0 && w[1] == NULL && strcmp(w[2], "b") == 0);\n'
        "  free(w[0]); free(w[2]); free(w);\n  assert(none(&n) == NULL && n == 3);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # a literal passed as `char *` to a function that leaves it alone (it was written
        # back whole, and the test died writing to it: a right answer scored 0)
        "#include <string.h>\nint length(char *s) { return (int)strlen(s); }",
        'int main() { assert(length("leetcode") == 8); }',
        1.0,
        "passed",
        "",
    ),
    (  # arrays of strings go in; those the function changed come back as new strings,
        # its pointers as it left them; a literal passed as `char *` is never written
        "#include <stdbool.h>\n#include <string.h>\n#include <stdlib.h>\n"
        "bool has(char *s, char **words, int n) {\n"
        "  for (int i = 0; i < n; i++) if (words[i] && !strcmp(words[i], s)) return true;\n"
        "  return false;\n}\n"
        "static int order(const void *a, const void *b) {\n"
        "  return strcmp(*(char *const *)a, *(char *const *)b); }\n"
        "void sort_words(const char **words, int n) {"
        " qsort(words, n, sizeof *words, order); }\n"
        "void shout(char **words, int n) { for (int i = 0; i < n; i++) words[i][0] -= 32; }\n",
        "#include <string.h>\nint main() {\n"
        '  char *dict[] = {"leet", NULL, "code"};\n'
        '  assert(has("code", dict, 3) && !has("cod", dict, 3) && dict[1] == NULL);\n'
        '  const char *w[] = {"pear", "apple", "fig"};\n  const char *fig = w[2];\n'
        "  sort_words(w, 3);\n"
        '  assert(!strcmp(w[0], "apple") && !strcmp(w[1], "fig") && !strcmp(w[2], "pear"));\n'
        '  char a[] = "ab", b[] = "cd";\n  char *both[] = {a, b};\n  shout(both, 2);\n'
        '  assert(!strcmp(both[0], "Ab") && !strcmp(both[1], "Cd") && fig != 0);\n}\n',
        1.0,
        "passed",
        "",
    ),
    (  # LeetCode's returned rows: each row as long as returnColumnSizes says, and that
        # array the test's own (the test frees them all); one the program left NULL
        "#include <stdlib.h>\n"
        "int **subsets(int *nums, int numsSize, int *returnSize, int **returnColumnSizes) {\n"
        "  int total = 1 << numsSize, **out = malloc(total * sizeof *out);\n"
        "  *returnColumnSizes = malloc(total * sizeof **returnColumnSizes);\n"
        "  for (int m = 0; m < total; m++) { int c = 0; out[m] = malloc(8 * sizeof **out);\n"
        "    for (int i = 0; i < numsSize; i++) if (m >> i & 1) out[m][c++] = nums[i];\n"
        "    (*returnColumnSizes)[m] = c; }\n  *returnSize = total; return out;\n}\n"
        "int **bare(int *returnSize, int **returnColumnSizes) {\n"
        "  static int row[] = {1}; static int *rows[] = {row};\n"
        "  *returnSize = 1; *returnColumnSizes = NULL; return rows;\n}\n",
        "#include <stdlib.h>\nint main() {\n  int nums[] = {1, 2}, n = 0, *cols = 0;\n"
        "  int **r = subsets(nums, 2, &n, &cols);\n"
        "  assert(n == 4 && cols[0] == 0 && cols[3] == 2 && r[3][0] == 1 && r[3][1] == 2);\n"
        "  for (int i = 0; i < n; i++) free(r[i]);\n  free(r); free(cols);\n"
        "  r = bare(&n, &cols);\n  assert(n == 1 && cols == NULL && r != NULL);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # a length past what the program returned reads its own memory, never the test's
        "static int big[20000000];\n"
        "int *f(int *returnSize) { *returnSize = 20000000; return big; }\n"
        "int *g(int *returnSize) { static int two[] = {7, 8}; *returnSize = -1; return two; }",
        "int main() { int n; assert(g(&n) != 0 && n == -1); f(&n); }",
        0.0,
        "runtime_error",
        "the program ended during a call to f",
    ),
    (  # functions named like the serving code's own names (its arguments, counts, reply)
        "#include <string.h>\nint result(int x) { return x + 1; }\n"
        "int in(int a0) { return result(a0) * 2; }\n"
        "int l0(char *s) { return (int)strlen(s); }\n"
        "int c0(const int *a0, int n) { int s = 0; for (int i = 0; i < n; i++) s += a0[i];"
        " return s; }\n"
        "int *out(int *returnSize) { static int r[] = {5}; *returnSize = 1; return r; }\n"
        "int **w0(int *returnSize, int **returnColumnSizes) { static int row[] = {3};"
        " static int *rows[] = {row}; static int cols[] = {1}; *returnSize = 1;"
        " *returnColumnSizes = cols; return rows; }",
        "#include <string.h>\n#include <stdlib.h>\nint main() {\n"
        '  int a[] = {1, 2}; int n = 0; int *cols = 0; char s[] = "abc";\n'
        "  assert(result(1) == 2 && in(1) == 4 && l0(s) == 3 && c0(a, 2) == 3);\n"
        "  assert(out(&n)[0] == 5 && n == 1);\n"
        "  int **r = w0(&n, &cols);\n  assert(n == 1 && cols[0] == 1 && r[0][0] == 3);\n}\n",
        1.0,
        "passed",
        "",
    ),
    (  # a length past the array: the program reads zeros, never the test's other data
        "int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i];"
        " return s; }",
        "int main() { int secret[] = {40}; int a[] = {1, 1}; assert(sum(a, 3) == 42); }",
        0.0,
        "wrong_answer",
        "Assertion failed",
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
    "a count larger than its message": ("char *", "\\x00\\x01" + "\\xff" * 7 + "\\x7f"),
    "a bool that is neither 0 nor 1": ("_Bool", "\\x00\\x02"),
    "an integer out of its type's range": ("unsigned char", "\\x00\\x00\\x01\\0\\0\\0\\0\\0\\0"),
    "a reply with bytes left over": ("_Bool", "\\x00\\x01\\x00"),
    "a reply of no known kind": ("_Bool", "\\x07"),
    "a message ends too soon": ("_Bool", "\\x00"),
    "a string returned from no argument": (
        "char *",
        "\\x00\\x02\\x05\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0",
    ),
    "a string returned past its argument": (
        "char *",
        "\\x00\\x02\\0\\0\\0\\0\\x09\\0\\0\\0\\0\\0\\0\\0",
    ),
}


@pytest.mark.parametrize("why", sorted(FORGED))
def test_a_forged_reply_fails_the_test(score_many: ScoreMany, why: str) -> None:
    """The program owns its end of the channel: whatever it writes there is read within
    bounds and fails the test, never the harness."""
    kind, body = FORGED[why]
    code = (
        "#include <stdlib.h>\n#include <stdint.h>\n#include <unistd.h>\n"
        f"{kind} f(const char *s) {{\n"
        f'  static const char reply[] = "{body}";\n'
        "  uint32_t n = sizeof reply - 1;\n"
        '  int fd = atoi(getenv("REFEREE_CHANNEL_OUT"));\n'
        "  if (write(fd, &n, 4) != 4 || write(fd, reply, n) != (ssize_t)n) abort();\n"
        "  _exit(0);\n}\n"
    )
    result = _score(score_many, code, 'int main() { f("abc"); }')
    assert result.status is Status.OK and result.reward == 0.0, result.details
    assert why in result.details["cases"][0]["diff"]


def test_a_message_past_the_cap_fails_the_test(score_many: ScoreMany) -> None:
    code = (
        "#include <stdlib.h>\n#include <stdint.h>\n#include <unistd.h>\nint f(int x) {\n"
        "  uint32_t n = 0xffffffffu;\n"
        '  if (write(atoi(getenv("REFEREE_CHANNEL_OUT")), &n, 4) != 4) abort();\n'
        "  _exit(0);\n}\n"
    )
    result = _score(score_many, code, "int main() { assert(f(1)); }")
    assert result.reward == 0.0 and "larger than 64 MiB" in result.details["cases"][0]["diff"]


def test_the_program_never_sees_the_tests_uninitialised_memory(score_many: ScoreMany) -> None:
    """An out-parameter goes with what the test's object holds: left uninitialised, that
    was the test's old stack (an earlier helper's expected values). The test's side is
    built with automatic variables zeroed, so the program sees zeros."""
    code = (
        "int peek(const int *out) {\n"
        "  for (int i = 0; i < 256; i++) if (out[i] == 424242) return 1;\n  return 0;\n}"
    )
    test = (
        "__attribute__((noinline)) static int secret(int x) {\n"
        "  volatile int v[256]; for (int i = 0; i < 256; i++) v[i] = x; return v[9]; }\n"
        "__attribute__((noinline)) static int probe(void) { int out[256]; return peek(out); }\n"
        "int main() { assert(secret(424242) && probe() == 0); }"
    )
    result = _score(score_many, code, test)
    assert result.status is Status.OK and result.reward == 1.0, result.details


def test_an_array_the_compiler_cannot_size_is_the_references_fault(
    score_many: ScoreMany,
) -> None:
    """A pointer from elsewhere has no size at the call: its items cannot be sent without
    reading past what the test meant, so the test cannot run as written (never a 0)."""
    code = "int first(const int *a) { return a[0]; }"
    test = (
        "__attribute__((noinline)) static int via(const int *p) { return first(p); }\n"
        "int main() { int a[] = {7}; assert(via(a) == 7); }"
    )
    result = _score(score_many, code, test)
    assert result.status is Status.INVALID and result.error is not None, result
    assert "whose size the compiler does not know" in result.error.message
