"""The ``format`` verifier: does the response have the required shape?

Four modes: a regex over the response; R1-style tags (``<think>...</think><answer>...</answer>``);
parseable JSON; JSON valid against a JSON Schema (Draft 2020-12). The reward is 1.0 when the
shape is right and 0.0 when it is not; ``details.problem`` says what was wrong first.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Literal

import regex
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, best_match
from pydantic import Field, field_validator, model_validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable

from referee.verifiers import json_text
from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params
from referee.verifiers.rules.field_error import field_error
from referee.verifiers.types import Item

Mode = Literal["regex", "tags", "json", "json_schema"]

# The params each mode reads; setting one that the mode ignores is a client mistake.
MODE_FIELDS: dict[str, frozenset[str]] = {
    "regex": frozenset({"pattern", "match", "regex_timeout_s"}),
    "tags": frozenset({"tags", "allow_text_outside", "allow_empty"}),
    "json": frozenset({"extract_fence"}),
    "json_schema": frozenset({"extract_fence", "schema_"}),
}
_TAG_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
# Validation messages quote the offending value, which may be the whole response.
_MAX_MESSAGE = 300


class FormatParams(Params):
    mode: Mode
    """Which check to run; each mode reads only its own params below."""
    pattern: str | None = None
    """``regex``: the pattern (``regex`` package syntax; inline flags such as ``(?s)`` work)."""
    match: Literal["search", "fullmatch"] = "search"
    """``regex``: find the pattern anywhere, or require it to match the whole response."""
    regex_timeout_s: float = Field(default=0.5, gt=0, le=10)
    """``regex``: budget for the match; a pattern that backtracks past it is ``timeout``."""
    tags: list[str] = Field(default_factory=lambda: ["think", "answer"], min_length=1)
    """``tags``: the tags that must each appear exactly once, in this order."""
    allow_text_outside: bool = False
    """``tags``: allow non-whitespace text before, between and after the tags."""
    allow_empty: bool = False
    """``tags``: allow a tag with nothing but whitespace inside (``<answer></answer>``),
    which R1's regex accepts: a policy learns to emit the shape with nothing in it."""
    extract_fence: bool = True
    """``json``/``json_schema``: parse the content of a single ```json fenced block when the
    response has one, rather than the whole response."""
    schema_: dict[str, Any] | bool | None = Field(default=None, alias="schema")
    """``json_schema``: the schema, when not given as the item's ``reference``."""

    @field_validator("pattern")
    @classmethod
    def _check_pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                regex.compile(value)
            except regex.error as exc:
                raise ValueError(f"not a valid regex: {exc}") from None
        return value

    @field_validator("tags")
    @classmethod
    def _check_tags(cls, value: list[str]) -> list[str]:
        if any(not _TAG_NAME.fullmatch(tag) for tag in value):
            raise ValueError("tag names are letters, digits, '_', '-' or '.', e.g. 'think'")
        if len(set(value)) < len(value):
            raise ValueError("tag names must be distinct")
        return value

    @model_validator(mode="after")
    def _check_mode_fields(self) -> FormatParams:
        if self.mode == "regex" and self.pattern is None:
            raise field_error("FormatParams", "pattern", "required for mode 'regex'", None)
        for name in sorted(self.model_fields_set - MODE_FIELDS[self.mode] - {"mode"}):
            key = FormatParams.model_fields[name].alias or name
            message = f"not used by mode {self.mode!r}"
            raise field_error("FormatParams", key, message, getattr(self, name))
        return self


