"""MultiPL-E's shape of an assert test: the prompt opens a function (for Java its class
too) that the completion never closes, and the test begins with the ``}`` that closes
it. The two are split at that brace (`finished`) before they are built apart."""

from __future__ import annotations

import re

_CLOSING = re.compile(r"\A\s*\}(?:\s*\})*")


def finished(code: str, test: str) -> tuple[str, str]:
    """``code`` and ``test`` with the braces ``test`` begins by closing moved to the end
    of ``code``."""
    closing = _CLOSING.match(test)
    if closing is None:
        return code, test
    kept = "\n" * closing.group().count("\n")  # a compiler's line numbers stay the test's
    return f"{code}\n{closing.group().strip()}\n", kept + test[closing.end() :]
