"""Hard pairs for bench/math_answers.py: answers that need symbolic work to compare.

Generated from templates with random parameters: each gold comes with rewrites that are
equal to it (label 1) and near misses that are not (label 0), so labels hold by
construction. Kinds: radicals (``\\sqrt{a^2 b}`` vs ``a\\sqrt{b}``, rationalised
denominators), products and quotients of radicals, nested fractions, pi and e
expressions, logarithms, trigonometric values, polynomial identities (expanded vs
factored), rational functions, complex numbers, and structures holding any of those
(tuples, sets, intervals, equations, matrices).
"""

from __future__ import annotations

import random

Pair = tuple[str, str, int]

_PRIMES = [2, 3, 5, 6, 7, 10, 11, 13]


def _radical(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(2, 9), rng.choice(_PRIMES)
    gold = f"{a}\\sqrt{{{b}}}"
    right = [
        f"\\sqrt{{{a * a * b}}}",
        f"\\sqrt{{{b}}} \\cdot {a}",
        f"\\frac{{{a * b}}}{{\\sqrt{{{b}}}}}",
    ]
    wrong = [f"\\sqrt{{{a * a * b + 1}}}", f"{a + 1}\\sqrt{{{b}}}", f"{a}\\sqrt{{{b + 1}}}"]
    return gold, right, wrong


def _rationalised(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(1, 9), rng.choice(_PRIMES)
    gold = f"\\frac{{{a}\\sqrt{{{b}}}}}{{{b}}}"
    right = [f"\\frac{{{a}}}{{\\sqrt{{{b}}}}}", f"{a}/\\sqrt{{{b}}}"]
    wrong = [
        f"\\frac{{{a}}}{{{b}}}",
        f"\\frac{{{a + 1}}}{{\\sqrt{{{b}}}}}",
        f"\\frac{{\\sqrt{{{b}}}}}{{{a + 1}}}",
    ]
    return gold, right, wrong


def _conjugate(rng: random.Random) -> tuple[str, list[str], list[str]]:
    b = rng.choice([2, 3, 5, 7])
    gold = f"\\sqrt{{{b}}}+1"
    right = [f"\\frac{{{b - 1}}}{{\\sqrt{{{b}}}-1}}", f"1+\\sqrt{{{b}}}"]
    wrong = [f"\\frac{{{b}}}{{\\sqrt{{{b}}}-1}}", f"\\sqrt{{{b}}}-1", f"\\sqrt{{{b + 1}}}+1"]
    return gold, right, wrong


def _pi(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(1, 9), rng.randint(2, 12)
    gold = f"\\frac{{{a}\\pi}}{{{b}}}"
    right = [
        f"\\frac{{{a}}}{{{b}}}\\pi",
        f"{a}\\pi/{b}",
        f"\\pi \\cdot \\frac{{{2 * a}}}{{{2 * b}}}",
    ]
    wrong = [
        f"\\frac{{{a + 1}\\pi}}{{{b}}}",
        f"\\frac{{{a}}}{{{b}\\pi}}",
        f"\\frac{{{a}\\pi}}{{{b + 1}}}",
    ]
    return gold, right, wrong


def _log(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(2, 7), rng.randint(2, 7)
    gold = f"\\ln {a * b}"
    right = [f"\\ln {a} + \\ln {b}", f"\\ln({a}) + \\ln({b})", f"\\ln {a * b * a} - \\ln {a}"]
    wrong = [f"\\ln {a + b}", f"\\ln {a} \\cdot \\ln {b}", f"\\ln {a * b + 1}"]
    return gold, right, wrong


def _exp(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(1, 6), rng.randint(1, 6)
    gold = f"e^{{{a + b}}}"
    right = [f"e^{{{a}}} e^{{{b}}}", f"e^{{{a}}} \\cdot e^{{{b}}}", f"(e^{{{a + b}}})"]
    wrong = [f"e^{{{a * b + 7}}}", f"e^{{{a}}} + e^{{{b}}}", f"{a + b}e"]
    return gold, right, wrong


def _trig(rng: random.Random) -> tuple[str, list[str], list[str]]:
    table = [
        (
            "\\frac{\\sqrt{3}}{2}",
            ["\\sin\\frac{\\pi}{3}", "\\cos\\frac{\\pi}{6}"],
            ["\\sin\\frac{\\pi}{6}", "\\frac{\\sqrt{2}}{2}"],
        ),
        (
            "\\frac{\\sqrt{6}+\\sqrt{2}}{4}",
            ["\\cos\\frac{\\pi}{12}", "\\sin\\frac{5\\pi}{12}"],
            ["\\cos\\frac{\\pi}{10}", "\\frac{\\sqrt{6}-\\sqrt{2}}{4}"],
        ),
        (
            "2-\\sqrt{3}",
            ["\\tan\\frac{\\pi}{12}", "\\frac{1}{2+\\sqrt{3}}"],
            ["\\tan\\frac{\\pi}{10}", "2+\\sqrt{3}"],
        ),
        (
            "\\frac{1}{2}",
            ["\\sin\\frac{\\pi}{6}", "\\cos\\frac{\\pi}{3}"],
            ["\\sin\\frac{\\pi}{3}", "\\cos\\frac{\\pi}{4}"],
        ),
    ]
    return rng.choice(table)


def _polynomial(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    gold = f"(x+{a})(x-{b})"
    right = [
        f"x^2 + {a - b}x - {a * b}" if a >= b else f"x^2 - {b - a}x - {a * b}",
        f"(x-{b})(x+{a})",
    ]
    wrong = [f"(x-{a})(x+{b})", f"x^2 + {a + b}x - {a * b}", f"(x+{a})(x-{b + 1})"]
    return gold, right, wrong


def _rational_function(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a = rng.randint(1, 9)
    gold = f"\\frac{{2}}{{x^2-{a * a}}}"
    right = [
        f"\\frac{{1}}{{x-{a}}} \\cdot \\frac{{2}}{{x+{a}}}",
        f"\\frac{{1}}{{{a}(x-{a})}} - \\frac{{1}}{{{a}(x+{a})}}"
        if a == 1
        else f"\\frac{{2}}{{(x-{a})(x+{a})}}",
    ]
    wrong = [
        f"\\frac{{2}}{{x^2+{a * a}}}",
        f"\\frac{{2}}{{(x-{a})^2}}",
        f"\\frac{{1}}{{x^2-{a * a}}}",
    ]
    return gold, right, wrong


def _complex(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    gold = f"{a * a + b * b}"
    right = [f"({a}+{b}i)({a}-{b}i)", f"|{a}+{b}i|^2"]
    wrong = [f"({a}+{b}i)^2", f"{a * a - b * b}"]
    return gold, right, wrong


def _structure(rng: random.Random) -> tuple[str, list[str], list[str]]:
    a, b = rng.randint(2, 9), rng.choice(_PRIMES)
    kind = rng.randrange(5)
    if kind == 0:
        gold = f"\\left({a}\\sqrt{{{b}}}, \\frac{{\\pi}}{{{a}}}\\right)"
        return (
            gold,
            [f"(\\sqrt{{{a * a * b}}}, \\pi/{a})"],
            [
                f"(\\sqrt{{{a * a * b}}}, \\pi/{a + 1})",
                f"(\\frac{{\\pi}}{{{a}}}, {a}\\sqrt{{{b}}})",
            ],
        )
    if kind == 1:
        gold = f"\\{{-\\sqrt{{{b}}}, \\sqrt{{{b}}}\\}}"
        return (
            gold,
            [f"\\{{\\sqrt{{{b}}}, -\\sqrt{{{b}}}\\}}", f"\\pm\\sqrt{{{b}}}"],
            [f"\\{{\\sqrt{{{b}}}\\}}", f"\\{{-\\sqrt{{{b + 1}}}, \\sqrt{{{b + 1}}}\\}}"],
        )
    if kind == 2:
        gold = f"[\\sqrt{{{b}}}, {a}\\pi)"
        return (
            gold,
            [f"[\\sqrt{{{b}}}, {a} \\pi)"],
            [f"(\\sqrt{{{b}}}, {a}\\pi)", f"[\\sqrt{{{b}}}, {a}\\pi]"],
        )
    if kind == 3:
        gold = f"y = {a}x + \\sqrt{{{b}}}"
        return (
            gold,
            [f"y = \\sqrt{{{b}}} + {a}x", f"{a}x - y = -\\sqrt{{{b}}}"],
            [f"y = {a}x - \\sqrt{{{b}}}", f"y = {a + 1}x + \\sqrt{{{b}}}"],
        )
    gold = f"\\begin{{pmatrix}} \\sqrt{{{b}}} & {a} \\\\ 0 & \\pi \\end{{pmatrix}}"
    return (
        gold,
        [f"\\begin{{bmatrix}} \\sqrt{{{b}}} & {a} \\\\ 0 & \\pi \\end{{bmatrix}}"],
        [f"\\begin{{pmatrix}} \\sqrt{{{b}}} & {a + 1} \\\\ 0 & \\pi \\end{{pmatrix}}"],
    )


_KINDS = (
    _radical,
    _rationalised,
    _conjugate,
    _pi,
    _log,
    _exp,
    _trig,
    _polynomial,
    _rational_function,
    _complex,
    _structure,
)


def hard_pairs(n_pairs: int, seed: int = 1) -> list[Pair]:
    """``n_pairs`` distinct boxed answers, about half right, from every kind in turn (no
    pair repeats, so no verdict comes from a cache; golds may repeat, as in a group)."""
    rng = random.Random(seed)
    pairs: list[Pair] = []
    seen: set[tuple[str, str]] = set()
    turn = 0
    while len(pairs) < n_pairs:
        gold, right, wrong = _KINDS[turn % len(_KINDS)](rng)
        turn += 1
        answer, label = (rng.choice(right), 1) if rng.random() < 0.5 else (rng.choice(wrong), 0)
        if (gold, answer) in seen:
            continue
        seen.add((gold, answer))
        pairs.append((gold, f"So the answer is $\\boxed{{{answer}}}$.", label))
    return pairs