class FormatVerifier(ItemVerifier[FormatParams]):
    """Reward 1.0 when the response has the required format, else 0.0.

    ``reference`` is read only by ``json_schema``, as the schema (an object, a boolean, or
    a string holding one); give the schema there or in ``params.schema``, not both.
    JSON is parsed strictly: ``NaN`` and ``Infinity`` are not JSON. ``details``: ``mode``,
    ``problem`` (null when the format holds, else the first problem found), for the JSON
    modes ``source`` (``fence`` or ``response``) and, for a schema violation, ``path``
    (a JSONPath) and ``error``. Regexes run with a time budget; schema keywords such as
    ``pattern`` run without one and rely on the cpu pool's hard deadline.
    """

    name = "format"
    Params = FormatParams
    description = "Format checks: regex, ordered <think>/<answer> tags, JSON, JSON Schema."

    def check(self, item: Item, params: FormatParams) -> Outcome:
        text = item.response_text()
        if params.mode == "regex":
            details = _check_regex(text, params)
        elif params.mode == "tags":
            details = {"problem": _tags_problem(text, params)}
        else:
            details = _check_json(text, item.reference, params)
        return Outcome(
            reward=float(details["problem"] is None), details={"mode": params.mode, **details}
        )


def _check_regex(text: str, params: FormatParams) -> dict[str, Any]:
    assert params.pattern is not None  # enforced by FormatParams for mode "regex"
    matcher = regex.fullmatch if params.match == "fullmatch" else regex.search
    try:
        found = matcher(params.pattern, text, timeout=params.regex_timeout_s)
    except TimeoutError:
        # Backtracking the response drives (on texts that almost match): no match, never
        # a ``timeout`` a trainer would mask.
        problem = f"pattern did not {params.match} within {params.regex_timeout_s:g} s"
        return {"problem": problem, "flags": ["pattern_timeout"]}
    return {"problem": None if found else f"pattern did not {params.match} the response"}


@lru_cache(maxsize=64)
def _tag_pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(tag) for tag in tags)
    return re.compile(rf"<(/?)({names})\s*>")


def _tags_problem(text: str, params: FormatParams) -> str | None:
    """The first way ``text`` breaks "each tag exactly once, in order, not nested, none
    empty"; None if none.

    Tags are matched case-sensitively; ``<think >`` counts, ``<think id=1>`` does not.
    """
    tags = params.tags
    tokens = list(_tag_pattern(tuple(tags)).finditer(text))
    problem = _count_problem(tokens, tags) or _order_problem(tokens, tags)
    if problem is None and not params.allow_text_outside:
        problem = _outside_problem(text, tokens)
    if problem is None and not params.allow_empty:
        problem = _empty_problem(text, tokens)
    return problem


def _empty_problem(text: str, tokens: list[re.Match[str]]) -> str | None:
    for opening, closing in zip(tokens[::2], tokens[1::2], strict=True):
        if not text[opening.end() : closing.start()].strip():
            return f"{opening.group()} is empty"
    return None


def _count_problem(tokens: list[re.Match[str]], tags: list[str]) -> str | None:
    for tag in tags:
        for closing, shown in (("", f"<{tag}>"), ("/", f"</{tag}>")):
            count = sum(1 for t in tokens if t.group(2) == tag and t.group(1) == closing)
            if count != 1:
                return f"missing {shown}" if count == 0 else f"{shown} appears {count} times"
    return None


def _order_problem(tokens: list[re.Match[str]], tags: list[str]) -> str | None:
    """With each tag once, the tokens must read <t1></t1><t2></t2>... in ``tags`` order."""
    for i, tag in enumerate(tags):
        opening, closing = tokens[2 * i], tokens[2 * i + 1]
        if opening.group(1, 2) != ("", tag):
            return f"expected <{tag}> but found {opening.group()} (out of order)"
        if closing.group(1, 2) != ("/", tag):
            return f"expected </{tag}> but found {closing.group()} (nested or out of order)"
    return None


