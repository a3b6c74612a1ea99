"""The ``tool_call`` verifier: are the response's function calls the gold ones?

``reference``: ``{"ground_truth": [...], "functions": [...]}``. ``ground_truth`` is BFCL's
possible-answer list, one ``{name: {parameter: [acceptable values]}}`` per expected call
(``""`` among the values: the parameter may be left out); ``calls``
(``[{"name", "arguments"}]``, each value the only acceptable one) may stand in for it.
An empty list means no call is expected (irrelevance: the reward is 1 when the response
makes none; a call it breaks, with positional arguments, a variable or a broken
``<tool_call>`` block, is still a call). ``functions`` are the tools' descriptions (BFCL's,
or OpenAI's
``{"type": "function", "function": {...}}``), for types, required and allowed parameters;
without one, a call's parameters are checked against the gold alone.

The response's calls are parsed as `verifiers.tools.calls` says, and matched one to one
against the gold calls in any order (`verifiers.tools.matching`, BFCL's semantics).
Reward: ``all`` (default): 1 when every gold call is matched and no other call was made;
``partial``: matched calls / max(gold calls, calls made), so extra calls cost as much as
missing ones. Components: ``format`` (the calls could be read), ``names`` and
``arguments`` (the same fraction, counting a call right by its name alone, then by all of
it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from referee.verifiers import budget
from referee.verifiers.base import (
    ItemInvalid,
    ItemVerifier,
    Outcome,
    Params,
    describe_validation_error,
    object_reference,
)
from referee.verifiers.reference_cache import ReferenceCache
from referee.verifiers.tools.calls import MAX_CALLS, Call, Format, Unparsable, parse_calls
from referee.verifiers.tools.matching import Gold, GoldRule, compile_gold, matched, mismatch
from referee.verifiers.types import Item


class ToolCallParams(Params):
    format: Format = "auto"
    """Where to read the calls: ``auto`` tries OpenAI ``tool_calls``, ``<tool_call>``
    blocks, JSON, then Python call syntax; the others read one format only."""
    reward: Literal["all", "partial"] = "all"
    underscore_dots: bool = True
    """Accept ``a_b_f`` for a gold ``a.b.f`` (OpenAI tool names cannot hold dots), unless
    that makes two gold functions indistinguishable."""


class GoldCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=256)
    arguments: dict[str, Any] = Field(default_factory=dict)


def _one_function(gold: dict[str, dict[str, list[Any]]]) -> dict[str, dict[str, list[Any]]]:
    if len(gold) != 1:
        raise ValueError("a gold call names exactly one function")
    return gold


GoldEntry = Annotated[dict[str, dict[str, list[Any]]], AfterValidator(_one_function)]


class ToolReference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ground_truth: list[GoldEntry] | None = Field(default=None, max_length=MAX_CALLS)
    calls: list[GoldCall] | None = Field(default=None, max_length=MAX_CALLS)
    functions: list[dict[str, Any]] = Field(default_factory=list, max_length=512)

    @model_validator(mode="after")
    def _one_gold(self) -> ToolReference:
        if (self.ground_truth is None) == (self.calls is None):
            raise ValueError("give exactly one of ground_truth and calls")
        return self

    def golds(self) -> list[Gold]:
        if self.calls is not None:
            return [{c.name: {k: [v] for k, v in c.arguments.items()}} for c in self.calls]
        return list(self.ground_truth or [])

    def descriptions(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for entry in self.functions:
            function = entry.get("function", entry) if entry.get("type") == "function" else entry
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                found[function["name"]] = function
        return found


class ToolCallVerifier(ItemVerifier[ToolCallParams]):
    """Reward for function calls against gold calls; see the module docstring."""

    name = "tool_call"
    Params = ToolCallParams
    description = (
        "Function-call correctness (OpenAI tool_calls, Hermes tags, JSON or Python call "
        "syntax) against gold calls, with the BFCL AST checker's semantics."
    )

    def __init__(self, budget_s: float = budget.DEFAULT_BUDGET_S) -> None:
        self._references: ReferenceCache[list[GoldRule]] = ReferenceCache(
            REFERENCE_CACHE, CACHED_REFERENCE_BYTES
        )
        self.budget_s = budget_s
        """CPU seconds reading one response may take, under a pool: a megabyte read as
        Python is 300,000 statements for CPython's parser (3 s)."""

    def check(self, item: Item, params: ToolCallParams) -> Outcome:
        raw = item.reference
        golds = self._references.get(raw, lambda: _rules(_validated(raw)))
        if not budget.begin(self.budget_s):
            # Never "no call, so right" for an irrelevance reference: a wrong answer's 0.
            return _over_budget(golds, self.budget_s)
        try:
            calls = parse_calls(item.response, params.format) or []
            unreadable, attempted = None, False
        except Unparsable as exc:
            calls, unreadable, attempted = [], str(exc), exc.attempted
        if params.underscore_dots:
            calls = _dotted(calls, golds)
        details: dict[str, Any] = {"calls": [c.name for c in calls], "expected": len(golds)}
        if unreadable is not None:
            details["unreadable"] = unreadable
        if not golds:  # irrelevance: right when no call is made, not even a broken one
            reward = float(not calls and not attempted)
            return Outcome(reward, components={"format": reward}, details=details)
        return _graded(calls, golds, params, details, unreadable)


