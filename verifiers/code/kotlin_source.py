"""A Kotlin answer whose ``main`` lives in an object (``object Solution { @JvmStatic fun
main(...) }``, or a class's companion object) run as a program: the jar ``kotlinc``
builds starts only a top-level ``main``, so the run found none ("no main manifest
attribute") and a right answer scored 0. A top-level ``main`` calling that one is added.

Read with comments and literals blanked (Java's rules: `java_source.masked`; Kotlin's raw
strings are Java's text blocks).
"""

from __future__ import annotations

import re

from referee.verifiers.code import identifiers, java_source

_MAIN = re.compile(r"\bfun\s+main\s*\(\s*(\)?)")
_HOLDER = re.compile(r"\b(?:object|class)\s+([A-Za-z_]\w*)")


def with_top_level_main(code: str) -> str:
    """``code``, plus a top-level ``main`` calling its object's when it has none."""
    shadow = java_source.masked(code)
    depth = identifiers.brace_depths(shadow)
    mains = list(_MAIN.finditer(shadow))
    if not mains or any(depth[m.start()] == 0 for m in mains):
        return code
    main = mains[0]
    holders = [h for h in _HOLDER.finditer(shadow, 0, main.start()) if depth[h.start()] == 0]
    if not holders:
        return code
    holder = holders[-1].group(1)
    call = f"{holder}.main()" if main.group(1) else f"{holder}.main(args)"
    return f"{code}\n\nfun main(args: Array<String>) = {call}\n"
