"""C++ assert tests (HumanEval-X's shape), side by side in one run.

GRPO groups of responses to a few C++ problems (half right, half with a bug), each
problem's test asserting on the function's results:

1. referee: the `code` verifier through `LocalScorer` (the embedded ``sandbox`` pool):
   the program and the test built apart and run in two linked sandboxes
   (`verifiers.code.boundary.cpp`), the tests' build shared by a group whose
   signatures agree (the build cache);
2. naive, the trainer's usual glue: the test appended to the program, one ``g++`` and
   one run per response, no isolation, as many threads as cores. It is also what the
   policy can attack (the test is in its process: tests/integrity/corpus/cpp).

Usage: python -m bench.cpp_asserts [--group 8] [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from referee.service.execution.local import LocalScorer
from referee.service.settings import Settings
from referee.verifiers import Item

PREAMBLE = "#include <stdio.h>\n#include <vector>\n#include <string>\n#include <algorithm>\n"
PREAMBLE += "using namespace std;\n"

# (right answer, the bug a wrong one has as (old, new), the test)
PROBLEMS: list[tuple[str, tuple[str, str], str]] = [
    (
        "vector<int> sort_array(vector<int> a) { sort(a.begin(), a.end()); return a; }",
        ("return a;", "reverse(a.begin(), a.end()); return a;"),
        "bool issame(vector<int> a, vector<int> b) { return a == b; }\n"
        "int main() {\n  assert(issame(sort_array({}), {}));\n"
        "  assert(issame(sort_array({3, 1, 2}), {1, 2, 3}));\n"
        "  assert(issame(sort_array({5, -1, 5, 0}), {-1, 0, 5, 5}));\n}\n",
    ),
    (
        "string flip_case(string s) {\n  for (auto &c : s) c = isupper(c) ? tolower(c) : "
        "toupper(c);\n  return s;\n}",
        ("toupper(c)", "c"),
        'int main() {\n  assert(flip_case("") == "");\n'
        '  assert(flip_case("Hello!") == "hELLO!");\n}\n',
    ),
    (
        "long long fib(int n) { long long a = 0, b = 1; while (n--) { b += a; a = b - a; } "
        "return a; }",
        ("b += a;", "b += a + 1;"),
        "int main() {\n  assert(fib(0) == 0);\n  assert(fib(10) == 55);\n"
        "  assert(fib(50) == 12586269025LL);\n}\n",
    ),
    (
        "float mean(vector<float> v) { float s = 0; for (float x : v) s += x; "
        "return v.empty() ? 0 : s / v.size(); }",
        ("s / v.size()", "s / (v.size() + 1)"),
        "#include <math.h>\nint main() {\n  assert(fabs(mean({1, 2, 3, 4}) - 2.5) < 1e-4);\n"
        "  assert(fabs(mean({}) - 0) < 1e-4);\n}\n",
    ),
]


def items(
    group: int,
    problems: list[tuple[str, tuple[str, str], str]] = PROBLEMS,
    language: str = "cpp",
    preamble: str = PREAMBLE,
) -> list[tuple[Item, bool]]:
    """``group`` responses per problem, every other one wrong; with whether it is right."""
    made = []
    for right, (old, new), test in problems:
        for index in range(group):
            code = preamble + (right if index % 2 == 0 else right.replace(old, new))
            item = Item(
                verifier="code",
                response=f"```{language}\n{code}\n```",
                reference={"test": "#undef NDEBUG\n#include <assert.h>\n" + test},
                params={"language": language},
            )
            made.append((item, index % 2 == 0))
    return made


def bench_referee(work: list[tuple[Item, bool]], workers: int) -> dict[str, Any]:
    settings = Settings(sandbox_workers=workers, cpu_workers=1, item_timeout_s=60)
    with LocalScorer(settings) as scorer:
        start = time.perf_counter()
        results = scorer.score([item for item, _ in work], deadline_s=1200)
        wall = time.perf_counter() - start
    right = sum((r.reward == 1.0) == ok for r, (_, ok) in zip(results, work, strict=True))
    return {"wall_s": wall, "items_per_s": len(work) / wall, "right": right}


COMPILERS = {
    "cpp": ("g++", "-O2", "-std=c++17"),
    "c": ("gcc", "-O2", "-std=gnu17"),
}


def naive_one(item: Item, folder: Path, index: int) -> bool:
    """Append the test, compile, run: exit status 0 is a pass."""
    language = item.params["language"]
    source = folder / f"item{index}.{language}"
    code = item.response_text().split(f"```{language}\n", 1)[1].rsplit("\n```", 1)[0]
    source.write_text(f"{code}\n{item.reference['test']}")
    binary = folder / f"item{index}"
    built = subprocess.run(
        [*COMPILERS[language], "-o", str(binary), str(source), "-lm"],
        capture_output=True,
        check=False,
    )
    if built.returncode != 0:
        return False
    ran = subprocess.run([str(binary)], capture_output=True, timeout=10, check=False)
    return ran.returncode == 0


Naive = Callable[[Item, Path, int], bool]
"""One response the naive way: (the item, a scratch folder, its index) -> passed."""


def bench_naive(work: list[tuple[Item, bool]], threads: int, one: Naive) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=threads) as pool:
            passed = list(pool.map(lambda a: one(a[1][0], Path(tmp), a[0]), enumerate(work)))
        wall = time.perf_counter() - start
    right = sum(p == ok for p, (_, ok) in zip(passed, work, strict=True))
    return {"wall_s": wall, "items_per_s": len(work) / wall, "right": right}


def run(
    work: list[tuple[Item, bool]],
    name: str,
    group: int,
    out: Path,
    naive: tuple[str, Naive] | None = None,
) -> None:
    """Both paths on ``work``, printed and written to ``out``/``name``.json; ``naive``
    names and runs the baseline's one response (default: appended, compiled, run)."""
    cores = os.cpu_count() or 1
    compiler = COMPILERS.get(work[0][0].params["language"], ("",))[0]
    label, one = naive or (f"test appended, {compiler} and run", naive_one)
    rows = {
        "referee (two linked sandboxes an item)": bench_referee(work, cores),
        f"naive: {label}, {cores} threads": bench_naive(work, cores, one),
    }
    problems = len(work) // group
    print(f"{problems} problems x {group} responses, {cores} cores, {platform.platform()}")
    print(f"{'path':50} {'wall s':>8} {'items/s':>8} {'scored right':>13}")
    for path, row in rows.items():
        print(f"{path:50} {row['wall_s']:8.2f} {row['items_per_s']:8.2f} {row['right']:>13}")
    out.mkdir(parents=True, exist_ok=True)
    record = {"rows": rows, "cores": cores, "group": group}
    (out / f"{name}.json").write_text(json.dumps(record, indent=2))


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    return parser.parse_args()


def main() -> None:
    args = arguments()
    run(items(args.group), "cpp_asserts", args.group, args.out)


if __name__ == "__main__":
    main()
