"""The ``instructions`` verifier: does the response follow verifiable instructions?

``reference``: ``{"instruction_id_list": [...], "kwargs": [{...}, ...]}``, as IFEval,
IFBench and Tulu-3's RLVR data store them (``None`` kwargs are dropped, as IFEval does);
also as JSON text (verl-style ground truth) and with ``instruction_id`` for
``instruction_id_list``.
Each id is one of IFEval's 25 constraint types (`verifiers.instructions.constraints`) or
IFBench's 58 (`verifiers.instructions.ifbench`, the ``ifbench`` extra); every kwarg it
needs must be given (both benchmarks would draw a random one).
``combination:repeat_prompt`` may take ``prompt_to_repeat`` from the item's prompt, as
IFBench's prompt-taking instructions do.

``mode``: ``strict`` checks the response as it is; ``loose`` also accepts it with its
first line, last line or both removed, and with ``*`` removed (IFEval's loose
accuracy). ``reward``: ``all`` (1 when every constraint holds) or ``fraction``.
Components: ``<instruction id>`` -> 1 or 0 per constraint (an id given twice gets
``#2``...). An empty response follows nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Required

import regex
from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from referee.verifiers import budget
from referee.verifiers.base import (
    ItemInvalid,
    ItemVerifier,
    Outcome,
    Params,
    describe_validation_error,
    object_reference,
)
from referee.verifiers.instructions.constraints import (
    CONSTRAINTS,
    Kwargs,
    NoKwargs,
    PatternTimeout,
)
from referee.verifiers.instructions.ifbench import IDS as IFBENCH_IDS
from referee.verifiers.instructions.ifbench import IfbenchCheck, ResponseBroke
from referee.verifiers.reference_cache import ReferenceCache
from referee.verifiers.types import Item

MAX_INSTRUCTIONS = 64


class InstructionsParams(Params):
    mode: Literal["strict", "loose"] = "strict"
    reward: Literal["all", "fraction"] = "all"


class InstructionsReference(TypedDict, total=False):
    """The reference; other keys (datasets carry ``key``, ``prompt``...) are ignored."""

    instruction_id_list: Required[
        Annotated[list[str], Field(min_length=1, max_length=MAX_INSTRUCTIONS)]
    ]
    kwargs: list[dict[str, Any] | None]


_REFERENCE = TypeAdapter(InstructionsReference)


class InstructionsVerifier(ItemVerifier[InstructionsParams]):
    """Reward for following IFEval-style instructions; see the module docstring."""

    name = "instructions"
    Params = InstructionsParams
    description = (
        "Verifiable instruction following: IFEval's 25 constraint types (keywords, "
        "lengths, formats, case, language...) and IFBench's 58, strict or loose, "
        "all or fraction."
    )

    def __init__(self, budget_s: float = budget.DEFAULT_BUDGET_S) -> None:
        self._built: ReferenceCache[dict[str, tuple[Any, Kwargs]]] = ReferenceCache(
            BUILT_REFERENCES, BUILT_REFERENCE_BYTES
        )
        self.budget_s = budget_s
        """CPU seconds the checks may spend on one response, under a pool (see `check`)."""

    def check(self, item: Item, params: InstructionsParams) -> Outcome:
        # A reference's checks are built once: kwargs validated, IFBench's checkers made.
        # Some take the prompt (repeat_prompt, IFBench's prompt-taking ones): it is part
        # of the key.
        constraints = self._built.get(
            item.reference, lambda: _constraints(item), item.prompt_text()
        )
        text = item.response_text()
        # An empty (or blank) variant follows nothing; it is never checked.
        variants = loose_variants(text) if params.mode == "loose" else [text]
        variants = [v for v in variants if v.strip()]
        # Counting a response's sentences or words (NLTK's Punkt: about 0.1 ms a sentence),
        # detecting its language and IFBench's checkers cost what the response makes them
        # cost: a response that keeps them busy past the budget follows nothing.
        costly = None if budget.begin(self.budget_s) else budget.exceeded(self.budget_s)
        if costly:
            variants = []
        components: dict[str, float] = {}
        broke: list[str] = []
        for key, (check, kwargs) in constraints.items():
            try:
                held = any(check(v, kwargs) for v in variants)
            except (regex.error, PatternTimeout) as exc:
                message = f"reference.kwargs: {key}: a pattern that cannot be used ({exc})"
                raise ItemInvalid("invalid_reference", message) from None
            except TimeoutError:  # a tokenizer's own limit (Punkt's: 5 s), outside a pool
                held, costly = False, f"{key}: NLTK's own time limit ran out on this response"
            except ResponseBroke as exc:  # the checker reads other text: not followed
                held = False
                broke.append(str(exc))
            components[key] = float(held)
        outcome = _outcome(components, params, costly)
        if broke:
            flags = outcome.details.setdefault("flags", [])
            flags.append("checker_failed")
            outcome.details["checker_failed"] = broke
        return outcome


def _outcome(
    components: dict[str, float], params: InstructionsParams, costly: str | None
) -> Outcome:
    """The verdict; ``costly`` says why the response was not read to the end (flagged
    ``over_budget``: it followed nothing that was left)."""
    passed = sum(components.values())
    reward = (
        float(passed == len(components)) if params.reward == "all" else passed / len(components)
    )
    details: dict[str, Any] = {
        "followed": int(passed),
        "instructions": len(components),
        "mode": params.mode,
    }
    if costly:
        details.update(reason=costly, flags=[budget.OVER_BUDGET])
    return Outcome(reward, components=components, details=details)


BUILT_REFERENCES = 1024
BUILT_REFERENCE_BYTES = 16 << 10
"""At most 1024 built references, each from under 16 KiB of reference and prompt."""


def _constraints(item: Item) -> dict[str, tuple[Any, Kwargs]]:
    """Instruction key -> (check, validated kwargs); `ItemInvalid` naming the field."""
    try:
        reference = _REFERENCE.validate_python(_decoded(item.reference))
    except ValidationError as exc:
        raise ItemInvalid(
            "invalid_reference", describe_validation_error(exc, "reference")
        ) from None
    ids, all_kwargs = reference["instruction_id_list"], reference.get("kwargs") or []
    if all_kwargs and len(all_kwargs) != len(ids):
        message = f"reference.kwargs: {len(all_kwargs)} entries for {len(ids)} instructions"
        raise ItemInvalid("invalid_reference", message)
    found: dict[str, tuple[Any, Kwargs]] = {}
    for index, instruction in enumerate(ids):
        given = {
            k: v
            for k, v in ((all_kwargs[index] or {}) if all_kwargs else {}).items()
            if v is not None
        }
        key = instruction if instruction not in found else _numbered(instruction, found)
        found[key] = _constraint(instruction, given, item, index)
    return found


def _decoded(raw: object) -> object:
    """The reference as an object: JSON text decoded (datasets made for verl keep ground
    truth as a string), ``instruction_id`` read as ``instruction_id_list`` (the name some
    training sets use)."""
    raw = object_reference(raw)
    if isinstance(raw, dict) and "instruction_id" in raw and "instruction_id_list" not in raw:
        raw = {**raw, "instruction_id_list": raw["instruction_id"]}
        del raw["instruction_id"]
    return raw


def _constraint(
    instruction: str, given: dict[str, Any], item: Item, index: int
) -> tuple[Any, Kwargs]:
    """One instruction's check and validated kwargs; `ItemInvalid` naming the field."""
    where = f"reference.kwargs.{index}"
    if instruction in IFBENCH_IDS:
        return IfbenchCheck(instruction, given, item.prompt_text(), where), NoKwargs()
    if instruction not in CONSTRAINTS:
        message = f"reference.instruction_id_list.{index}: unknown instruction {instruction!r}"
        raise ItemInvalid("invalid_reference", message)
    model, check = CONSTRAINTS[instruction]
    if instruction == "combination:repeat_prompt" and "prompt_to_repeat" not in given:
        given["prompt_to_repeat"] = item.prompt_text()
    try:
        return check, model.model_validate(given)
    except ValidationError as exc:
        raise ItemInvalid("invalid_reference", describe_validation_error(exc, where)) from None


def _numbered(instruction: str, found: dict[str, Any]) -> str:
    number = 2
    while f"{instruction}#{number}" in found:
        number += 1
    return f"{instruction}#{number}"


def loose_variants(text: str) -> list[str]:
    """IFEval's loose variants: as is, without its first and/or last line, each also
    without ``*``."""
    lines = text.split("\n")
    cut = [
        "\n".join(lines[1:]).strip(),
        "\n".join(lines[:-1]).strip(),
        "\n".join(lines[1:-1]).strip(),
    ]
    return [text, text.replace("*", ""), *cut, *(c.replace("*", "") for c in cut)]
