"""Whether tool calls match gold calls, with the BFCL AST checker's semantics.

A gold call is ``{function name: {parameter: [acceptable values]}}``; ``""`` among a
parameter's acceptable values means it may be left out. With the function's JSON-schema
style description (BFCL's types: ``string``, ``integer``, ``float``, ``boolean``,
``array``, ``tuple``, ``dict``, ``any``; also ``number`` and ``object``) a call matches when:

- every required parameter is there and no parameter outside the description and the gold;
- each value has the described type (an int is taken for a float; a tuple for a tuple), or
  is a *variable name*: a string where the gold's acceptable values are strings though
  the type is not; arrays are checked one level deep;
- each value is acceptable: strings compared case-insensitively without spaces and
  ``,./-_*^`` (and ``'`` as ``"``), in lists too; dicts key by key (no unknown key, no
  missing required key); lists of dicts in order; anything else by equality;
- every gold parameter not given is optional.

Without a description, the type is taken from the acceptable values. Several gold calls
(parallel calls) must be matched one to one, in any order; the matching is a maximum
bipartite matching (BFCL's is greedy, first fit, which can miss a full matching that
exists; every full matching it finds, this finds too).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.verifiers.tools.calls import Call

Gold = Mapping[str, Mapping[str, Sequence[Any]]]
"""One gold call: ``{name: {parameter: acceptable values}}``."""

TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "number": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "object": dict,
    "any": str,
}
NESTED = frozenset({"array", "tuple"})
_STANDARD = re.compile(r"[ ,./\-_*^]")


def standardized(text: str) -> str:
    """BFCL's string normal form: no spaces or ``,./-_*^``, lower case, ``'`` as ``"``.
    Short strings (gold values, mostly) are cached; a long one is not kept in memory."""
    return _standardized(text) if len(text) <= CACHED_CHARS else _normal_form(text)


CACHED_CHARS = 256


@functools.lru_cache(maxsize=16384)
def _standardized(text: str) -> str:
    return _normal_form(text)


def _normal_form(text: str) -> str:
    return _STANDARD.sub("", text).lower().replace("'", '"')


@dataclass(frozen=True, slots=True)
class ParamRule:
    """One gold parameter, compiled once per reference: its described type and its
    acceptable values in the forms the checks compare (standardized strings and lists)."""

    kind: str
    wanted: type
    inner: type | None
    answer: type | None
    """The type of the gold's values (a variable name's type when it is not ``wanted``)."""
    acceptable: list[Any]
    strings: frozenset[str]
    lists: list[list[Any]]
    optional: bool


@dataclass(frozen=True, slots=True)
class GoldRule:
    """One gold call compiled against its function's description (`compile_gold`)."""

    name: str
    params: dict[str, ParamRule]
    required: tuple[str, ...]
    allowed: frozenset[str]


def compile_gold(gold: Gold, description: Mapping[str, Any] | None) -> GoldRule:
    """``gold`` (described by ``description``, or by its own values when None) as the
    rule `mismatch` checks calls against."""
    [(name, expected)] = gold.items()
    schema = (description or {}).get("parameters") or {}
    properties: Mapping[str, Any] = schema.get("properties") or {}
    allowed = set(expected)
    if description is not None:
        allowed &= set(properties)
    return GoldRule(
        name=name,
        params={p: _param_rule(list(v), properties.get(p)) for p, v in expected.items()},
        required=tuple(schema.get("required") or ()),
        allowed=frozenset(allowed),
    )


def _param_rule(acceptable: list[Any], spec: Mapping[str, Any] | None) -> ParamRule:
    kind = str((spec or {}).get("type") or _inferred(acceptable))
    inner = TYPES.get(str(((spec or {}).get("items") or {}).get("type")))
    return ParamRule(
        kind=kind,
        wanted=TYPES.get(kind, str),
        inner=inner if kind in NESTED else None,
        answer=_answer_type(acceptable),
        acceptable=acceptable,
        strings=frozenset(standardized(a) for a in acceptable if isinstance(a, str)),
        lists=[_strings_standardized(a) for a in _lists(acceptable)],
        optional="" in acceptable,
    )


def mismatch(call: Call, rule: GoldRule) -> str | None:
    """Why ``call`` does not match the gold call ``rule`` was compiled from, or None."""
    name = rule.name
    if call.name != name:
        return f"function {call.name!r}, expected {name!r}"
    arguments = call.arguments
    for required in rule.required:
        if required not in arguments:
            return f"{name}: missing required parameter {required!r}"
    for param, value in arguments.items():
        if param not in rule.allowed:
            return f"{name}: unexpected parameter {param!r}"
        problem = _value_mismatch(param, value, rule.params[param])
        if problem is not None:
            return f"{name}: {problem}"
    for param, expected in rule.params.items():
        if param not in arguments and not expected.optional:
            return f"{name}: missing parameter {param!r}"
    return None


