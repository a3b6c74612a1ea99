"""The program's side of the boundary: appended to the candidate's code (stdlib only).

After the candidate's module ran, `serve` answers the tests' requests on the channel the
sandbox gives (``REFEREE_CHANNEL_IN`` / ``REFEREE_CHANNEL_OUT`` name the fds): call a
top-level name or a held object, or read an attribute. Results go back as plain values
(`codec`); anything else (a class instance, a subclass of a plain type, a bound method)
stays here and the tests get a handle to it, which they can call or read attributes of
but never compare, hash, iterate or test for truth. An exception raised by the program
goes back by name and message. Exiting (``sys.exit``, ``os._exit``) ends the channel, and
the tests fail.

Nothing here is trusted by the host: the program may replace or break all of it. It
cannot learn anything it could use, because the expected values never come here.
"""

import importlib
import os
import sys
import traceback
from typing import Any

from referee.verifiers.code.boundary.codec import (
    Exchange,
    Nodes,
    Unsupported,
    build_nodes,
    decode,
    dumps,
    has_custom_eq,
    loads,
)

MAX_MESSAGE_CHARS = 300


class _Server:
    def __init__(self, namespace: dict[str, Any], nodes: Nodes, reader: Any, writer: Any) -> None:
        self.namespace = namespace
        self.nodes = nodes
        self.reader = reader
        self.writer = writer
        self.objects: dict[int, Any] = {}

    def run(self) -> None:
        for line in self.reader:
            self.writer.write(dumps(self.answer(loads(line))))
            self.writer.flush()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        built: list[Any] = []
        try:
            target = self.target(request["target"])
            if request["op"] == "getattr":
                out = Exchange(self.nodes)
                return _with(self.reply(getattr(target, request["attr"]), out), out.graph)
            resolve = self.objects.__getitem__
            build_nodes(request.get("graph", []), self.nodes, built, resolve)
            args = [decode(a, resolve, built=built) for a in request["args"]]
            kwargs = {k: decode(v, resolve, built=built) for k, v in request["kwargs"]}
            value = target(*args, **kwargs)
        except _Missing as missing:
            return {"missing": str(missing)}
        except Exception as exc:  # noqa: BLE001 - the program's own exception goes back
            return {"raise": [type(exc).__name__, _message(exc)]}
        out = Exchange(self.nodes, built)
        message = self.reply(value, out)
        mutated = _mutated(request, args, kwargs, out)
        changed = _changed(request.get("graph", []), out)
        return _with(message, out.graph, mutated=mutated, changed=changed)

    def target(self, ref: Any) -> Any:
        if isinstance(ref, int):
            return self.objects[ref]
        if ref not in self.namespace:
            raise _Missing(ref)
        return self.namespace[ref]

    def reply(self, value: Any, out: Exchange) -> dict[str, Any]:
        try:
            [plain] = out.attempt([value])
            return {"ok": plain}
        except Unsupported as unsupported:
            handle = len(self.objects) + 1
            self.objects[handle] = value
            custom_eq = has_custom_eq(value)
            return {"ref": handle, "type": str(unsupported), "custom_eq": custom_eq}


class _Missing(Exception):
    pass


def _with(message: dict[str, Any], graph: list[Any], **extra: list[Any]) -> dict[str, Any]:
    """``message`` with the new nodes it names and what the call changed, when any."""
    return {**message, **{k: v for k, v in {"graph": graph, **extra}.items() if v}}


def _mutated(
    request: dict[str, Any], args: list[Any], kwargs: dict[str, Any], out: Exchange
) -> list[Any]:
    """``[[position or keyword, new value], ...]`` for the list, dict and set arguments
    the call changed, as a Python caller would see them changed (an in-place sort, a
    rotated matrix). One that now holds something not plain is left out: the tests keep
    their own copy."""
    sent = [*enumerate(request["args"]), *request["kwargs"]]
    given = [*enumerate(args), *kwargs.items()]
    changed = []
    for (where, before), (_, value) in zip(sent, given, strict=True):
        if type(value) not in (list, dict, set):
            continue
        try:
            [after] = out.attempt([value])
        except Unsupported:
            continue
        if after != before:
            changed.append([where, after])
    return changed


def _changed(graph: list[Any], out: Exchange) -> list[Any]:
    """``[[index, attributes], ...]`` for the nodes the tests sent whose attributes the
    call changed (a list reordered in place, a tree flattened): the tests' own nodes
    are changed to match. One that now holds something not plain is left as it was."""
    changed = []
    for index, (_, before) in enumerate(graph):
        try:
            after = out.state(index)
        except Unsupported:
            continue
        if after != before:
            changed.append([index, after])
    return changed


def _message(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ is the program's problem
        text = "<unprintable>"
    return text[:MAX_MESSAGE_CHARS]


def run(module: str, nodes: list[str] | None = None) -> None:
    """Import the candidate's ``module`` (its top level runs as an imported module, as in
    the reference harnesses: an ``if __name__ == "__main__"`` block does not), then serve
    its names; objects of the classes named in ``nodes`` cross by value (`codec.Nodes`).
    A module that fails to import exits with status 1 and its traceback."""
    try:
        namespace = vars(importlib.import_module(module))
    except BaseException as exc:
        if isinstance(exc, SystemExit):
            raise
        traceback.print_exc()
        sys.exit(1)
    serve(namespace, nodes or [])


def serve(namespace: dict[str, Any], nodes: list[str]) -> None:
    """Answer requests until the tests close the channel."""
    sys.stdout.flush()
    reader = os.fdopen(int(os.environ["REFEREE_CHANNEL_IN"]), "r", encoding="utf-8")
    writer = os.fdopen(int(os.environ["REFEREE_CHANNEL_OUT"]), "w", encoding="utf-8")
    try:
        crossing = Nodes(frozenset(nodes), namespace.get)
        _Server(namespace, crossing, reader, writer).run()
    except BrokenPipeError:
        pass
    except Exception:  # noqa: BLE001 - a broken channel ends the run; say why on stderr
        traceback.print_exc()