def _over_budget(golds: list[GoldRule], seconds: float) -> Outcome:
    parts = ("format", "names", "arguments") if golds else ("format",)
    details = budget.over_budget(seconds, {"calls": [], "expected": len(golds)})
    return Outcome(0.0, components=dict.fromkeys(parts, 0.0), details=details)


def _rules(reference: ToolReference) -> list[GoldRule]:
    """The reference's gold calls, each compiled against its function's description."""
    descriptions = reference.descriptions()
    return [compile_gold(gold, descriptions.get(next(iter(gold)))) for gold in reference.golds()]


REFERENCE_CACHE = 1024
CACHED_REFERENCE_BYTES = 64 << 10
"""At most 1024 references of 64 KiB each are kept (64 MiB per worker, at worst)."""


def _validated(raw: object) -> ToolReference:
    try:
        return ToolReference.model_validate(object_reference(raw))
    except ValidationError as exc:
        message = describe_validation_error(exc, "reference")
        raise ItemInvalid("invalid_reference", message) from None


def _dotted(calls: list[Call], golds: list[GoldRule]) -> list[Call]:
    """Calls named ``a_b`` for a gold ``a.b`` renamed to it (when unambiguous)."""
    names = {gold.name for gold in golds}
    plain: dict[str, list[str]] = {}
    for name in names:
        plain.setdefault(name.replace(".", "_"), []).append(name)
    renamed = []
    for call in calls:
        options = plain.get(call.name, [])
        unambiguous = call.name not in names and len(options) == 1
        renamed.append(Call(options[0], call.arguments) if unambiguous else call)
    return renamed


def _graded(
    calls: list[Call],
    golds: list[GoldRule],
    params: ToolCallParams,
    details: dict[str, Any],
    unreadable: str | None,
) -> Outcome:
    misses: dict[tuple[int, int], str | None] = {}

    def fits(gold: int, call: int) -> bool:
        """Whether ``call`` matches ``gold``; each pair of one name checked once (why it
        misses is kept for the details)."""
        if calls[call].name != golds[gold].name:
            return False
        if (gold, call) not in misses:
            misses[gold, call] = mismatch(calls[call], golds[gold])
        return misses[gold, call] is None

    total = max(len(golds), len(calls))
    if len(calls) == len(golds) and all(fits(i, i) for i in range(total)):
        # Calls given in the gold's order, all right (the common case): no matching to do.
        components = {"format": 1.0, "names": 1.0, "arguments": 1.0}
        return Outcome(1.0, components=components, details=details)
    full = 0 if len(calls) == len(golds) == 1 else matched(len(calls), len(golds), fits)
    components = {
        "format": 0.0 if unreadable is not None or not calls else 1.0,
        "names": _same_names(calls, golds) / total,
        "arguments": full / total,
    }
    if full < len(golds):
        details["mismatches"] = [_reason(calls, gold, misses, g) for g, gold in enumerate(golds)][
            :8
        ]
    complete = full == len(golds) == len(calls)
    reward = float(complete) if params.reward == "all" else full / total
    return Outcome(reward, components=components, details=details)


def _same_names(calls: list[Call], golds: list[GoldRule]) -> int:
    """The most one-to-one pairs (call, gold) of the same name: per name, the smaller of
    the two counts (a matching on names alone needs nothing more)."""
    wanted: dict[str, int] = {}
    for gold in golds:
        wanted[gold.name] = wanted.get(gold.name, 0) + 1
    pairs = 0
    for call in calls:
        if wanted.get(call.name, 0) > 0:
            wanted[call.name] -= 1
            pairs += 1
    return pairs


def _reason(
    calls: list[Call], gold: GoldRule, misses: dict[tuple[int, int], str | None], index: int
) -> str:
    """Why a gold call is missed: by the first call of its name, else the first call."""
    same = [c for c, call in enumerate(calls) if call.name == gold.name]
    for c in same or range(min(len(calls), 1)):
        reason = misses.get((index, c)) if (index, c) in misses else mismatch(calls[c], gold)
        if reason:
            return reason
    return f"no call of {gold.name!r}"
