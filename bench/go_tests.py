"""Go tests in MultiPL-E's HumanEval-Go shape (``func TestX(t *testing.T)``, no ``main``),
side by side in one run: `bench.cpp_asserts`'s two paths, referee's two linked sandboxes
(the test's side built as ``go test -c`` would, `sandbox.gobuild`) against MultiPL-E's own
way, the program and the test in one ``_test.go`` file, ``go test -c`` and the binary run
per response, no isolation. Run it with ``REFEREE_SANDBOX_RUNTIME_DIR`` set to the runtime
and without, to see what the runtime's library and ``referee-gotestmain`` save.

Usage: python -m bench.go_tests [--group 8] [--out bench/results]
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.cpp_asserts import arguments, run
from bench.go_asserts import PREAMBLE, PROBLEMS
from referee.verifiers import Item

# For each of go_asserts' problems, its checks as MultiPL-E writes a Go test: a table of
# (actual, expected) compared through fmt, a subtest each.
CHECKS = [
    ("fib", ["fib(0)", "fib(10)", "fib(50)"], ["0", "55", "12586269025"]),
    ("flipCase", ['flipCase("")', 'flipCase("Hello!")'], ['""', '"hELLO!"']),
    ("sortedCopy", ["sortedCopy([]int{3, 1, 2})"], ["[]int{1, 2, 3}"]),
    ("wordCounts", ['wordCounts([]string{"a", "b", "a"})'], ['map[string]int{"a": 2, "b": 1}']),
]


def go_test(name: str, actual: list[str], expected: list[str]) -> str:
    """A test of MultiPL-E's shape."""
    rows = "".join(
        f"     {{ actual: {a}, expected: {e} }},\n" for a, e in zip(actual, expected, strict=True)
    )
    return (
        'import (\n\t"fmt"\n\t"testing"\n)\n\n'
        f"func Test{name.title()}(t *testing.T) {{\n"
        "\ttype test struct {\n\t\tactual   interface{}\n\t\texpected interface{}\n\t}\n"
        f"   tests := []test{{\n{rows}   }}\n\n"
        "\tfor i, tc := range tests {\n"
        '\t\tt.Run(fmt.Sprintf("test num % d", i), func(t *testing.T) {\n'
        '\t\t\tif fmt.Sprintf("%v", tc.actual) != fmt.Sprintf("%v", tc.expected) {\n'
        "\t\t\t\tt.Errorf(\"expected '%s', got '%s'\", tc.expected, tc.actual)\n"
        "\t\t\t}\n\t\t})\n\t}\n}\n"
    )


def items(group: int) -> list[tuple[Item, bool]]:
    """``group`` responses per problem, every other one wrong; with whether it is right."""
    made = []
    for (right, (old, new), _), check in zip(PROBLEMS, CHECKS, strict=True):
        test = go_test(*check)
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
    """MultiPL-E's way: program and test in one ``_test.go`` file, ``go test -c``, run."""
    code = item.response_text().split("```go\n", 1)[1].rsplit("\n```", 1)[0]
    test = str(item.reference["test"]).replace('import (\n\t"fmt"\n\t"testing"\n)\n', "")
    code = code.replace('import (\n\t"sort"', 'import (\n\t"fmt"\n\t"testing"\n\t"sort"', 1)
    source = folder / f"item{index}" / "main_test.go"
    source.parent.mkdir()
    source.write_text(f"{code}\n{test}\n")
    binary = folder / f"item{index}" / "main.test"
    built = subprocess.run(
        ["go", "test", "-c", "-o", str(binary), str(source)],
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
    run(items(args.group), "go_tests", args.group, args.out, ("one _test.go, go test", naive_one))


if __name__ == "__main__":
    main()
