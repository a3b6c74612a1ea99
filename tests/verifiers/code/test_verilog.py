from __future__ import annotations

import time

import pytest

from referee.verifiers import Item, Registry, Status, score_items
from referee.verifiers.base import item_timeout_s
from tests.verifiers.code.conftest import ScoreMany, fenced

TESTBENCH = """module tb;
  reg [3:0] a, b; wire [4:0] s; integer errors = 0, i, j;
  adder dut(.a(a), .b(b), .sum(s));
  initial begin
    for (i = 0; i < 16; i = i + 1) for (j = 0; j < 16; j = j + 1) begin
      a = i; b = j; #1;
      if (s !== i + j) errors = errors + 1;
    end
    if (errors == 0) $display("ALL TESTS PASSED"); else $display("FAILED: %0d mismatches", errors);
    $finish;
  end
endmodule
"""
GOOD = (
    "module adder(input [3:0] a, input [3:0] b, output [4:0] sum);\n"
    "  assign sum = a + b;\nendmodule"
)
TRUNCATING = GOOD.replace("assign sum = a + b;", "assign sum = {1'b0, a[3:0] + b[3:0]};")
HANGS = GOOD.replace("endmodule", "  always @(a) while (a == 4'd5) begin end\nendmodule")

# (response, expected reward, what the details say)
CASES: list[tuple[str, float, str]] = [
    (fenced(GOOD, "verilog"), 1.0, "pass"),
    (fenced(TRUNCATING, "verilog"), 0.0, "fail"),
    (fenced("module adder(input a; endmodule", "verilog"), 0.0, "does not compile"),
    (fenced(HANGS, "verilog"), 0.0, "simulation timeout"),
    ("```python\nprint(1)\n```", 0.0, "no code found"),
]


@pytest.mark.parametrize(("response", "reward", "says"), CASES)
def test_verilog(score_many: ScoreMany, response: str, reward: float, says: str) -> None:
    item = Item(
        verifier="verilog",
        response=response,
        reference={"testbench": TESTBENCH},
        params={"time_limit_s": 2},
    )
    (result,) = score_many([item])
    assert result.status == Status.OK, result.error
    assert result.reward == reward
    assert says in str(result.details.get("verdict", "")) + str(result.details.get("message", ""))


def test_verilog_without_testbench_is_invalid(score_many: ScoreMany) -> None:
    (result,) = score_many([Item(verifier="verilog", response=GOOD, reference={})])
    assert result.status == Status.INVALID
    assert result.error is not None and "reference.testbench" in result.error.message


def test_a_design_that_never_settles_fails_within_the_item_timeout(registry: Registry) -> None:
    """At the default limit (10 s) the simulation would outlast a 3 s item timeout and the
    item would be ``timeout``: the limit shrinks to fit, and the design fails."""
    item = Item(verifier="verilog", response=fenced(HANGS, "verilog"), reference=TESTBENCH)
    token = item_timeout_s.set(3.0)
    try:
        start = time.monotonic()
        (result,) = score_items([item], registry)  # in this thread: it sees the timeout
        assert time.monotonic() - start < 3.0
    finally:
        item_timeout_s.reset(token)
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert result.details["message"] == "simulation timeout"
    # cut to end by 0.8 of the item timeout (2.4 s); a run killed at its limit is
    # measured a little past it (the kill and reaping, 0.8 ms once under the full suite)
    assert result.details["time_s"] < 2.4 + 0.1


# A right adder whose elaboration evaluates a constant function looping 700,000 times:
# about 1.5 s a build here, and it is built twice (alone, then with the testbench).
SLOW_TO_BUILD = """module adder(input [3:0] a, input [3:0] b, output [4:0] s);
  function integer slow(input integer n);
    integer i, acc;
    begin
      acc = 0;
      for (i = 0; i < n; i = i + 1) acc = acc + (i % 7);
      slow = acc;
    end
  endfunction
  localparam integer X = slow(700000);
  assign s = a + b + (X & 0);
endmodule
"""


def test_a_design_slow_to_build_fails_within_the_item_timeout(registry: Registry) -> None:
    """Each build had its own 60 s, so two builds of a design that elaborates for a
    while outlasted the item timeout (``timeout``, masked). The builds and the simulation
    now share what is left of the item's time: out of it, the design fails."""
    item = Item(verifier="verilog", response=fenced(SLOW_TO_BUILD, "verilog"), reference=TESTBENCH)
    token = item_timeout_s.set(2.0)
    try:
        start = time.monotonic()
        (result,) = score_items([item], registry)
        assert time.monotonic() - start < 2.0
    finally:
        item_timeout_s.reset(token)
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert set(result.details["flags"]) & {"compile_timeout", "time_budget"}, result.details
