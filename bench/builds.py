"""One build in the sandbox, with the runtime's precompiled header, compiler archives and
Go standard library (``scripts/build-runtime.sh``) and without, side by side in one run,
and the same compiler run directly on the host as a trainer's glue would (no sandbox, no
runtime).

Per language, ``--runs`` distinct small programs (no build is reused); medians of the
compile step's wall time (`CompileOutcome.wall_s`).

Usage: python -m bench.builds [--runs 5] [--runtime /opt/referee/runtime]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.sandbox import Case, Limits, Program, Sandbox, SandboxSettings

# (language, main file, source with a {n} to make each run's differ, host glue's argv)
PROGRAMS: list[tuple[str, str, str, list[str]]] = [
    (
        "cpp",
        "main.cpp",
        "#include <bits/stdc++.h>\nusing namespace std;\nint main() { vector<int> v{3, 1, {n}};"
        " sort(v.begin(), v.end()); cout << v[0] << '\\n'; }\n",
        ["g++", "-O2", "-std=c++17", "-o", "main", "main.cpp"],
    ),
    (
        "java",
        "Main.java",
        "import java.util.*;\npublic class Main { public static void main(String[] a) {"
        " List<Integer> l = new ArrayList<>(List.of(3, 1, {n})); Collections.sort(l);"
        " System.out.println(l.get(0)); } }\n",
        ["javac", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-d", ".", "Main.java"],
    ),
    (
        "kotlin",
        "main.kt",
        "fun main() { println(listOf(3, 1, {n}).sorted().first()) }\n",
        ["kotlinc", "-J-Xmx1024m", "main.kt", "-include-runtime", "-d", "main.jar"],
    ),
    (
        "scala",
        "Main.scala",
        "object Main { def main(args: Array[String]): Unit =\n"
        "  println(List(3, 1, {n}).sorted.head) }\n",
        ["scalac", "-J-Xmx1024m", "-d", ".", "Main.scala"],
    ),
    (
        "go",
        "main.go",
        'package main\n\nimport (\n\t"fmt"\n\t"sort"\n\t"strings"\n)\n\nfunc main() {\n'
        '\tv := []int{3, 1, {n}}\n\tsort.Ints(v)\n\tfmt.Println(v[0], strings.ToUpper("x"))\n}\n',
        ["go", "build", "-o", "main", "main.go"],
    ),
    (  # MultiPL-E's HumanEval-Go shape; the host's glue is plain go test -c (vet included)
        "go_test",
        "main_test.go",
        'package main\n\nimport (\n\t"fmt"\n\t"sort"\n\t"testing"\n)\n\n'
        "func TestSorted(t *testing.T) {\n\tv := []int{3, 1, {n}}\n\tsort.Ints(v)\n"
        '\tif fmt.Sprint(v[0]) != "1" {\n\t\tt.Errorf("expected 1, got %d", v[0])\n\t}\n}\n',
        ["go", "test", "-c", "-o", "main.test", "main_test.go"],
    ),
]

LIMITS = Limits(wall_s=30, cpu_s=30, memory_mb=1024)


def sandboxed(language: str, source: str, runs: int, runtime: Path | None) -> list[float]:
    """Compile times of ``runs`` distinct programs in a sandbox seeing ``runtime``."""
    times = []
    with Sandbox(SandboxSettings(runtime_dir=runtime)) as sandbox:
        for n in range(runs):
            program = Program(language=language, source=source.replace("{n}", str(n + 2)))
            report = sandbox.run(program, [Case()], LIMITS)
            assert report.compile is not None and report.cases, report.message
            times.append(report.compile.wall_s)
    return times


def on_host(main: str, source: str, argv: list[str], runs: int) -> list[float]:
    """Compile times of the same programs with the compiler run directly."""
    times = []
    for n in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, main).write_text(source.replace("{n}", str(n + 2)))
            start = time.perf_counter()
            subprocess.run(argv, cwd=folder, capture_output=True, check=True)
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--runtime", type=Path, default=Path("/opt/referee/runtime"))
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    print(f"{args.runs} builds each, {os.cpu_count()} cores, {platform.platform()}")
    print(f"{'language':10} {'runtime':>9} {'no runtime':>11} {'host glue':>10}  (median s)")
    record: dict[str, Any] = {}
    for language, main_file, source, argv in PROGRAMS:
        rows = {
            "runtime": sandboxed(language, source, args.runs, args.runtime),
            "no runtime": sandboxed(language, source, args.runs, None),
            "host glue": on_host(main_file, source, argv, args.runs),
        }
        record[language] = rows
        medians = [statistics.median(times) for times in rows.values()]
        print(f"{language:10} {medians[0]:9.2f} {medians[1]:11.2f} {medians[2]:10.2f}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "builds.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
