"""``ast.parse`` that may be called from several threads at once.

CPython 3.11 up to 3.11.7 keeps the recursion depth of its AST converter (C tree to
Python objects) in state shared by every thread of the interpreter: when two threads
convert at once (one switched out in the middle, by a finalizer its allocations ran),
one fails with ``SystemError: AST constructor recursion depth mismatch``. Seen here as a
code item's ``verifier_failed`` error, under load, on a worker that scores items in
threads. One lock serialises our parses; each takes microseconds to milliseconds.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

_LOCK = threading.Lock()


@overload
def parse(source: str, mode: Literal["exec"] = "exec") -> ast.Module: ...
@overload
def parse(source: str, mode: Literal["eval"]) -> ast.Expression: ...
def parse(source: str, mode: Literal["exec", "eval"] = "exec") -> ast.Module | ast.Expression:
    """``ast.parse(source, mode=mode)``, one thread at a time; raises what it raises."""
    with _LOCK:
        return ast.parse(source, mode=mode)  # type: ignore[return-value]
