"""C assert tests, side by side in one run: `bench.cpp_asserts`'s two paths (referee's
two linked sandboxes, `verifiers.code.boundary.c`, against the test appended to the
program, one ``gcc`` and one run per response, no isolation) on C problems whose
functions take and return numbers and strings.

Usage: python -m bench.c_asserts [--group 8] [--out bench/results]
"""

from __future__ import annotations

from bench.cpp_asserts import arguments, items, run

PREAMBLE = "#include <stdio.h>\n#include <string.h>\n#include <ctype.h>\n"

# (right answer, the bug a wrong one has as (old, new), the test)
PROBLEMS: list[tuple[str, tuple[str, str], str]] = [
    (
        "long long fib(int n) { long long a = 0, b = 1; while (n--) { b += a; a = b - a; } "
        "return a; }",
        ("b += a;", "b += a + 1;"),
        "int main() {\n  assert(fib(0) == 0);\n  assert(fib(10) == 55);\n"
        "  assert(fib(50) == 12586269025LL);\n}\n",
    ),
    (
        "char *flip_case(char *s) {\n  for (char *p = s; *p; p++)\n"
        "    *p = isupper(*p) ? tolower(*p) : toupper(*p);\n  return s;\n}",
        ("toupper(*p)", "*p"),
        '#include <string.h>\nint main() {\n  char a[] = "", b[] = "Hello!";\n'
        '  assert(strcmp(flip_case(a), "") == 0);\n'
        '  assert(strcmp(flip_case(b), "hELLO!") == 0);\n}\n',
    ),
    (
        "int count_vowels(const char *s) {\n  int n = 0;\n"
        '  for (; *s; s++) n += strchr("aeiouAEIOU", *s) != NULL;\n  return n;\n}',
        ("n += ", "n -= "),
        '#include <string.h>\nint main() {\n  assert(count_vowels("") == 0);\n'
        '  assert(count_vowels("Education") == 5);\n}\n',
    ),
    (
        "int is_prime(long n) {\n  if (n < 2) return 0;\n"
        "  for (long d = 2; d * d <= n; d++) if (n % d == 0) return 0;\n  return 1;\n}",
        ("d * d <= n", "d * d < n"),
        "int main() {\n  assert(!is_prime(1) && is_prime(2) && is_prime(97));\n"
        "  assert(!is_prime(49) && !is_prime(121));\n}\n",
    ),
]


def main() -> None:
    args = arguments()
    run(items(args.group, PROBLEMS, "c", PREAMBLE), "c_asserts", args.group, args.out)


if __name__ == "__main__":
    main()
