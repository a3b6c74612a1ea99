"""The boundary between a program and its tests: the value codecs (Python and JS), the
names a test takes from the program, and the verdict line."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from importlib import resources
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers.code.boundary import assembly, codec

plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
    | st.complex_numbers(allow_nan=False),
    lambda inner: (
        st.lists(inner)
        | st.tuples(inner, inner)
        | st.dictionaries(st.integers() | st.text(), inner)
        | st.frozensets(st.integers() | st.text())
    ),
    max_leaves=30,
)


@settings(max_examples=300)
@given(plain)
def test_plain_values_cross_unchanged(value: Any) -> None:
    wire = json.loads(codec.dumps(codec.encode(value)))
    back = codec.decode(wire)
    assert back == value
    assert type(back) is type(value)


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), -0.0, 2**20000, -(2**70)],
    ids=["nan", "inf", "-0.0", "2**20000", "-2**70"],
)
def test_edge_numbers_cross_exactly(value: Any) -> None:
    """Bit-exact floats, and ints past str()'s 4,300-digit limit."""
    back = codec.decode(json.loads(codec.dumps(codec.encode(value))))
    if isinstance(value, float):
        assert math.isnan(back) if math.isnan(value) else back.hex() == value.hex()
    else:
        assert back == value


class _Eq:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class _Int(int):
    pass


@pytest.mark.parametrize("value", [_Eq(), _Int(3), [1, _Eq()], {"k": _Int(1)}, print, object()])
def test_anything_not_plain_is_refused_never_converted(value: Any) -> None:
    with pytest.raises(codec.Unsupported):
        codec.encode(value)


def test_custom_equality_is_recognised() -> None:
    assert codec.has_custom_eq(_Eq())
    assert not codec.has_custom_eq(object())
    assert not codec.has_custom_eq(3)


