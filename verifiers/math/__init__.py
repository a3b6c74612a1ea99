"""The ``math`` verifier: final-answer equivalence for mathematical answers.

Modules by job: `extraction` (find the final answer), `normalization` (LaTeX clean-up,
units, percent/degree/money markers), `fastpath` (exact rationals without a LaTeX
parser), `parsing` (latex2sympy2_extended -> sympy, cached and guarded), `equivalence`
(rules per kind), `verifier` (the `MathVerifier`, its params and caches).
"""

from referee.verifiers.math.verifier import MathParams, MathVerifier

__all__ = ["MathParams", "MathVerifier"]
