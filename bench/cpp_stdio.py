"""C++ stdin/stdout problems written the competitive-programming way (``#include
<bits/stdc++.h>``), side by side in one run:

1. referee with its runtime (``REFEREE_SANDBOX_RUNTIME_DIR``): the header comes
   precompiled for the sandbox's C++ build (``scripts/build-runtime.sh``);
2. referee with no runtime: g++ parses the header in every build, as before;
3. naive, the trainer's usual glue: one ``g++ -O2 -std=c++17`` and one run per case,
   no isolation, as many threads as cores.

Every response is a distinct source (as a policy's are), so no build is reused.

Usage: python -m bench.cpp_stdio [--group 8] [--runtime /opt/referee/runtime]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from referee.service.execution.local import LocalScorer
from referee.service.settings import Settings
from referee.verifiers import Item

HEAD = "#include <bits/stdc++.h>\nusing namespace std;\n"

# (right answer's body, the bug a wrong one has as (old, new), inputs, outputs)
PROBLEMS: list[tuple[str, tuple[str, str], list[str], list[str]]] = [
    (
        "int main() { int n; cin >> n; vector<long long> a(n); for (auto &x : a) cin >> x;\n"
        "  sort(a.begin(), a.end()); long long s = 0; for (int i = 0; i < n; i += 2) s += a[i];\n"
        "  cout << s << '\\n'; }",
        ("i += 2", "i += 1"),
        ["3\n5 1 3\n", "4\n4 3 2 1\n", "1\n7\n"],
        ["6\n", "4\n", "7\n"],
    ),
    (
        "int main() { string s; cin >> s; map<char, int> c; for (char ch : s) c[ch]++;\n"
        "  int best = 0; for (auto &[k, v] : c) best = max(best, v); cout << best << '\\n'; }",
        ("best = max(best, v)", "best = v"),
        ["abca\n", "zzz\n", "abcz\n"],
        ["2\n", "3\n", "1\n"],
    ),
    (
        "int main() { long long n; cin >> n; long long r = 0;\n"
        "  for (long long d = 1; d * d <= n; ++d) if (n % d == 0) r += (d * d == n) ? 1 : 2;\n"
        "  cout << r << '\\n'; }",
        ("? 1 : 2", "? 2 : 2"),
        ["12\n", "36\n", "1\n"],
        ["6\n", "9\n", "1\n"],
    ),
    (
        "int main() { int n; cin >> n; vector<int> g(n); iota(g.begin(), g.end(), 0);\n"
        "  function<int(int)> f = [&](int x) { return g[x] == x ? x : g[x] = f(g[x]); };\n"
        "  int m; cin >> m; int parts = n; while (m--) { int a, b; cin >> a >> b;\n"
        "    a = f(a); b = f(b); if (a != b) { g[a] = b; --parts; } }\n"
        "  cout << parts << '\\n'; }",
        ("--parts;", ""),
        ["3 1 0 1\n", "4 2 0 1 2 3\n", "2 0\n"],
        ["2\n", "2\n", "2\n"],
    ),
]


def items(group: int) -> list[tuple[Item, bool]]:
    """``group`` distinct responses per problem, every other one wrong."""
    made = []
    for number, (right, (old, new), inputs, outputs) in enumerate(PROBLEMS):
        for index in range(group):
            body = right if index % 2 == 0 else right.replace(old, new)
            code = f"{HEAD}// response {number}.{index}\n{body}\n"
            item = Item(
                verifier="code",
                response=f"```cpp\n{code}```",
                reference={"inputs": inputs, "outputs": outputs},
                params={"language": "cpp"},
            )
            made.append((item, index % 2 == 0))
    return made


def bench_referee(work: list[tuple[Item, bool]], runtime: Path | None) -> dict[str, Any]:
    """Through `LocalScorer`, the sandbox seeing ``runtime`` (or none)."""
    os.environ.pop("REFEREE_SANDBOX_RUNTIME_DIR", None)
    if runtime is not None:
        os.environ["REFEREE_SANDBOX_RUNTIME_DIR"] = str(runtime)
    settings = Settings(sandbox_workers=os.cpu_count() or 1, cpu_workers=1, item_timeout_s=60)
    with LocalScorer(settings) as scorer:
        start = time.perf_counter()
        results = scorer.score([item for item, _ in work], deadline_s=1200)
        wall = time.perf_counter() - start
    right = sum((r.reward == 1.0) == ok for r, (_, ok) in zip(results, work, strict=True))
    return {"wall_s": wall, "items_per_s": len(work) / wall, "right": right}


def naive_one(item: Item, folder: Path, index: int) -> bool:
    """Compile, run every case, compare the output: all pass or not."""
    source = folder / f"item{index}.cpp"
    source.write_text(item.response_text().split("```cpp\n", 1)[1].rsplit("```", 1)[0])
    binary = folder / f"item{index}"
    argv = ["g++", "-O2", "-std=c++17", "-o", str(binary), str(source)]
    if subprocess.run(argv, capture_output=True, check=False).returncode != 0:
        return False
    for given, expected in zip(item.reference["inputs"], item.reference["outputs"], strict=True):
        ran = subprocess.run(
            [str(binary)], input=given, capture_output=True, text=True, timeout=10, check=False
        )
        if ran.returncode != 0 or ran.stdout.split() != expected.split():
            return False
    return True


def bench_naive(work: list[tuple[Item, bool]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            passed = list(pool.map(lambda a: naive_one(a[1][0], Path(tmp), a[0]), enumerate(work)))
        wall = time.perf_counter() - start
    right = sum(p == ok for p, (_, ok) in zip(passed, work, strict=True))
    return {"wall_s": wall, "items_per_s": len(work) / wall, "right": right}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--runtime", type=Path, default=Path("/opt/referee/runtime"))
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args()
    work = items(args.group)
    cores = os.cpu_count() or 1
    rows = {
        "referee, runtime (precompiled <bits/stdc++.h>)": bench_referee(work, args.runtime),
        "referee, no runtime (the header parsed per build)": bench_referee(work, None),
        f"naive: g++ and run, {cores} threads": bench_naive(work),
    }
    print(
        f"{len(PROBLEMS)} problems x {args.group} responses, {cores} cores, {platform.platform()}"
    )
    print(f"{'path':52} {'wall s':>8} {'items/s':>8} {'scored right':>13}")
    for path, row in rows.items():
        print(f"{path:52} {row['wall_s']:8.2f} {row['items_per_s']:8.2f} {row['right']:>13}")
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"rows": rows, "cores": cores, "group": args.group}
    (args.out / "cpp_stdio.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