def _value_mismatch(param: str, value: Any, rule: ParamRule) -> str | None:
    kind, wanted = rule.kind, rule.wanted
    if type(value) is wanted and rule.inner is None:
        # Already of the described type (most values): neither converted nor a variable.
        ok = _acceptable(value, rule)
    else:
        if kind == "tuple" and type(value) is tuple:
            value = list(value)
        if type(value) is int and kind in ("float", "number"):
            value = float(value)
        variable = _variable(value, rule.answer, wanted)
        if not variable and not _typed(value, rule.acceptable, wanted, rule.inner):
            return f"parameter {param!r}: {value!r} is not of type {kind}"
        ok = value in rule.acceptable if variable else _acceptable(value, rule)
    return None if ok else f"parameter {param!r}: {value!r} is not acceptable"


def _acceptable(value: Any, rule: ParamRule) -> bool:
    """Whether ``value``, of the described type, is among the acceptable values."""
    wanted = rule.wanted
    if wanted is str:
        return standardized(value) in rule.strings
    if wanted is dict:
        return _dict_ok(value, rule.acceptable)
    if wanted is list and rule.inner is dict:
        return _dicts_ok(value, rule.acceptable)
    if wanted is list:
        return _strings_standardized(value) in rule.lists
    return value in rule.acceptable


def _inferred(acceptable: list[Any]) -> str:
    """The described type of a parameter with no description, from its gold values."""
    sample = next((a for a in acceptable if a != ""), "")
    for name, python in (("boolean", bool), ("integer", int), ("float", float), ("array", list)):
        if type(sample) is python:
            return name
    return "dict" if isinstance(sample, dict) else "string"


def _answer_type(acceptable: list[Any]) -> type | None:
    return next((type(a) for a in acceptable if a != ""), None)


def _variable(value: Any, answer: type | None, wanted: type) -> bool:
    """A value given as a variable name: the gold's values are of another type than the
    described one (strings naming variables), and the value is of the gold's type."""
    if answer is None or answer is wanted or type(value) is wanted:
        return False
    return type(value) is answer


def _typed(value: Any, acceptable: list[Any], wanted: type, inner: type | None) -> bool:
    if type(value) is not wanted:
        return False
    if inner is None or not isinstance(value, list):
        return True
    # One level deep: each element has the inner type, or (a variable) the gold's type. An
    # optional parameter's "" asks nothing of the elements (as in BFCL).
    return any(
        not isinstance(option, list)
        or all(type(v) is inner or _variable(v, _answer_type(option), inner) for v in value)
        for option in acceptable
    )


def _strings_standardized(values: list[Any]) -> list[Any]:
    return [standardized(v) if isinstance(v, str) else v for v in values]


def _dict_ok(value: dict[str, Any], acceptable: list[Any]) -> bool:
    return any(_one_dict_ok(value, option) for option in acceptable if isinstance(option, dict))


def _one_dict_ok(value: dict[str, Any], option: Mapping[str, Sequence[Any]]) -> bool:
    for key, item in value.items():
        if key not in option:
            return False
        wanted = _strings_standardized(list(option[key]))
        if (standardized(item) if isinstance(item, str) else item) not in wanted:
            return False
    return all(key in value or "" in allowed for key, allowed in option.items())


def _lists(acceptable: list[Any]) -> list[list[Any]]:
    """The acceptable lists; an optional parameter's "" stands for the empty list (an
    empty list given for it is accepted, as BFCL does)."""
    return [a if isinstance(a, list) else [] for a in acceptable if isinstance(a, list) or a == ""]


def _dicts_ok(value: list[Any], acceptable: list[Any]) -> bool:
    return any(
        len(option) == len(value)
        and all(
            isinstance(v, dict) and isinstance(o, dict) and _one_dict_ok(v, o)
            for v, o in zip(value, option, strict=True)
        )
        for option in _lists(acceptable)
    )


def matched(calls: int, golds: int, fits: Callable[[int, int], bool]) -> int:
    """The most one-to-one pairs (call, gold) such that ``fits(gold, call)``: a maximum
    bipartite matching (Kuhn's augmenting paths). ``fits`` is asked lazily, in call
    order, so calls given in the gold's order cost one check each."""
    owner: dict[int, int] = {}

    def augment(gold: int, seen: set[int]) -> bool:
        for call in range(calls):
            if call not in seen and fits(gold, call):
                seen.add(call)
                if call not in owner or augment(owner[call], seen):
                    owner[call] = gold
                    return True
        return False

    return sum(augment(gold, set()) for gold in range(golds))
