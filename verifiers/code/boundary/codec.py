"""Plain values across the boundary between a program and its tests (stdlib only).

The program and the tests run in two separate sandboxes; what crosses between them is
JSON text made from *plain* values only, so the tests never hold an object the program
made and can never call its ``__eq__``, ``__bool__``, ``__len__`` or any other method:

- ``None``, ``bool``, ``int``, ``str``: JSON's own null, true/false, integers (past 2**64
  ``{"i": hex}``), strings;
- ``float`` (nan and infinities included, bit-exact): ``{"f": hex}``; ``complex``:
  ``{"c": [hex, hex]}``; ``bytes``: ``{"b": latin-1 text}``;
- ``list`` ``{"l": [...]}``, ``tuple`` ``{"t": [...]}``, ``set`` ``{"s": [...]}``,
  ``frozenset`` ``{"z": [...]}``, ``dict`` ``{"d": [[k, v], ...]}`` (keys of any plain type);
- an iterator or generator, materialised: ``{"l": [...]}`` (at most `MAX_ITEMS` items);
- objects of the classes the reference's ``setup`` defines (LeetCode's ``ListNode`` and
  ``TreeNode``), given as `Nodes`: their instance attributes, as a graph (cycles, shared
  nodes and lists a million long included): ``{"g": [value, [[class name, [[attribute,
  value], ...]], ...]]}``, each node inside written ``{"n": index}``. The receiving side
  builds them from *its own* class of that name (`Nodes.classes`): the tests get the
  reference's class back, never one of the program's, whatever it sent.

Types are checked exactly (``type(v) is int``): a subclass of a plain type, a class
instance, a function or a module is *unsupported* (`Unsupported`), never converted.
`MAX_DEPTH` and `MAX_ITEMS` bound what one value may hold.

This file is shipped as source into both sandboxes, so it imports nothing but the
standard library and keeps to the Python the sandbox runs.
"""

import json
from collections.abc import Callable, Sequence
from typing import Any

MAX_DEPTH = 64
MAX_ITEMS = 1_000_000


class Unsupported(Exception):
    """A value that is not plain data; ``args[0]`` names its type."""


_LEAVES = (type(None), bool, int, str)
_SMALL_INT = 1 << 64
_CONTAINERS: dict[type, str] = {list: "l", tuple: "t", set: "s", frozenset: "z"}
_BUILDERS = {"l": list, "t": tuple, "s": set, "z": frozenset}
_UNORDERED = frozenset("sz")


class Nodes:
    """The classes whose objects cross by value (the reference's ``setup`` defines them),
    by name; ``classes`` looks a name up on this side (None: no such class here)."""

    def __init__(self, names: frozenset[str], classes: Callable[[str], Any]) -> None:
        self.names = names
        self.classes = classes


NO_NODES = Nodes(frozenset(), lambda name: None)


