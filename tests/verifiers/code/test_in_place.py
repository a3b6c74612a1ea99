"""Arguments changed in place cross back to the tests, as in Python: LeetCode's "do not
return anything, modify nums in-place" problems once scored 0 when solved right, since
the program changed its own copy of the list."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status
from referee.verifiers.code.boundary.tester import update_in_place
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

SORT_TEST = {"tests": ["l = [3, 1, 2]\nsort_in_place(l)\nassert l == [1, 2, 3]"]}
ROTATE = {
    "test": "def check(candidate):\n"
    "    m = [[1, 2], [3, 4]]\n    row = m[0]\n"
    "    assert candidate(m) is None\n"
    "    assert m == [[3, 1], [4, 2]]\n"
    "    assert row is m[0]  # the test's own rows, changed\n",
    "entry_point": "rotate",
}
REMOVE = {
    "tests": [
        "nums = [1, 1, 2]\nk = Solution().removeDuplicates(nums)\n"
        "assert k == 2 and nums[:k] == [1, 2]"
    ]
}
KEYWORD = {"tests": ["d = {'a': 1}\nbump(counts=d, key='b')\nassert d == {'a': 1, 'b': 1}"]}
SET_TEST = {"tests": ["s = {1}\nadd_two(s)\nassert s == {1, 2}"]}

CASES = [
    # (name, code, reference, reward)
    ("in-place sort", "def sort_in_place(lst):\n    lst.sort()", SORT_TEST, 1.0),
    ("a sorted copy", "def sort_in_place(lst):\n    return sorted(lst)", SORT_TEST, 0.0),
    ("a wrong sort", "def sort_in_place(lst):\n    lst.reverse()", SORT_TEST, 0.0),
    ("rebinding", "def sort_in_place(lst):\n    lst = sorted(lst)", SORT_TEST, 0.0),
    (
        "rotated matrix",
        "def rotate(m):\n    n = len(m)\n"
        "    for i in range(n):\n        for j in range(i + 1, n):\n"
        "            m[i][j], m[j][i] = m[j][i], m[i][j]\n"
        "    for row in m:\n        row.reverse()",
        ROTATE,
        1.0,
    ),
    (
        "a method, with a result",
        "class Solution:\n    def removeDuplicates(self, nums):\n"
        "        nums[:] = sorted(set(nums))\n        return len(nums)",
        REMOVE,
        1.0,
    ),
    ("a keyword argument", "def bump(counts, key):\n    counts[key] = 1", KEYWORD, 1.0),
    ("a set", "def add_two(s):\n    s.add(2)", SET_TEST, 1.0),
    (
        "the argument changed to match its result",  # the test's expected list is not sent
        "def sort_in_place(lst):\n    lst[:] = [9]\n    return lst",
        {"tests": ["expected = [1, 2, 3]\nassert sort_in_place([3, 1, 2]) == expected"]},
        0.0,
    ),
    (
        "forged replies naming what was never sent",  # the program answers the channel itself
        "import os, json\n"
        "r = os.fdopen(int(os.environ['REFEREE_CHANNEL_IN']))\n"
        "w = os.fdopen(int(os.environ['REFEREE_CHANNEL_OUT']), 'w')\n"
        "for line in r:\n"
        "    w.write(json.dumps({'ok': None, 'changed': [[7, []]],"
        " 'mutated': [[5, {'l': [1, 2, 3]}], ['expected', {'l': [1, 2, 3]}]]}) + '\\n')\n"
        "    w.flush()\n",
        SORT_TEST,
        0.0,
    ),
    (
        "an object put in the list",
        "class Box:\n    pass\ndef sort_in_place(lst):\n    lst[:] = [Box(), Box(), Box()]",
        SORT_TEST,
        0.0,
    ),
]


@pytest.mark.parametrize(("name", "code", "reference", "reward"), CASES, ids=[c[0] for c in CASES])
def test_in_place_changes_reach_the_test(
    score_many: ScoreMany, name: str, code: str, reference: Any, reward: float
) -> None:
    [result] = score_many([code_item(fenced(code), reference)])
    assert (result.status, result.reward) == (Status.OK, reward), result
    if reward:
        assert "mutated_arguments" in result.details["flags"]


JS_SORT = {
    "test": "const assert = require('node:assert');\n"
    "const a = [3, 1, 2];\nconst m = new Map([['x', [1]]]);\nconst row = m.get('x');\n"
    "assert.strictEqual(sortInPlace(a, m), undefined);\n"
    "assert.deepStrictEqual(a, [1, 2, 3]);\n"
    "assert.deepStrictEqual(m, new Map([['x', [1, 9]], ['y', new Set([2])]]));\n"
    "assert.ok(row === m.get('x'));\n"
}
JS_CASES = [
    (
        "in place",
        "function sortInPlace(a, m) { a.sort(); m.get('x').push(9); m.set('y', new Set([2])); }",
        1.0,
    ),
    ("a sorted copy", "function sortInPlace(a, m) { return [...a].sort(); }", 0.0),
    (
        "a __proto__ key",
        "function sortInPlace(a, m) { a.sort(); m.set('x', JSON.parse('{\"__proto__\": [1]}')); }",
        0.0,
    ),
]


@pytest.mark.parametrize(("name", "code", "reward"), JS_CASES, ids=[c[0] for c in JS_CASES])
def test_in_place_changes_reach_a_javascript_test(
    score_many: ScoreMany, name: str, code: str, reward: float
) -> None:
    item = code_item(fenced(code, "javascript"), JS_SORT, language="javascript")
    [result] = score_many([item])
    assert (result.status, result.reward) == (Status.OK, reward), result
    if reward:
        assert "mutated_arguments" in result.details["flags"]


@pytest.mark.parametrize(
    ("old", "new", "ok", "after"),
    [
        ([1, 2, 3], [4], True, [4]),
        ([1], [1, 2, 3], True, [1, 2, 3]),
        ({"a": 1, "b": 2}, {"b": 3, "c": 4}, True, {"b": 3, "c": 4}),
        ({1, 2}, {3}, True, {3}),
        ([[1], {"k": {2}}], [[5, 6], {"k": {7}}], True, [[5, 6], {"k": {7}}]),
        ([1, 2], (1, 2), False, [1, 2]),  # another type: malformed
        ((1, 2), (3,), False, (1, 2)),  # immutable: nothing to change
        ({"a": 1}, [("a", 1)], False, {"a": 1}),
    ],
)
def test_update_in_place(old: Any, new: Any, ok: bool, after: Any) -> None:
    assert update_in_place(old, new) is ok
    assert old == after


def test_inner_containers_keep_their_identity() -> None:
    matrix = [[1, 2], [3, 4]]
    row = matrix[1]
    update_in_place(matrix, [[1, 2], [7, 8, 9]])
    assert row is matrix[1] and row == [7, 8, 9]
