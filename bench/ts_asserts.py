"""TypeScript assert tests (MultiPL-E's HumanEval-TS shape), side by side in one run.

GRPO groups of responses to a few problems (half right, half with a bug):

1. referee: the `code` verifier through `LocalScorer`, the program and the test in two
   linked sandboxes on JavaScript's boundary (the program transpiled by its build, the
   test by the tester);
2. naive, the trainer's usual glue: the test appended to the program, transpiled with
   the TypeScript compiler API and run by ``node``, one process each, no isolation, as
   many threads as cores (what the policy can attack: tests/integrity/corpus/typescript).

Usage: python -m bench.ts_asserts [--group 8] [--out bench/results]
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.cpp_asserts import arguments, run
from referee.sandbox.languages import TS_TRANSPILE
from referee.verifiers import Item

HEADER = "declare var require: any;\nconst assert = require('node:assert');\n"

# (right answer, the bug a wrong one has as (old, new), the test's asserts)
PROBLEMS: list[tuple[str, tuple[str, str], str]] = [
    (
        "function has_close_elements(numbers: number[], threshold: number): boolean {\n"
        "  for (let i = 0; i < numbers.length; i++)\n"
        "    for (let j = i + 1; j < numbers.length; j++)\n"
        "      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;\n"
        "  return false;\n}\n",
        ("< threshold", "> threshold"),
        "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),true);\n"
        "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05),false);\n",
    ),
    (
        "function flip_case(s: string): string {\n  return [...s].map((c) =>\n"
        "    c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()).join('');\n}\n",
        ("c.toLowerCase() :", "c :"),
        "  assert.deepEqual(candidate(''),'');\n"
        "  assert.deepEqual(candidate('Hello!'),'hELLO!');\n",
    ),
    (
        "function sort_array(a: number[]): number[] {\n  return [...a].sort((x, y) => x - y);\n}\n",
        ("x - y", "y - x"),
        "  assert.deepEqual(candidate([3, 1, 2]),[1, 2, 3]);\n"
        "  assert.deepEqual(candidate([]),[]);\n",
    ),
    (
        "function fib(n: number): number {\n  let a = 0, b = 1;\n"
        "  while (n-- > 0) { [a, b] = [b, a + b]; }\n  return a;\n}\n",
        ("[b, a + b]", "[b, a + b + 1]"),
        "  assert.deepEqual(candidate(10),55);\n  assert.deepEqual(candidate(1),1);\n",
    ),
]


def items(group: int) -> list[tuple[Item, bool]]:
    """``group`` responses per problem, every other one wrong; with whether it is right."""
    made = []
    for right, (old, new), asserts in PROBLEMS:
        name = right.split("(")[0].removeprefix("function ")
        test = f"{HEADER}\nfunction test() {{\n  let candidate = {name};\n{asserts}}}\n\ntest();\n"
        for index in range(group):
            code = right if index % 2 == 0 else right.replace(old, new)
            item = Item(
                verifier="code",
                response=f"```typescript\n{code}\n```",
                reference={"test": test},
                params={"language": "typescript"},
            )
            made.append((item, index % 2 == 0))
    return made


def naive_one(item: Item, folder: Path, index: int) -> bool:
    """Append the test, transpile, run: exit status 0 is a pass."""
    code = item.response_text().split("```typescript\n", 1)[1].rsplit("\n```", 1)[0]
    source = folder / f"item{index}.ts"
    source.write_text(f"{code}\n{item.reference['test']}")
    built = subprocess.run(
        ["node", "-e", TS_TRANSPILE, str(source)], capture_output=True, check=False
    )
    if built.returncode != 0:
        return False
    ran = subprocess.run(
        ["node", str(source.with_suffix(".js"))], capture_output=True, timeout=10, check=False
    )
    return ran.returncode == 0


def main() -> None:
    args = arguments()
    naive = ("test appended, transpiled and run", naive_one)
    run(items(args.group), "ts_asserts", args.group, args.out, naive)


if __name__ == "__main__":
    main()
