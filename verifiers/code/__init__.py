"""Code verifiers: ``code`` (tests against generated programs) and ``verilog``
(a design under a testbench). Untrusted code runs only through `sandbox`."""

from verifiers.code.verifier import CodeParams, CodeVerifier
from verifiers.code.verilog import VerilogParams, VerilogVerifier

__all__ = ["CodeParams", "CodeVerifier", "VerilogParams", "VerilogVerifier"]
