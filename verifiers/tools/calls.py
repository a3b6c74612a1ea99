"""Reading tool calls out of a model's response, in the formats models write them.

- OpenAI chat: the last assistant message's ``tool_calls`` (``function.name``,
  ``function.arguments`` as a JSON string or an object);
- Hermes / Qwen: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks;
- JSON: a call object (``name`` with ``arguments`` or ``parameters``), a list of them, or
  ``{"tool_calls": [...]}``, optionally in a code fence;
- Python call syntax: ``f(a=1)``, ``[f(a=1), g(b="x")]``, ``pkg.f(a=1)``, one call per line
  or a list; keyword arguments only, literal values only (read with ``ast.literal_eval``,
  never evaluated).

`parse_calls` returns the calls, or None when the response holds no call in any format
(an irrelevance answer), and raises `Unparsable` when it tries a format and breaks it
(a ``<tool_call>`` block that is not JSON). Nothing in the response is ever run.

A name given twice (a JSON key, `verifiers.json_text`; a Python keyword, which Python
itself refuses) breaks the call: a tool could run with the value not scored.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

from referee.verifiers import json_text, syntax_tree
from referee.verifiers.tags import blocks
from referee.verifiers.tools.call_reader import read_calls
from referee.verifiers.types import Conversation, Message

Format = Literal["auto", "openai", "hermes", "json", "python"]

MAX_CALLS = 64
_FENCE = re.compile(r"```[A-Za-z]*\s*\n(.*?)```", re.DOTALL)
_PYTHON_START = re.compile(r"\[?\s*[A-Za-z_][\w.]*\s*\(")


class Unparsable(ValueError):
    """The response claims a format (a tag, a fence, a call) but breaks it. ``attempted``:
    what broke is a function call (a name called with arguments that cannot be read, a
    ``<tool_call>`` block, ``tool_calls`` entries, a JSON object with a ``name``), not
    text that only looked like a format (a JSON list of numbers)."""

    def __init__(self, message: str, *, attempted: bool = True) -> None:
        super().__init__(message)
        self.attempted = attempted


class Call(NamedTuple):
    """One function call: its name and keyword arguments (JSON-like values). A tuple:
    responses hold a few of them each, and they are made on the hot path."""

    name: str
    arguments: dict[str, Any]


def parse_calls(response: str | Conversation, fmt: Format = "auto") -> list[Call] | None:
    """The calls in ``response`` (see the module docstring), None when it has none."""
    if not isinstance(response, str):
        message = _last_assistant(response)
        if message is None:
            return None
        tool_calls = (message.model_extra or {}).get("tool_calls")
        if tool_calls:
            return _openai_calls(tool_calls)
        if fmt == "openai":
            return None
        response = message.content or ""
    elif fmt == "openai":
        return None
    return _text_calls(response, fmt)


def _last_assistant(messages: Conversation) -> Message | None:
    return next((m for m in reversed(messages) if m.role == "assistant"), None)


def _openai_calls(tool_calls: object) -> list[Call]:
    if not isinstance(tool_calls, list) or len(tool_calls) > MAX_CALLS:
        raise Unparsable("tool_calls: expected a list of calls")
    calls = []
    for index, entry in enumerate(tool_calls):
        function = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(function, dict):
            raise Unparsable(f"tool_calls.{index}: no function")
        calls.append(_call_of(function, f"tool_calls.{index}.function", tagged=True))
    return calls


def _text_calls(text: str, fmt: Format) -> list[Call] | None:
    if fmt in ("auto", "hermes") and "<tool_call>" in text:
        tagged = blocks(text, "<tool_call>", "</tool_call>")
        if tagged:
            return [
                _call_of(_json(block, "<tool_call>"), "<tool_call>", tagged=True)
                for block in tagged
            ]
    if fmt == "hermes":
        return None
    stripped = _unfenced(text).strip()
    if not stripped:
        return None
    looks_python = fmt == "auto" and _PYTHON_START.match(stripped) is not None
    if fmt in ("auto", "json") and stripped[0] in "[{" and not looks_python:
        try:
            value = json_text.loads(stripped)
        except json_text.RepeatedKey as exc:  # a call, broken: not prose to read past
            raise Unparsable(f"not a JSON call ({exc})") from None
        except (ValueError, RecursionError):  # nested past what Python's reader takes
            if fmt == "json":
                raise Unparsable("not a JSON call or list of calls", attempted=False) from None
        else:
            return _json_calls(value)  # JSON: what it holds is read, or said broken
    if fmt in ("auto", "python"):
        return _python_calls(stripped, strict=fmt == "python")
    return None


def _unfenced(text: str) -> str:
    if "```" not in text:
        return text
    fenced = _FENCE.findall(text)
    return fenced[-1] if fenced else text


def _json(text: str, where: str) -> object:
    try:
        return json_text.loads(text)
    except ValueError as exc:
        raise Unparsable(f"{where}: not JSON ({exc})") from None
    except RecursionError:
        raise Unparsable(f"{where}: JSON nested too deeply to read") from None


def _json_calls(value: object) -> list[Call] | None:
    if isinstance(value, dict) and "tool_calls" in value:
        return _openai_calls(value["tool_calls"])
    entries = value if isinstance(value, list) else [value]
    if not entries:
        return None
    if len(entries) > MAX_CALLS:
        raise Unparsable(f"more than {MAX_CALLS} calls")
    return [
        _call_of(
            entry.get("function", entry) if isinstance(entry, dict) else entry,
            f"[{i}]",
            tagged=False,
        )
        for i, entry in enumerate(entries)
    ]


def _call_of(value: object, where: str, *, tagged: bool) -> Call:
    """A call from ``{"name", "arguments" | "parameters"}``; arguments may be a JSON string.
    ``tagged``: the value sits where only calls go (a ``<tool_call>`` block, ``tool_calls``),
    so even a broken one was an attempted call; untagged JSON was one only if it has a
    ``name``."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        attempted = tagged or (isinstance(value, dict) and "name" in value)
        raise Unparsable(f"{where}: expected an object with a name", attempted=attempted)
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = _json(arguments, f"{where}.arguments") if arguments.strip() else {}
    if not isinstance(arguments, dict):
        raise Unparsable(f"{where}.arguments: expected an object")
    return Call(value["name"], arguments)


