from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status

TAGS = {"mode": "tags"}
JSON = {"mode": "json"}
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
    "additionalProperties": False,
}
SCHEMA = {"mode": "json_schema"}
FENCED = 'Here it is:\n```json\n{"name": "Ada"}\n```\nAnything else?'

CASES: list[tuple[str, Any, dict[str, Any], float]] = [
    # (response, reference, params, expected reward)
    # regex
    ("The answer is 42", None, {"mode": "regex", "pattern": r"\d+"}, 1.0),
    ("no digits here", None, {"mode": "regex", "pattern": r"\d+"}, 0.0),
    ("42", None, {"mode": "regex", "pattern": r"\d+", "match": "fullmatch"}, 1.0),
    ("42 apples", None, {"mode": "regex", "pattern": r"\d+", "match": "fullmatch"}, 0.0),
    ("Step 1\nStep 2", None, {"mode": "regex", "pattern": r"^Step 1.Step 2$"}, 0.0),
    ("Step 1\nStep 2", None, {"mode": "regex", "pattern": r"(?s)^Step 1.Step 2$"}, 1.0),
    ("ANSWER: x", None, {"mode": "regex", "pattern": r"(?i)^answer:"}, 1.0),
    # tags: each exactly once, in order, only whitespace around
    ("<think>reason</think><answer>42</answer>", None, TAGS, 1.0),
    ("\n<think>\nreason\n</think>\n\n<answer>\n42\n</answer>\n", None, TAGS, 1.0),
    # the shape with nothing in it is the degenerate answer a policy finds first
    ("<think></think><answer></answer>", None, TAGS, 0.0),
    ("<think>r</think><answer> \n </answer>", None, TAGS, 0.0),
    ("<think></think><answer>42</answer>", None, TAGS, 0.0),
    ("<think></think><answer></answer>", None, {**TAGS, "allow_empty": True}, 1.0),  # R1's regex
    ("<think >r</think ><answer>42</answer>", None, TAGS, 1.0),
    ("<think>a < b and <b>bold</b></think><answer>42</answer>", None, TAGS, 1.0),
    ("<think>reason</think>", None, TAGS, 0.0),
    ("<answer>42</answer><think>r</think>", None, TAGS, 0.0),
    ("<think>r<answer>42</answer></think>", None, TAGS, 0.0),
    ("<think>r<answer>42</answer>", None, TAGS, 0.0),
    ("<think>a</think><think>b</think><answer>c</answer>", None, TAGS, 0.0),
    ("<think>r</think><answer>1</answer><answer>2</answer>", None, TAGS, 0.0),
    ("Sure! <think>r</think><answer>42</answer>", None, TAGS, 0.0),
    ("<think>r</think> so <answer>42</answer>", None, TAGS, 0.0),
    ("<think>r</think><answer>42</answer> Hope this helps", None, TAGS, 0.0),
    ("Sure! <think>r</think><answer>42</answer>", None, {**TAGS, "allow_text_outside": True}, 1.0),
    ("<THINK>r</THINK><ANSWER>42</ANSWER>", None, TAGS, 0.0),
    ("<think id=1>r</think><answer>42</answer>", None, TAGS, 0.0),
    ("<answer>42</answer>", None, {**TAGS, "tags": ["answer"]}, 1.0),
    (
        "<reasoning>r</reasoning><answer>4</answer>",
        None,
        {**TAGS, "tags": ["reasoning", "answer"]},
        1.0,
    ),
    ("<think>r</think><answer>4</answer>", None, {**TAGS, "tags": ["reasoning", "answer"]}, 0.0),
    ("", None, TAGS, 0.0),
    # json: strict JSON, optionally from a single ```json fence
    ('{"a": 1}', None, JSON, 1.0),
    ("  [1, 2]\n", None, JSON, 1.0),
    ("42", None, JSON, 1.0),
    ("{'a': 1}", None, JSON, 0.0),
    ('{"a": NaN}', None, JSON, 0.0),
    ('{"a": 1, "a": 2}', None, JSON, 0.0),  # which "a"? readers disagree
    ('[{"b": {"c": 1, "c": 1}}]', None, JSON, 0.0),
    ('{"a": 1,}', None, JSON, 0.0),
    ('{"a": 1} trailing', None, JSON, 0.0),
    ("", None, JSON, 0.0),
    (FENCED, None, JSON, 1.0),
    (FENCED, None, {**JSON, "extract_fence": False}, 0.0),
    ("```JSON\n[1]\n```", None, JSON, 1.0),
    ("```json\n[1]\n```\n```json\n[2]\n```", None, JSON, 0.0),
    ('```json\n{"a": }\n```', None, JSON, 0.0),
    ('```python\n{"a": 1}\n```', None, JSON, 0.0),  # not a json fence: whole response
    ('```json\n{"a": 1}', None, JSON, 0.0),  # unclosed fence: whole response
    ("[" * 100_000 + "]" * 100_000, None, JSON, 0.0),  # too deep to parse is not JSON
    # json_schema: Draft 2020-12, schema from reference or params
    ('{"name": "Ada", "age": 36}', PERSON, SCHEMA, 1.0),
    ('{"name": "Ada", "age": "old", "age": 36}', PERSON, SCHEMA, 0.0),  # the last valid
    ('{"name": "Ada", "age": -1}', PERSON, SCHEMA, 0.0),
    ('{"name": 3}', PERSON, SCHEMA, 0.0),
    ('{"age": 3}', PERSON, SCHEMA, 0.0),
    ('{"name": "Ada", "email": "x"}', PERSON, SCHEMA, 0.0),
    ('["Ada"]', PERSON, SCHEMA, 0.0),
    ("not json", PERSON, SCHEMA, 0.0),
    (FENCED, PERSON, SCHEMA, 1.0),
    ('{"name": "Ada"}', None, {**SCHEMA, "schema": PERSON}, 1.0),
    ('{"name": "Ada"}', '{"type": "object", "required": ["name"]}', SCHEMA, 1.0),
    ('{"anything": []}', True, SCHEMA, 1.0),
    ("{}", False, SCHEMA, 0.0),
    ("[1]", {"prefixItems": [{"type": "integer"}], "items": False}, SCHEMA, 1.0),
    ("[1, 2]", {"prefixItems": [{"type": "integer"}], "items": False}, SCHEMA, 0.0),
    (
        '{"a": 1}',
        {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        SCHEMA,
        1.0,
    ),
]


@pytest.mark.parametrize(("response", "reference", "params", "expected"), CASES)
def test_format_cases(score, response, reference, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("format", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == expected, result.details
    assert result.verifier == "format@1"
    assert (result.details["problem"] is None) == (expected == 1.0)


@pytest.mark.parametrize(
    ("response", "reference", "params", "details"),
    [
        ("<think>r</think>", None, TAGS, {"problem": "missing <answer>"}),
        ("<think>r<answer>4</answer>", None, TAGS, {"problem": "missing </think>"}),
        ("<think>a</think><think>b</think>", None, TAGS, {"problem": "<think> appears 2 times"}),
        (
            "<think>r<answer>4</answer></think>",
            None,
            TAGS,
            {"problem": "expected </think> but found <answer> (nested or out of order)"},
        ),
        (
            "Hi <think>r</think><answer>4</answer>",
            None,
            TAGS,
            {"problem": "text outside the tags, before <think>"},
        ),
        (
            "<think>r</think>x<answer>4</answer>",
            None,
            TAGS,
            {"problem": "text outside the tags, before <answer>"},
        ),
        (
            "<think>r</think><answer>4</answer>x",
            None,
            TAGS,
            {"problem": "text outside the tags, before the end"},
        ),
        ("<think>r</think><answer> </answer>", None, TAGS, {"problem": "<answer> is empty"}),
        (FENCED, None, JSON, {"mode": "json", "source": "fence", "problem": None}),
        ("[1]", None, JSON, {"source": "response", "problem": None}),
        (
            '{"name": "Ada", "age": "old"}',
            PERSON,
            SCHEMA,
            {"problem": "does not match the schema", "path": "$.age"},
        ),
        (
            "x",
            None,
            {"mode": "regex", "pattern": "y"},
            {"problem": "pattern did not search the response"},
        ),
    ],
)
def test_format_details(score, response, reference, params, details) -> None:  # type: ignore[no-untyped-def]
    result = score("format", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert details.items() <= result.details.items()


def test_schema_error_message_is_carried(score) -> None:  # type: ignore[no-untyped-def]
    result = score("format", '{"name": "Ada", "age": "old"}', PERSON, mode="json_schema")
    assert "'old' is not of type 'integer'" in result.details["error"]


@pytest.mark.parametrize(
    ("reference", "params", "code", "field"),
    [
        (None, {}, "invalid_params", "params.mode"),
        (None, {"mode": "xml"}, "invalid_params", "params.mode"),
        (None, {"mode": "regex"}, "invalid_params", "params.pattern"),
        (None, {"mode": "regex", "pattern": "("}, "invalid_params", "params.pattern"),
        (None, {"mode": "regex", "pattern": "x", "match": "all"}, "invalid_params", "params.match"),
        (
            None,
            {"mode": "regex", "pattern": "x", "regex_timeout_s": 0},
            "invalid_params",
            "params.regex_timeout_s",
        ),
        (None, {"mode": "json", "pattern": "x"}, "invalid_params", "params.pattern"),
        (None, {"mode": "tags", "tags": []}, "invalid_params", "params.tags"),
        (None, {"mode": "tags", "tags": ["think", "think"]}, "invalid_params", "params.tags"),
        (None, {"mode": "tags", "tags": ["my tag"]}, "invalid_params", "params.tags"),
        (
            None,
            {"mode": "json", "allow_text_outside": True},
            "invalid_params",
            "params.allow_text_outside",
        ),
        (None, {"mode": "json", "schema": PERSON}, "invalid_params", "params.schema"),
        (None, {"mode": "tags", "extract_fence": False}, "invalid_params", "params.extract_fence"),
        (None, {"mode": "json", "strict": True}, "invalid_params", "params.strict"),
        (None, {"mode": "json_schema"}, "invalid_reference", "reference"),
        (5, {"mode": "json_schema"}, "invalid_reference", "reference"),
        ('{"type": "object"', {"mode": "json_schema"}, "invalid_reference", "reference"),
        ({"type": "nope"}, {"mode": "json_schema"}, "invalid_reference", "reference"),
        ({"minimum": "0"}, {"mode": "json_schema"}, "invalid_reference", "reference"),
        (None, {"mode": "json_schema", "schema": {"type": 5}}, "invalid_params", "params.schema"),
        (PERSON, {"mode": "json_schema", "schema": PERSON}, "invalid_params", "params.schema"),
        ({"$ref": "#/$defs/missing"}, {"mode": "json_schema"}, "invalid_reference", "reference"),
        (
            {"$ref": "https://example.com/s.json"},
            {"mode": "json_schema"},
            "invalid_reference",
            "reference",
        ),
    ],
)
def test_format_invalid(score, reference, params, code, field) -> None:  # type: ignore[no-untyped-def]
    result = score("format", '{"name": "Ada"}', reference, **params)
    assert result.status == Status.INVALID, result.details
    assert result.reward is None
    assert result.error.code == code
    assert field in result.error.message


def test_a_response_that_makes_the_regex_backtrack_does_not_match(score) -> None:  # type: ignore[no-untyped-def]
    """Neither a hung worker nor a ``timeout`` a trainer would mask: no match, flagged."""
    result = score("format", "a" * 60 + "b", mode="regex", pattern=r"(a|aa)+$", regex_timeout_s=0.2)
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert result.details["flags"] == ["pattern_timeout"]


def test_response_too_deep_to_validate_scores_zero(score) -> None:  # type: ignore[no-untyped-def]
    nested = {
        "$defs": {"a": {"type": "array", "items": {"$ref": "#/$defs/a"}}},
        "$ref": "#/$defs/a",
    }
    result = score("format", "[" * 900 + "]" * 900, nested, mode="json_schema")
    assert result.status == Status.OK
    assert result.reward == 0.0
    assert result.details["problem"] == "nests too deeply to validate"


def test_bad_schema_is_invalid_even_when_the_response_is_not_json(score) -> None:  # type: ignore[no-untyped-def]
    result = score("format", "not json", {"type": "nope"}, mode="json_schema")
    assert result.status == Status.INVALID


def test_schema_refs_never_fetch_urls_or_read_files(score, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A $ref to a URL or a file is unresolvable: nothing is fetched (the loopback server
    sees no request) and no file's content comes back in any message."""
    import http.server
    import threading

    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "integer", "token": "TOPSECRET-7731"}')
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"type": "integer", "token": "TOPSECRET-7731"}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        refs = [
            f"http://127.0.0.1:{server.server_port}/schema.json",
            f"file://{secret}",
            f"file://{secret}#/token",
        ]
        for ref in refs:
            result = score("format", '"abc"', {"$ref": ref}, mode="json_schema")
            assert result.status.value == "invalid", result
            assert "TOPSECRET" not in repr(result)
    finally:
        server.shutdown()
    assert hits == []
