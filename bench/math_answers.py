"""Math benchmark: referee's ``math`` verifier vs Hugging Face Math-Verify, side by side.

Same pairs, same run, one core (the process is pinned to one CPU):
- (a) the labelled suite of ``tests/verifiers/math/cases.py``;
- (b) a generated RL-like mix: GRPO-style groups of samples per prompt, about 70% integer
  and decimal answers, 20% fractions, radicals and short expressions, 10% sets,
  intervals, equations and matrices; responses of 200-8,000 characters of filler
  reasoning ending in the answer (boxed, "The answer is" or ``####``);
- (c) hard pairs (``bench/math_hard.py``): distinct pairs that need symbolic work
  (radicals, pi/e/log/trig values, polynomial and rational identities, complex numbers,
  structures of those), labelled by construction.

referee is called in-process through ``MathVerifier.score`` one item at a time (a fresh
instance and cold parse caches per data set, so gold and pair caching count only as
they would in training); with ``--pool`` the mix is also scored through the real worker
pool (``LocalScorer``, one worker process). Math-Verify is called as documented,
``verify(parse(gold), parse(response))`` per pair, with the gold wrapped in ``$...$``,
in the main thread (its timeouts use SIGALRM, which only works there).

Math-Verify is an optional, benchmark-only dependency:

    pip install -e '.[bench]'        # math-verify==0.9.0
    python bench/math_answers.py [--pairs 2000] [--hard-pairs 600] [--pool]

Prints a table and writes ``bench/results/math.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.math_hard import hard_pairs  # noqa: E402
from referee.verifiers.math import MathVerifier  # noqa: E402
from referee.verifiers.math import parsing as referee_parsing  # noqa: E402
from referee.verifiers.types import Item  # noqa: E402
from tests.verifiers.math.cases import CASES  # noqa: E402

Pair = tuple[str, str, int]  # (gold, response, label)

_FILLER = (
    "Let me work through this step by step. First we restate the problem and list what "
    "is known. Then we set up the relevant equation, simplify both sides, and check the "
    "intermediate values 3, 7 and 12 against the constraints. Substituting back gives a "
    "consistent result, so we can move on to the next part of the argument. "
)


def _filler(rng: random.Random) -> str:
    size = rng.randint(200, 8000)
    text = (_FILLER * (size // len(_FILLER) + 1))[:size]
    return text


def _ending(rng: random.Random, answer: str) -> str:
    style = rng.random()
    if style < 0.8:
        return f"\n\nTherefore the final answer is $\\boxed{{{answer}}}$."
    if style < 0.9 or not answer.replace(",", "").replace(".", "").lstrip("-").isdigit():
        return f"\n\nThe answer is ${answer}$."
    return f"\n#### {answer}"  # GSM8K style, for plain numbers only


def _number_case(rng: random.Random) -> tuple[str, list[str], list[str]]:
    if rng.random() < 0.75:
        value = rng.randint(-50, 5000)
        gold = str(value)
        right = [gold, gold, gold, f"{value}.0" if rng.random() < 0.3 else gold]
        if value >= 1000:
            right.append(f"{value:,}")
        wrong = [str(value + rng.choice([-2, -1, 1, 10])), str(value * 2), str(-value - 1)]
    else:
        value = rng.randint(1, 9999) / 100
        gold = f"{value:.2f}"
        right = [gold, gold, f"{value:.2f}"]
        wrong = [f"{value + 0.01:.2f}", f"{value * 10:.2f}", f"{value + 1:.2f}"]
    return gold, right, wrong


_SHORT = [
    ("\\frac{3}{4}", ["\\frac{3}{4}", "0.75", "\\dfrac{3}{4}"], ["\\frac{4}{3}", "0.7", "3/5"]),
    ("\\frac{5}{12}", ["\\frac{5}{12}", "5/12", "\\frac{10}{24}"], ["\\frac{7}{12}", "0.41"]),
    (
        "-\\frac{2}{3}",
        ["-\\frac{2}{3}", "\\frac{-2}{3}", "-2/3"],
        ["\\frac{2}{3}", "-\\frac{3}{2}"],
    ),
    ("2\\sqrt{3}", ["2\\sqrt{3}", "\\sqrt{12}", "2\\sqrt3"], ["3\\sqrt{2}", "\\sqrt{6}"]),
    (
        "\\frac{\\sqrt{2}}{2}",
        ["\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"],
        ["\\sqrt{2}", "\\frac{1}{2}"],
    ),
    ("3\\pi", ["3\\pi", "3 \\pi", "\\pi \\cdot 3"], ["2\\pi", "\\frac{3}{\\pi}"]),
    ("1+\\sqrt{5}", ["1+\\sqrt{5}", "\\sqrt{5}+1"], ["1-\\sqrt{5}", "2+\\sqrt{5}"]),
    ("x^2-1", ["x^2-1", "(x-1)(x+1)"], ["x^2+1", "(x-1)^2"]),
    ("\\frac{1}{6}", ["\\frac{1}{6}", "1/6", "\\frac{2}{12}"], ["\\frac{1}{5}", "0.17"]),
    ("4\\sqrt{2}", ["4\\sqrt{2}", "\\sqrt{32}"], ["2\\sqrt{4}", "\\sqrt{30}"]),
]

_STRUCTURED = [
    ("[2,5)", ["[2,5)", "[2, 5)"], ["[2,5]", "(2,5)"]),
    ("\\{1,2,3\\}", ["\\{1,2,3\\}", "\\{3,2,1\\}", "1, 2, 3"], ["\\{1,2\\}", "\\{1,2,4\\}"]),
    ("(1,-2)", ["(1,-2)", "(1, -2)"], ["(-2,1)", "(1,2)"]),
    ("y=2x-3", ["y=2x-3", "2x-y=3"], ["y=2x+3", "y=3x-2"]),
    ("x=4", ["x=4", "4"], ["x=-4", "y=4"]),
    (
        "(-\\infty,1)\\cup(3,\\infty)",
        ["(-\\infty,1)\\cup(3,\\infty)"],
        ["(1,3)", "(-\\infty,1]\\cup(3,\\infty)"],
    ),
    (
        "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}",
        ["\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}"],
        ["\\begin{pmatrix}1&3\\\\2&4\\end{pmatrix}"],
    ),
    ("x>4", ["x>4", "(4,\\infty)"], ["x<4", "x\\ge 4"]),
]


def rl_mix(n_pairs: int, group: int = 8, seed: int = 0) -> list[Pair]:
    """Groups of ``group`` samples per prompt; about 45% of samples are right."""
    rng = random.Random(seed)
    pairs: list[Pair] = []
    while len(pairs) < n_pairs:
        kind = rng.random()
        if kind < 0.7:
            gold, right, wrong = _number_case(rng)
        elif kind < 0.9:
            gold, right, wrong = rng.choice(_SHORT)
        else:
            gold, right, wrong = rng.choice(_STRUCTURED)
        for _ in range(group):
            if rng.random() < 0.45:
                answer, label = rng.choice(right), 1
            else:
                answer, label = rng.choice(wrong), 0
            pairs.append((gold, _filler(rng) + _ending(rng, answer), label))
    return pairs[:n_pairs]


def _summary(
    name: str, latencies: list[float], verdicts: list[int], labels: list[int], wall: float
) -> dict[str, Any]:
    n = len(labels)
    agree = sum(1 for v, lab in zip(verdicts, labels, strict=True) if v == lab)
    fp = sum(1 for v, lab in zip(verdicts, labels, strict=True) if v == 1 and lab == 0)
    fn = sum(1 for v, lab in zip(verdicts, labels, strict=True) if v != 1 and lab == 1)
    ordered = sorted(latencies)
    return {
        "system": name,
        "pairs": n,
        "agreement": agree / n,
        "false_positives": fp,
        "false_negatives": fn,
        "median_ms": statistics.median(ordered) * 1000 if ordered else None,
        "p99_ms": ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000
        if ordered
        else None,
        "pairs_per_s": n / wall,
    }


def run_referee(pairs: list[Pair]) -> tuple[dict[str, Any], list[int]]:
    referee_parsing._parse_cached.cache_clear()
    referee_parsing._latex.cache_clear()
    verifier = MathVerifier()
    items = [Item(verifier="math", response=resp, reference=gold) for gold, resp, _ in pairs]
    latencies, verdicts = [], []
    start = time.perf_counter()
    for item in items:
        t0 = time.perf_counter()
        [result] = verifier.score([item])
        latencies.append(time.perf_counter() - t0)
        verdicts.append(1 if result.reward == 1.0 else 0)
    wall = time.perf_counter() - start
    return _summary("referee math", latencies, verdicts, [p[2] for p in pairs], wall), verdicts


def run_math_verify(pairs: list[Pair]) -> tuple[dict[str, Any], list[int]]:
    from math_verify import parse, verify

    latencies, verdicts = [], []
    start = time.perf_counter()
    for gold, resp, _ in pairs:
        t0 = time.perf_counter()
        try:
            ok = bool(verify(parse(f"${gold}$"), parse(resp)))
        except Exception:  # noqa: BLE001 - count a crash as "not equal"
            ok = False
        latencies.append(time.perf_counter() - t0)
        verdicts.append(1 if ok else 0)
    wall = time.perf_counter() - start
    return _summary("Math-Verify 0.9.0", latencies, verdicts, [p[2] for p in pairs], wall), verdicts


def run_pool(pairs: list[Pair]) -> dict[str, Any]:
    from referee.service.execution.local import LocalScorer
    from referee.service.settings import Settings

    items = [Item(verifier="math", response=resp, reference=gold) for gold, resp, _ in pairs]
    settings = Settings.model_validate({"cpu_workers": 1, "item_timeout_s": 10.0})
    with LocalScorer(settings) as scorer:
        scorer.score(items[:8])  # warm the worker
        start = time.perf_counter()
        results = scorer.score(items)
        wall = time.perf_counter() - start
    verdicts = [1 if r.reward == 1.0 else 0 for r in results]
    latencies = [r.elapsed_ms / 1000 for r in results]
    summary = _summary(
        "referee via worker pool (1 worker)", latencies, verdicts, [p[2] for p in pairs], wall
    )
    summary["note"] = "latency is the in-worker time per item; pairs/s is end to end"
    return summary


def _table(title: str, rows: list[dict[str, Any]]) -> str:
    lines = [
        f"### {title}",
        "",
        "| system | pairs | agreement | false pos. | false neg. | median ms | p99 ms | pairs/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['system']} | {r['pairs']} | {r['agreement']:.1%} | {r['false_positives']} | "
            f"{r['false_negatives']} | {r['median_ms']:.3f} | {r['p99_ms']:.2f} | "
            f"{r['pairs_per_s']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=2000, help="size of the RL-like mix")
    parser.add_argument("--hard-pairs", type=int, default=600, help="size of the hard set")
    parser.add_argument(
        "--pool", action="store_true", help="also score the mix via the worker pool"
    )
    parser.add_argument("--show-disagreements", action="store_true")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    suite: list[Pair] = [(gold, resp, label) for _, gold, resp, label in CASES]
    mix = rl_mix(args.pairs)
    report: dict[str, Any] = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "cores_used": 1,
    }
    hard = hard_pairs(args.hard_pairs)
    for name, pairs in (("suite", suite), ("rl_mix", mix), ("hard_pairs", hard)):
        ref, ref_verdicts = run_referee(pairs)
        mv, mv_verdicts = run_math_verify(pairs)
        rows = [ref, mv]
        if name == "rl_mix" and args.pool:
            rows.append(run_pool(pairs))
        ref["speedup_vs_math_verify"] = ref["pairs_per_s"] / mv["pairs_per_s"]
        report[name] = rows
        print(_table(f"{name} ({len(pairs)} pairs)", rows))
        print(f"\nreferee / Math-Verify pairs/s: {ref['speedup_vs_math_verify']:.1f}x\n")
        if args.show_disagreements:
            for (gold, resp, label), a, b in zip(pairs, ref_verdicts, mv_verdicts, strict=True):
                if a != label or b != label:
                    print(
                        f"  label={label} referee={a} math-verify={b} "
                        f"gold={gold!r} end={resp[-60:]!r}"
                    )
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "math.json").write_text(json.dumps(report, indent=2))
    print(f"wrote {out / 'math.json'}")


if __name__ == "__main__":
    main()