def _python_calls(text: str, strict: bool) -> list[Call] | None:
    quick = read_calls(text)
    if quick is not None and len(quick) <= MAX_CALLS:
        return [Call(*call) for call in quick]
    try:
        nodes = list(_call_nodes(text))
    # CPython's parser reports its own stack overflowing (long runs of names or unary
    # operators, not only deep brackets) as MemoryError: a text it cannot read.
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        if strict:
            raise Unparsable("not Python call syntax", attempted=False) from None
        return None
    if not nodes:
        return None
    if len(nodes) > MAX_CALLS:
        raise Unparsable(f"more than {MAX_CALLS} calls")
    return [_python_call(node) for node in nodes]


def _call_nodes(text: str) -> Iterator[ast.Call]:
    """The call expressions of ``text``: one expression per line, or a list or tuple of
    calls. Raises SyntaxError / ValueError for anything else (prose is not a call)."""
    tree = syntax_tree.parse(text, mode="exec")
    for statement in tree.body:
        if not isinstance(statement, ast.Expr):
            raise ValueError("not an expression")
        value = statement.value
        elements = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        for element in elements:
            if not isinstance(element, ast.Call):
                raise ValueError("not a call")
            yield element


def _python_call(node: ast.Call) -> Call:
    name = _dotted(node.func)
    if node.args or any(keyword.arg is None for keyword in node.keywords):
        raise Unparsable(f"{name}(): arguments must be given by keyword")
    seen: set[str] = set()
    for keyword in node.keywords:  # one pass: a call may hold many thousands of them
        if keyword.arg in seen:
            raise Unparsable(f"{name}(): keyword argument {keyword.arg!r} given twice")
        seen.add(keyword.arg or "")
    try:
        arguments = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise Unparsable(f"{name}(): argument values must be literals") from None
    return Call(name, arguments)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise Unparsable("a call's function must be a (dotted) name")
