"""Sandbox benchmark: one run, side by side.

1. A trivial Python case (read a number, print its double), timed per case through:
   plain ``subprocess`` (no isolation), ``bwrap`` spawned per case (isolation, no limits),
   referee's bwrap backend (isolation + limits + cgroup, interpreter started per case) and
   referee's default path (the Python fast path). p50/p99 latency with one caller, then
   cases/s with 2 parallel callers.
2. A 10-case C++ problem: referee compiling once and running 10 cases, versus compiling
   once per case.
3. 10 MB of output: capped, reported as output_limit, and how long that took.

Usage: python bench/sandbox.py [--cases N] [--out bench/results]
Prints a table and writes JSON to bench/results/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Run as a script, this file's directory comes first on sys.path and its own name would
# shadow the `sandbox` package; drop it before importing the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]

from referee.sandbox import Case, Limits, Program, Sandbox, SandboxSettings  # noqa: E402
from referee.sandbox.backends.bwrap import system_mounts  # noqa: E402

TRIVIAL = "print(int(input()) * 2)"
CPP = '#include <cstdio>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}'
LIMITS = Limits(wall_s=5, cpu_s=2, memory_mb=256)


def plain_subprocess(script: Path) -> Callable[[int], str]:
    def one(i: int) -> str:
        done = subprocess.run(
            ["/usr/bin/python3", "-E", "-s", str(script)],
            input=f"{i}\n",
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return done.stdout

    return one


def bwrap_per_case(script: Path) -> Callable[[int], str]:
    argv = [
        "bwrap",
        "--unshare-all",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        *system_mounts(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/work",
        "--ro-bind",
        str(script),
        "/box/main.py",
        "--chdir",
        "/work",
        "--",
        "/usr/bin/python3",
        "-E",
        "-s",
        "/box/main.py",
    ]

    def one(i: int) -> str:
        done = subprocess.run(
            argv,
            input=f"{i}\n",
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        return done.stdout

    return one


def referee(sandbox: Sandbox) -> Callable[[int], str]:
    program = Program(language="python3", source=TRIVIAL)

    def one(i: int) -> str:
        report = sandbox.run(program, [Case(stdin=f"{i}\n")], LIMITS)
        assert report.ok, report
        return report.cases[0].stdout

    return one


def measure(one: Callable[[int], str], n: int) -> dict[str, float]:
    """p50/p99 with one caller, then cases/s with two parallel callers."""
    for i in range(3):  # warm up (first fast-path call starts the server)
        one(i)
    latencies = []
    for i in range(n):
        start = time.perf_counter()
        out = one(i)
        latencies.append(time.perf_counter() - start)
        assert out == f"{2 * i}\n", out
    latencies.sort()
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, range(n)))
    elapsed = time.perf_counter() - start
    return {
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "cases_per_s_2_callers": n / elapsed,
    }


def cpp_problem(sandbox: Sandbox) -> dict[str, float]:
    program = Program(language="cpp", source=CPP)
    cases = [Case(stdin=f"{i} {i}\n") for i in range(10)]
    start = time.perf_counter()
    report = sandbox.run(program, cases, LIMITS)
    once = time.perf_counter() - start
    assert report.ok and [c.stdout for c in report.cases] == [f"{2 * i}\n" for i in range(10)]
    start = time.perf_counter()
    for case in cases:
        assert sandbox.run(program, [case], LIMITS).ok
    per_case = time.perf_counter() - start
    return {"compile_once_s": once, "compile_per_case_s": per_case}


def big_output(sandbox: Sandbox) -> dict[str, object]:
    program = Program(language="python3", source="import sys\nsys.stdout.write('y' * (10 << 20))")
    start = time.perf_counter()
    [case] = sandbox.run(program, [Case()], LIMITS).cases
    return {
        "status": case.status.value,
        "kept_bytes": len(case.stdout),
        "elapsed_s": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    results: dict[str, object] = {
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Linux {platform.release()}, Python {platform.python_version()}",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "main.py")
        script.write_text(TRIVIAL)
        script.chmod(0o644)
        Path(tmp).chmod(0o755)
        settings = SandboxSettings(parallelism=2, limits=LIMITS)
        with (
            Sandbox(settings) as fast,
            Sandbox(settings.model_copy(update={"python_fast_path": False})) as slow,
        ):
            paths = {
                "plain subprocess (no isolation)": plain_subprocess(script),
                "bwrap per case (no limits)": bwrap_per_case(script),
                "referee bwrap backend": referee(slow),
                "referee fast path (default)": referee(fast),
            }
            trivial = {name: measure(one, args.cases) for name, one in paths.items()}
            results["trivial_python"] = trivial
            results["cpp_10_cases"] = cpp_problem(fast)
            results["output_10mb"] = big_output(fast)
    print_table(results)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"sandbox-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"\nwrote {path}")


def print_table(results: dict[str, object]) -> None:
    print(f"machine: {results['machine']}\n")
    print("| trivial Python case | p50 ms | p99 ms | cases/s, 2 callers |")
    print("|---|---:|---:|---:|")
    trivial = results["trivial_python"]
    assert isinstance(trivial, dict)
    for name, row in trivial.items():
        print(
            f"| {name} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | "
            f"{row['cases_per_s_2_callers']:.0f} |"
        )
    cpp = results["cpp_10_cases"]
    assert isinstance(cpp, dict)
    print(
        f"\n| 10-case C++ problem | seconds |\n|---|---:|\n"
        f"| compile once, 10 cases | {cpp['compile_once_s']:.2f} |\n"
        f"| compile per case (10 x compile + run) | {cpp['compile_per_case_s']:.2f} |"
    )
    big = results["output_10mb"]
    assert isinstance(big, dict)
    print(
        f"\n10 MB of output: status {big['status']}, kept {big['kept_bytes']} bytes, "
        f"{big['elapsed_s']:.3f} s"
    )


if __name__ == "__main__":
    main()
