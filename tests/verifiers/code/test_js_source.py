"""ES module answers read as CommonJS (`verifiers.code.js_source`): a right JavaScript
answer that wrote `export function add` was a syntax error under `require` and scored 0."""

from __future__ import annotations

import pytest

from referee.verifiers import Item, Registry, Status, score_items
from referee.verifiers.code.js_source import commonjs


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("export function add(x, y) { return x + y; }", "function add(x, y) { return x + y; }"),
        ("export default function add(x) {}", "function add(x) {}"),
        ("export const add = (x, y) => x + y;", "const add = (x, y) => x + y;"),
        ("export async function f() {}", "async function f() {}"),
        ("export class A {}", "class A {}"),
        ("function f() {}\nexport { f };\nexport default f;", "function f() {}\n\n"),
        ("import fs from 'fs';", "const fs = require('fs');"),
        (
            'import { readFileSync as r, x } from "fs";',
            'const { readFileSync: r, x } = require("fs");',
        ),
        ("import * as path from 'path';", "const path = require('path');"),
        ("import 'x';", "require('x');"),
        # in literals and comments, nothing changes
        ("const s = 'export function x';", "const s = 'export function x';"),
        ("// export default y;", "// export default y;"),
        ("const t = `\nexport default z;\n`;", "const t = `\nexport default z;\n`;"),
    ],
)
def test_commonjs(code: str, expected: str) -> None:
    assert commonjs(code) == expected


TEST = (
    "const assert = require('node:assert');\n\nfunction test() {\n  let candidate = add;\n"
    "  assert.deepEqual(candidate(0, 1), 1);\n  assert.deepEqual(candidate(5, 7), 12);\n}\n\n"
    "test();\n"
)
ANSWERS = {
    "export": "export function add(x, y) { return x + y; }",
    "export default": "export default function add(x, y) { return x + y; }",
    "an import": "import assert from 'assert';\nexport const add = (x, y) => x + y;",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_es_module_answers_pass_linked_tests(registry: Registry, name: str) -> None:
    code = ANSWERS[name]
    params = {"language": "javascript"}
    passed, failed = score_items(
        [
            Item(
                verifier="code",
                response=f"```js\n{c}\n```",
                reference={"test": TEST},
                params=params,
            )
            for c in (code, code.replace("x + y", "x - y"))
        ],
        registry,
    )
    assert (passed.status, passed.reward) == (Status.OK, 1.0), passed.details
    assert (failed.status, failed.reward) == (Status.OK, 0.0), failed.details


@pytest.mark.slow
def test_an_es_module_answer_runs_on_stdin(registry: Registry) -> None:
    code = (
        "import fs from 'fs';\nexport function main() {\n"
        "  const [a, b] = fs.readFileSync(0, 'utf8').trim().split(' ').map(Number);\n"
        "  console.log(a + b);\n}\nmain();"
    )
    reference = {"inputs": ["2 3\n"], "outputs": ["5\n"]}
    item = Item(verifier="code", response=f"```js\n{code}\n```", reference=reference)
    [result] = score_items([item], registry)
    assert (result.status, result.reward) == (Status.OK, 1.0), result.details