class _Budget:
    def __init__(self, nodes: Nodes = NO_NODES) -> None:
        self.left = MAX_ITEMS
        self.nodes = nodes
        self.index: dict[int, int] = {}
        self.queue: list[Any] = []

    def take(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise Unsupported(f"a value with more than {MAX_ITEMS} items")

    def node(self, value: Any) -> int:
        """The index of ``value`` in the graph, added (for `encode` to write) if new."""
        found = self.index.get(id(value))
        if found is None:
            self.take(1)
            found = self.index[id(value)] = len(self.queue)
            self.queue.append(value)
        return found


def encode(
    value: Any, refer: Callable[[Any], int | None] | None = None, nodes: Nodes = NO_NODES
) -> Any:
    """The JSON-ready form of ``value``; raises `Unsupported` for anything not plain.
    ``refer`` may name a non-plain value by a handle the other side holds (``{"r": n}``):
    the tests send the program's own objects back to it that way. Objects of ``nodes``'
    classes are written as a graph of their attributes (``{"g": [value, graph]}``)."""
    exchange = Exchange(nodes, refer=refer)
    [root] = exchange.attempt([value])
    return {"g": [root, exchange.graph]} if exchange.graph else root


class Exchange:
    """The node objects one call shares, by index: first the ``known`` ones (what the tests
    sent, as this side rebuilt them), then new ones in the order values reach them. Values
    written through it name a node ``{"n": index}``; `graph` holds the new nodes' classes
    and attributes, written as they are met (no recursion along a chain)."""

    def __init__(
        self,
        nodes: Nodes,
        known: Sequence[Any] = (),
        refer: Callable[[Any], int | None] | None = None,
    ) -> None:
        self._budget = _Budget(nodes)
        for node in known:
            self._budget.node(node)
        self._refer = refer
        self.known = len(known)
        self.graph: list[Any] = []

    @property
    def objects(self) -> list[Any]:
        """Every node, by index."""
        return self._budget.queue

    def attempt(self, values: Sequence[Any]) -> list[Any]:
        """``values`` written, and every new node they reach; on `Unsupported` nothing of
        this attempt is kept (and it is raised)."""
        written: list[Any] = self._atomically(lambda: [self._value(v) for v in values])
        return written

    def state(self, index: int) -> list[Any]:
        """Node ``index``'s attributes written (``[[name, value], ...]``), atomically."""
        pairs: list[Any] = self._atomically(lambda: self._pairs(self._budget.queue[index]))
        return pairs

    def _value(self, value: Any) -> Any:
        return _encode(value, 0, self._budget, self._refer)

    def _pairs(self, node: Any) -> list[Any]:
        attributes = _attributes(node)
        self._budget.take(len(attributes))
        return [[k, _encode(v, 1, self._budget, self._refer)] for k, v in attributes.items()]

    def _atomically(self, write: Callable[[], Any]) -> Any:
        queue, budget = self._budget.queue, self._budget
        mark = (len(queue), len(self.graph), budget.left)
        try:
            written = write()
            while self.known + len(self.graph) < len(queue):
                node = queue[self.known + len(self.graph)]
                self.graph.append([type(node).__name__, self._pairs(node)])
        except Unsupported:
            for node in queue[mark[0] :]:
                del budget.index[id(node)]
            del queue[mark[0] :]
            del self.graph[mark[1] :]
            budget.left = mark[2]
            raise
        return written


def _attributes(node: Any) -> dict[str, Any]:
    try:
        attributes = vars(node)
    except TypeError:  # __slots__: no instance dict
        raise Unsupported(_type_name(node)) from None
    if type(attributes) is not dict or not all(type(k) is str for k in attributes):
        raise Unsupported(_type_name(node))
    return attributes


def _encode(value: Any, depth: int, budget: _Budget, refer: Any = None) -> Any:
    if depth > MAX_DEPTH:
        raise Unsupported(f"a value nested deeper than {MAX_DEPTH}")
    kind = type(value)
    if kind is int and not -_SMALL_INT < value < _SMALL_INT:
        return {"i": hex(value)}  # no decimal digits limit for hex (int_max_str_digits)
    if kind in _LEAVES:
        return value
    if kind is float:
        return {"f": value.hex()}
    if kind is complex:
        return {"c": [value.real.hex(), value.imag.hex()]}
    if kind is bytes:
        return {"b": value.decode("latin-1")}
    tag = _CONTAINERS.get(kind)
    if tag is not None:
        budget.take(len(value))
        members = [_encode(v, depth + 1, budget, refer) for v in value]
        if tag in _UNORDERED:  # one text per set, whatever its iteration order
            members.sort(key=lambda member: json.dumps(member, sort_keys=True))
        return {tag: members}
    if kind is dict:
        budget.take(len(value))
        pairs = [
            [_encode(k, depth + 1, budget, refer), _encode(v, depth + 1, budget, refer)]
            for k, v in value.items()
        ]
        return {"d": pairs}
    if kind.__name__ in budget.nodes.names and not isinstance(value, type):
        return {"n": budget.node(value)}
    if _is_iterator(value):
        items: list[Any] = []
        for item in value:
            budget.take(1)
            items.append(_encode(item, depth + 1, budget, refer))
        return {"l": items}
    handle = refer(value) if refer is not None else None
    if handle is not None:
        return {"r": handle}
    raise Unsupported(_type_name(value))


def _is_iterator(value: Any) -> bool:
    kind = type(value)
    return kind.__module__ == "builtins" and hasattr(kind, "__next__")


def _type_name(value: Any) -> str:
    kind = type(value)
    module = getattr(kind, "__module__", "?")
    name = getattr(kind, "__qualname__", "?")
    return str(name) if module == "builtins" else f"{module}.{name}"


def has_custom_eq(value: Any) -> bool:
    """Whether ``value``'s type defines its own ``__eq__`` (a classic always-equal hack)."""
    kind = type(value)
    return any("__eq__" in vars(base) for base in kind.__mro__ if base.__module__ != "builtins")


def decode(
    data: Any,
    resolve: Callable[[int], Any] | None = None,
    nodes: Nodes = NO_NODES,
    built: list[Any] | None = None,
) -> Any:
    """The plain value for the JSON-ready ``data`` (the inverse of `encode`); ``resolve``
    turns a handle ``{"r": n}`` back into the object it names (else: malformed); a node
    ``{"n": i}`` is ``built[i]`` (see `build_nodes`), a whole graph is built from
    ``nodes``' classes (a name it has no class for: malformed)."""
    if type(data) is dict and len(data) == 1 and type(data.get("g")) is list:
        body = data["g"]
        if len(body) != 2:
            raise ValueError("malformed value")
        graph: list[Any] = []
        build_nodes(body[1], nodes, graph, resolve)
        return _decode(body[0], resolve, graph)
    return _decode(data, resolve, built)


def build_nodes(
    graph: Any, nodes: Nodes, built: list[Any], resolve: Callable[[int], Any] | None = None
) -> None:
    """Append to ``built`` the objects ``graph`` (``[[class name, attributes], ...]``)
    describes, made from ``nodes``' classes, then give them their attributes (which may
    name any node of ``built``)."""
    if type(graph) is not list:
        raise ValueError("malformed value")
    start = len(built)
    built.extend(_new_node(entry, nodes) for entry in graph)
    for node, (_, pairs) in zip(built[start:], graph, strict=True):
        set_state(node, pairs, built, resolve)


def set_state(
    node: Any, pairs: Any, built: list[Any], resolve: Callable[[int], Any] | None = None
) -> None:
    """Make ``node``'s attributes exactly ``pairs`` (``[[name, value], ...]``)."""
    if type(pairs) is not list:
        raise ValueError("malformed value")
    state = {}
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
            raise ValueError("malformed value")
        state[pair[0]] = _decode(pair[1], resolve, built)
    node.__dict__.clear()
    node.__dict__.update(state)


def _new_node(entry: Any, nodes: Nodes) -> Any:
    if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not str:
        raise ValueError("malformed value")
    found = nodes.classes(entry[0]) if entry[0] in nodes.names else None
    if not isinstance(found, type) or type(entry[1]) is not list:
        raise ValueError("malformed value")
    cls: Any = found
    try:
        node = cls.__new__(cls)
        node.__dict__  # noqa: B018 - a class without instance dicts cannot take the state
    except Exception:  # noqa: BLE001 - a class's own __new__ may raise anything
        raise ValueError("malformed value") from None
    return node


def _decode(data: Any, resolve: Any, built: list[Any] | None) -> Any:
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is not dict or len(data) != 1:
        raise ValueError("malformed value")
    ((tag, body),) = data.items()
    if tag == "n" and built is not None and type(body) is int and 0 <= body < len(built):
        return built[body]
    if tag == "r" and resolve is not None and type(body) is int:
        return resolve(body)
    if tag == "i":
        return int(body, 16)
    if tag == "f":
        return float.fromhex(body)
    if tag == "c":
        return complex(float.fromhex(body[0]), float.fromhex(body[1]))
    if tag == "b":
        return body.encode("latin-1")
    if tag == "d":
        return {_decode(k, resolve, built): _decode(v, resolve, built) for k, v in body}
    builder = _BUILDERS.get(tag)
    if builder is None:
        raise ValueError("malformed value")
    return builder(_decode(v, resolve, built) for v in body)


def dumps(message: Any) -> str:
    """One message as one line of JSON text."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True) + "\n"


def loads(line: str | bytes) -> Any:
    """The message on one line."""
    return json.loads(line)
