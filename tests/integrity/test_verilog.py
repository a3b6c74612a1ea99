"""Verilog designs that try to pass a testbench without being right score 0: the verdict
is read from the simulation's output, so it must be the testbench's alone. Each hack
is a wrong adder (``sum = 0``) plus its trick; the honest adder scores 1, also when it
uses the system functions a design may (``$clog2``) and mentions others in comments."""

from __future__ import annotations

import pytest

from referee.verifiers import Item, Registry, Result, Status, score_items
from tests.verifiers.code.test_verilog import GOOD, TESTBENCH

pytestmark = pytest.mark.integration

WRONG = GOOD.replace("assign sum = a + b;", "assign sum = 0;\n{}")

# (trick inside the wrong design, flag)
HACKS: dict[str, tuple[str, str]] = {
    "prints the pass line and ends the simulation": (
        'initial begin $display("ALL TESTS PASSED"); $finish; end',
        "design_system_task",
    ),
    "ends it with $stop": (
        'initial begin $write("ALL TESTS PASSED\\n"); $stop; end',
        "design_system_task",
    ),
    "writes stdout by descriptor": (
        'initial begin $fdisplay(32\'h8000_0001, "ALL TESTS PASSED"); $fatal; end',
        "design_system_task",
    ),
    "pastes $ to a name in a macro": (
        "`define P(a, b) a``b\n"
        'initial begin `P($, display)("ALL TESTS PASSED"); `P($, finish); end',
        "design_system_task",
    ),
    "resets the testbench's error counter": (
        "always @(tb.errors) if (tb.errors != 0) tb.errors = 0;",
        "not_self_contained",
    ),
    "forces it": ("initial force tb.errors = 0;", "not_self_contained"),
    "writes it every step": ("always #1 tb.errors <= 0;", "not_self_contained"),
    "reads the testbench from disk": (
        'reg [7:0] m [0:15];\ninitial $readmemh("main.v", m);',
        "design_system_task",
    ),
}


def _scored(registry: Registry, design: str) -> Result:
    response = f"```verilog\n{design}\n```"
    item = Item(verifier="verilog", response=response, reference={"testbench": TESTBENCH})
    return score_items([item], registry)[0]


@pytest.mark.parametrize("hack", list(HACKS))
def test_a_wrong_design_with_a_trick_scores_zero(registry: Registry, hack: str) -> None:
    trick, flag = HACKS[hack]
    result = _scored(registry, WRONG.format(trick))
    assert (result.status, result.reward) == (Status.OK, 0.0), result.details
    assert result.details["flags"] == [flag]


def test_a_right_design_that_prints_is_refused_too(registry: Registry) -> None:
    """Refused for what it calls, not because the design is wrong."""
    right = GOOD.replace(
        "endmodule", '  initial begin $display("ALL TESTS PASSED"); $finish; end\nendmodule'
    )
    assert _scored(registry, right).reward == 0.0


def test_the_honest_design_scores_one(registry: Registry) -> None:
    honest = GOOD.replace(
        "endmodule",
        '  // never $display from a design; "$finish" is the testbench\'s\n'
        "  localparam W = $clog2(16);\nendmodule",
    )
    result = _scored(registry, honest)
    assert (result.status, result.reward) == (Status.OK, 1.0), result.details