def test_sizes_are_bounded() -> None:
    deep: list[Any] = []
    for _ in range(codec.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(codec.Unsupported, match="deeper"):
        codec.encode(deep)
    with pytest.raises(codec.Unsupported, match="items"):
        codec.encode(iter(range(codec.MAX_ITEMS + 10)))


def test_iterators_are_materialised() -> None:
    assert codec.decode(codec.encode(x * x for x in range(3))) == [0, 1, 4]


def test_handles_refer_to_objects_the_other_side_holds() -> None:
    obj = object()
    wire = codec.encode([1, obj], lambda v: 7 if v is obj else None)
    assert wire == {"l": [1, {"r": 7}]}
    assert codec.decode(wire, {7: "held"}.__getitem__) == [1, "held"]
    with pytest.raises(ValueError):
        codec.decode({"r": 7})  # no resolver: a handle is malformed


PROGRAM_NAMES = [
    (
        "def check(candidate):\n    assert candidate(1) == 2\n\ncheck(add_one)\n",
        ["add_one"],
    ),
    ("import math\nassert math.isclose(area(2), 12.56, rel_tol=1e-3)\n", ["area"]),
    ("for x in range(3):\n    assert f(x) == g(x)\n", ["f", "g"]),
    ("def helper(v):\n    return sorted(v)\nassert helper(solve([3, 1])) == [1, 3]\n", ["solve"]),
    ("assert Solution().two_sum([1, 2], 3) == [0, 1]\n", ["Solution"]),
    ("this is ( not python", []),
]


@pytest.mark.parametrize(("test", "names"), PROGRAM_NAMES)
def test_the_names_a_python_test_takes_from_the_program(test: str, names: list[str]) -> None:
    assert assembly.program_names(test) == names


def test_setup_names_are_the_tests_own() -> None:
    assert assembly.program_names("assert f(helper()) == 1", "def helper():\n    return 2") == ["f"]


JS_NAMES = [
    (
        "const assert = require('node:assert');\nfunction test() {\n"
        "  let candidate = add;\n  assert.deepEqual(candidate([1, 2], 'x'), true);\n}\ntest();\n",
        ["add"],
    ),
    ("// add(1)\nconst s = 'sub(2)';\nconsole.log(mul(3).length)", ["mul"]),
]


@pytest.mark.parametrize(("test", "names"), JS_NAMES)
def test_the_names_a_javascript_test_takes_from_the_program(test: str, names: list[str]) -> None:
    assert assembly.js_program_names(test) == names


VERDICTS = [
    ('noise\n@@referee-verdict@@ k1 {"passed": true, "flags": []}\n', True),
    ('@@referee-verdict@@ k1 {"passed": "yes"}\n', False),
    ("no verdict at all\n", None),
    ("@@referee-verdict@@ k1 {not json\n", None),
    # a line without the key (the program's, printed by the test) is no verdict
    ('@@referee-verdict@@ k1 {"passed": false}\n@@referee-verdict@@ {"passed": true}\n', False),
    ('@@referee-verdict@@ k2 {"passed": true}\n', None),
    ('@@referee-verdict@@ k1{"passed": true}\n', None),
    # the line saying the test started is no verdict; one after it is
    ('@@referee-verdict@@ k1 {"started": true}\n', None),
    ('@@referee-verdict@@ k1 {"started": true}\n@@referee-verdict@@ k1 {"passed": true}\n', True),
]


@pytest.mark.parametrize(("stdout", "passed"), VERDICTS)
def test_verdict_lines(stdout: str, passed: bool | None) -> None:
    verdict = assembly.read_verdict(stdout, "k1")
    assert (verdict.passed if verdict else None) == passed


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_codec_round_trips_and_refuses_objects() -> None:
    script = (
        f"const b = require({json.dumps(str(resources.files(assembly.__package__)))}"
        " + '/boundary.js');\n"
        "const values = [1, -0, NaN, 'x', [1, [2]], {a: 1}, new Map([[1, 2]]), new Set([3]),"
        " 10n, undefined, null, Infinity];\n"
        "const same = values.every((v) => { const back = b.decode(JSON.parse(JSON.stringify("
        "b.encode(v)))); return require('util').isDeepStrictEqual(back, v); });\n"
        "let refused = 0;\n"
        "for (const v of [new (class X {})(), () => 1, {get a() { return 1; }}]) {\n"
        "  try { b.encode(v); } catch (e) { if (e instanceof b.Unsupported) refused++; } }\n"
        "console.log(same, refused);\n"
    )
    done = subprocess.run(
        ["node", "-e", script], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.stdout.split() == ["true", "3"], done.stderr


class _Node:
    def __init__(self, val: Any, next: Any = None) -> None:
        self.val = val
        self.next = next


class _Theirs:
    """The receiving side's class of the same name: what a decoded node must be."""

    val: Any
    next: Any


def _nodes(cls: type) -> codec.Nodes:
    return codec.Nodes(frozenset({"_Node"}), {"_Node": cls}.get)


def test_nodes_cross_as_a_graph_built_from_the_receivers_class() -> None:
    shared = _Node(2)
    head = _Node(1, shared)
    cycle = _Node(3)
    cycle.next = cycle
    value = {"list": head, "again": shared, "cycle": cycle, "plain": [1, (2, 3)]}
    wire = json.loads(codec.dumps(codec.encode(value, nodes=_nodes(_Node))))
    back = codec.decode(wire, nodes=_nodes(_Theirs))
    assert type(back["list"]) is _Theirs and back["list"].val == 1
    assert back["list"].next is back["again"]  # shared stays shared
    assert back["cycle"].next is back["cycle"]
    assert back["plain"] == [1, (2, 3)]


def test_a_chain_a_hundred_thousand_long_needs_no_recursion() -> None:
    head = None
    for v in range(100_000):
        head = _Node(v, head)
    back = codec.decode(codec.encode(head, nodes=_nodes(_Node)), nodes=_nodes(_Node))
    count = 0
    while back is not None:
        back, count = back.next, count + 1
    assert count == 100_000


@pytest.mark.parametrize(
    "wire",
    [
        {"g": [{"n": 0}, [["Unknown", []]]]},  # a class the receiver has not
        {"g": [{"n": 1}, [["_Node", []]]]},  # no such node
        {"g": [{"n": 0}, [["_Node", [[1, 2]]]]]},  # an attribute that is no name
        {"g": [{"n": 0}]},
        {"n": 0},  # a node outside a graph
    ],
)
def test_malformed_graphs_are_refused(wire: Any) -> None:
    with pytest.raises(ValueError, match="malformed"):
        codec.decode(wire, nodes=_nodes(_Node))


def test_node_classes_without_instance_dicts_do_not_cross_by_value() -> None:
    class Slotted:
        __slots__ = ("val",)

    slotted = codec.Nodes(frozenset({"Slotted"}), {"Slotted": Slotted}.get)
    with pytest.raises(codec.Unsupported):
        codec.encode(Slotted(), nodes=slotted)
    with pytest.raises(ValueError, match="malformed"):
        codec.decode({"g": [{"n": 0}, [["Slotted", []]]]}, nodes=slotted)


def test_the_setup_classes_are_the_nodes() -> None:
    setup = "class ListNode:\n    pass\ndef f():\n    class Inner:\n        pass\nX = 1\n"
    assert assembly.node_classes(setup) == ["ListNode"]
    assert assembly.node_classes("class (") == []


def test_the_shipped_runtime_runs_from_bytecode_or_else_from_source() -> None:
    """Bytecode compiled once on the host where the sandbox's interpreter reads it; the
    source where it does not (another Python): the same functions either way."""
    shipped = assembly.program("def f():\n    pass\n", "").files[f"{assembly.RUNTIME}.py"]
    tag = repr(sys.implementation.cache_tag)
    assert tag in shipped
    for text in (shipped, shipped.replace(tag, repr("another-python"))):
        namespace: dict[str, Any] = {"__name__": assembly.RUNTIME}
        exec(text, namespace)
        assert callable(namespace["run"]) and callable(namespace["encode"])
