"""Code verifiers: ``code`` (tests against generated programs) and ``verilog``
(a design under a testbench). Untrusted code runs only through `sandbox`."""

from referee.verifiers.code.verifier import CodeParams, CodeVerifier
from referee.verifiers.code.verilog import VerilogParams, VerilogVerifier

__all__ = ["CodeParams", "CodeVerifier", "VerilogParams", "VerilogVerifier"]