def _outside_problem(text: str, tokens: list[re.Match[str]]) -> str | None:
    edges = [0, *(pos for t in tokens for pos in (t.start(), t.end())), len(text)]
    # Gaps are before the first tag, between a closing tag and the next opening, and after.
    for i in range(0, len(edges), 4):
        if text[edges[i] : edges[i + 1]].strip():
            where = tokens[i // 2].group() if i < len(tokens) * 2 else "the end"
            return f"text outside the tags, before {where}"
    return None


def _check_json(text: str, reference: object, params: FormatParams) -> dict[str, Any]:
    # Resolve the schema first: a bad schema is the client's fault whatever the response is.
    validator = _validator(reference, params) if params.mode == "json_schema" else None
    source, body = _json_body(text) if params.extract_fence else ("response", text)
    if body is None:
        return {"source": source, "problem": "several ```json blocks; expected one"}
    try:
        instance = _parse_strict(body)
    except (ValueError, RecursionError) as exc:
        return {"source": source, "problem": f"not JSON: {_shorten(str(exc))}"}
    if validator is None:
        return {"source": source, "problem": None}
    return {"source": source, **_schema_problem(validator, instance, reference)}


# A fence opener or closer: three backticks and the rest of the line (the info string).
_FENCE = re.compile(r"```([^\n`]*)")


def _json_body(text: str) -> tuple[Literal["fence", "response"], str | None]:
    """The content of the one ```json block, else the whole text; None when several.

    Fences pair up in order (opener, closer); an opener without a closer is ignored.
    """
    blocks: list[str] = []
    fences = list(_FENCE.finditer(text))
    for opener, closer in zip(fences[::2], fences[1::2], strict=False):
        if opener.group(1).strip().lower() == "json":
            blocks.append(text[opener.end() : closer.start()])
    if len(blocks) > 1:
        return "fence", None
    return ("fence", blocks[0]) if blocks else ("response", text)


def _parse_strict(body: str) -> Any:
    """Standard JSON (no NaN/Infinity) that means one value (no key given twice)."""
    return json_text.loads(body, constants=False)


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 3] + "..."


def _schema_field(reference: object) -> str:
    return "reference" if reference is not None else "params.schema"


def _schema_invalid(field: str, message: str) -> ItemInvalid:
    code = "invalid_reference" if field == "reference" else "invalid_params"
    return ItemInvalid(code, f"{field}: {message}")


def _validator(reference: object, params: FormatParams) -> Draft202012Validator:
    """A Draft 2020-12 validator for the item's schema; `ItemInvalid` naming its field."""
    if reference is not None and params.schema_ is not None:
        msg = "params.schema: give the schema in reference or in params.schema, not both"
        raise ItemInvalid("invalid_params", msg)
    if reference is None and params.schema_ is None:
        msg = "reference: mode 'json_schema' needs a JSON Schema here or in params.schema"
        raise ItemInvalid("invalid_reference", msg)
    field = _schema_field(reference)
    schema = reference if reference is not None else params.schema_
    if isinstance(schema, str):
        try:
            schema = _parse_strict(schema)
        except (ValueError, RecursionError) as exc:
            msg = f"the schema string is not JSON: {_shorten(str(exc))}"
            raise _schema_invalid(field, msg) from None
    if not isinstance(schema, dict | bool):
        raise _schema_invalid(field, "expected a JSON Schema (an object or a boolean)")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        msg = f"not a valid Draft 2020-12 schema: {_shorten(exc.message)}"
        raise _schema_invalid(field, msg) from None
    return Draft202012Validator(schema, registry=_LOCAL_ONLY)


def _refuse_retrieval(uri: str) -> Resource[Any]:
    """No $ref is ever fetched (jsonschema would read URLs and local files): a schema
    refers to itself only."""
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs class: mypy sees no __init__


_LOCAL_ONLY: Registry[Any] = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]


def _schema_problem(
    validator: Draft202012Validator, instance: Any, reference: object
) -> dict[str, Any]:
    """``problem`` null when ``instance`` is valid, else the most relevant error's place."""
    try:
        error = best_match(validator.iter_errors(instance))
    except Unresolvable as exc:
        # $refs resolve only inside the schema; nothing is fetched, from a URL or a file.
        ref = getattr(exc, "ref", "")
        msg = f"unresolvable $ref {_shorten(str(ref))!r}: only refs inside the schema resolve"
        raise _schema_invalid(_schema_field(reference), msg) from None
    except RecursionError:
        # The response nests deeper than validation can follow: its fault, not the item's.
        return {"problem": "nests too deeply to validate"}
    if error is None:
        return {"problem": None}
    return {
        "problem": "does not match the schema",
        "path": error.json_path,
        "error": _shorten(error.message),
    }
