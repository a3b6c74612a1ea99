"""Go assert tests, side by side in one run: `bench.cpp_asserts`'s two paths (referee's
two linked sandboxes, `verifiers.code.boundary.go`, against the test appended to the
program, one ``go build`` and one run per response, no isolation) on Go problems whose
functions take and return numbers, strings, slices and maps.

Usage: python -m bench.go_asserts [--group 8] [--out bench/results]
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.cpp_asserts import arguments, run
from referee.verifiers import Item

# (right answer, the bug a wrong one has as (old, new), the test)
PROBLEMS: list[tuple[str, tuple[str, str], str]] = [
    (
        "func fib(n int) int64 {\n\tvar a, b int64 = 0, 1\n"
        "\tfor ; n > 0; n-- {\n\t\ta, b = b, a+b\n\t}\n\treturn a\n}",
        ("a, b = b, a+b", "a, b = b, a+b+1"),
        "func main() {\n\tif fib(0) != 0 || fib(10) != 55 || fib(50) != 12586269025 {\n"
        '\t\tpanic("fail")\n\t}\n}',
    ),
    (
        "func flipCase(s string) string {\n\tout := []rune{}\n\tfor _, c := range s {\n"
        "\t\tif unicode.IsUpper(c) {\n\t\t\tout = append(out, unicode.ToLower(c))\n"
        "\t\t} else {\n\t\t\tout = append(out, unicode.ToUpper(c))\n\t\t}\n\t}\n"
        "\treturn string(out)\n}",
        ("unicode.ToUpper(c)", "c"),
        'func main() {\n\tif flipCase("") != "" || flipCase("Hello!") != "hELLO!" {\n'
        '\t\tpanic("fail")\n\t}\n}',
    ),
    (
        "func sortedCopy(xs []int) []int {\n\tout := append([]int{}, xs...)\n"
        "\tsort.Ints(out)\n\treturn out\n}",
        ("sort.Ints(out)", "sort.Sort(sort.Reverse(sort.IntSlice(out)))"),
        "func main() {\n\tgot := sortedCopy([]int{3, 1, 2})\n"
        '\tif len(got) != 3 || got[0] != 1 || got[2] != 3 {\n\t\tpanic("fail")\n\t}\n}',
    ),
    (
        "func wordCounts(words []string) map[string]int {\n\tm := map[string]int{}\n"
        "\tfor _, w := range words {\n\t\tm[w]++\n\t}\n\treturn m\n}",
        ("m[w]++", "m[w] = 1"),
        'func main() {\n\tm := wordCounts([]string{"a", "b", "a"})\n'
        '\tif len(m) != 2 || m["a"] != 2 || m["b"] != 1 {\n\t\tpanic("fail")\n\t}\n}',
    ),
]

PREAMBLE = (
    'package main\n\nimport (\n\t"sort"\n\t"unicode"\n)\n\n'
    "var _ = sort.Ints\nvar _ = unicode.IsUpper\n\n"
)


def items(group: int) -> list[tuple[Item, bool]]:
    """``group`` responses per problem, every other one wrong; with whether it is right."""
    made = []
    for right, (old, new), test in PROBLEMS:
        for index in range(group):
            code = PREAMBLE + (right if index % 2 == 0 else right.replace(old, new))
            item = Item(
                verifier="code",
                response=f"```go\n{code}\n```",
                reference={"test": test},
                params={"language": "go"},
            )
            made.append((item, index % 2 == 0))
    return made


def naive_one(item: Item, folder: Path, index: int) -> bool:
    """Append the test, ``go build``, run: exit status 0 is a pass."""
    code = item.response_text().split("```go\n", 1)[1].rsplit("\n```", 1)[0]
    source = folder / f"item{index}" / "main.go"
    source.parent.mkdir()
    source.write_text(f"{code}\n{item.reference['test']}\n")
    binary = folder / f"item{index}" / "main"
    built = subprocess.run(
        ["go", "build", "-o", str(binary), str(source)],
        capture_output=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": "/root", "GO111MODULE": "off", "CGO_ENABLED": "0"},
    )
    if built.returncode != 0:
        return False
    ran = subprocess.run([str(binary)], capture_output=True, timeout=10, check=False)
    return ran.returncode == 0


def main() -> None:
    args = arguments()
    work = items(args.group)
    run(work, "go_asserts", args.group, args.out, ("test appended, go build and run", naive_one))


if __name__ == "__main__":
    main()
