"""``python bench/x.py`` puts bench/ first on the path: a script named like a standard
library module (``code``, ``math``) shadows it for everything the benchmark imports,
which fails wherever that module is not built into the interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_no_bench_script_shadows_the_standard_library() -> None:
    names = {path.stem for path in BENCH.glob("*.py")} - {"__init__"}
    assert names, "no benchmark scripts found"
    assert sorted(names & set(sys.stdlib_module_names)) == []
