"""A stdin/stdout problem set with deliberately tricky outputs (trailing spaces, floats,
extra and missing lines, case, order), solved in Python and C++, right and wrong."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

PROBLEMS: dict[str, dict[str, Any]] = {
    # a+b per line; the expected output has trailing spaces on purpose.
    "sums": {"inputs": ["2\n1 2\n3 4\n", "1\n-5 5\n"], "outputs": ["3 \n7 \n", "0 \n"]},
    # circle area, expected with 10 decimals.
    "area": {"inputs": ["1\n", "2.5\n"], "outputs": ["3.1415926536\n", "19.6349540849\n"]},
    # the answer is YES/NO in upper case.
    "even": {"inputs": ["4\n", "7\n"], "outputs": ["YES\n", "NO\n"]},
    # divisors, any order.
    "divisors": {"inputs": ["6\n", "7\n"], "outputs": ["1\n2\n3\n6\n", "1\n7\n"]},
}

PY_SUMS = "n=int(input())\nfor _ in range(n):\n    a,b=map(int,input().split())\n    print(a+b)"
CPP_SUMS = (
    '#include <cstdio>\nint main(){int n;scanf("%d",&n);while(n--){long a,b;'
    'scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}}'
)
CPP_SUMS_SHORT = CPP_SUMS.replace("while(n--)", "n--;while(n-->0)")  # drops the last line
CPP_SUMS_EXTRA = CPP_SUMS.replace("}}", '}puts("");}')  # one more newline at the end
CPP_SUMS_LEADING = CPP_SUMS.replace("while(n--)", 'puts("");while(n--)')  # a blank line first
PY_AREA = "import math\nr=float(input())\nprint(f'{math.pi*r*r:.6f}')"
CPP_AREA = (
    '#include <cstdio>\n#include <cmath>\nint main(){double r;scanf("%lf",&r);'
    'printf("%.4f\\n",M_PI*r*r);}'
)
PY_EVEN = "print('Yes' if int(input())%2==0 else 'No')"
CPP_DIV = (
    '#include <cstdio>\nint main(){int n;scanf("%d",&n);for(int d=n;d>=1;d--)'
    'if(n%d==0)printf("%d\\n",d);}'
)

# (problem, language, program, params, expected reward)
CASES: list[tuple[str, str, str, dict[str, Any], float]] = [
    ("sums", "python", PY_SUMS, {}, 1.0),  # trailing spaces forgiven by "lines"
    ("sums", "python", PY_SUMS, {"compare": "exact"}, 0.0),
    ("sums", "cpp", CPP_SUMS, {}, 1.0),
    ("sums", "cpp", CPP_SUMS_SHORT, {}, 0.0),  # a missing trailing line is wrong
    ("sums", "cpp", CPP_SUMS_EXTRA, {}, 1.0),  # a blank line at the end is whitespace
    ("sums", "cpp", CPP_SUMS_EXTRA, {"compare": "exact"}, 0.0),
    ("sums", "cpp", CPP_SUMS_LEADING, {}, 0.0),  # a blank line before others is a line
    ("area", "python", PY_AREA, {"compare": "numeric"}, 1.0),
    ("area", "python", PY_AREA, {}, 0.0),
    ("area", "cpp", CPP_AREA, {"compare": "numeric", "abs_tol": 1e-4}, 1.0),
    ("area", "cpp", CPP_AREA, {"compare": "numeric"}, 0.0),  # 4 decimals miss 1e-6
    ("even", "python", PY_EVEN, {"compare": "casefold"}, 1.0),
    ("even", "python", PY_EVEN, {}, 0.0),
    ("divisors", "cpp", CPP_DIV, {"compare": "unordered_lines"}, 1.0),
    ("divisors", "cpp", CPP_DIV, {}, 0.0),  # the order counts under "lines"
]


@pytest.mark.parametrize(("problem", "language", "program", "params", "reward"), CASES)
def test_problem_set(
    score_many: ScoreMany,
    problem: str,
    language: str,
    program: str,
    params: dict[str, Any],
    reward: float,
) -> None:
    item = code_item(fenced(program, language), PROBLEMS[problem], language=language, **params)
    (result,) = score_many([item])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward), result.details["cases"]
