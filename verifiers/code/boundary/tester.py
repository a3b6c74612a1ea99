"""The tests' side of the boundary: runs the reference's test code (stdlib only).

Input on stdin: one JSON line ``{"names": [...], "setup": str, "key": str}``, then the
test code. Each
name in ``names`` (the ones the test uses but does not define, found by the host) becomes
a proxy: calling it, or reading an attribute of it, is a request to the program's sandbox
over the channel (``REFEREE_CHANNEL_OUT`` / ``REFEREE_CHANNEL_IN``), answered with a
plain value (`codec`). The test code then runs here, with the real builtins, the real
``assert`` and its expected values, none of which the program can reach.

A program's object that is not plain data arrives as a `ProgramObject`: it may be called
and its attributes read (``Solution().two_sum(...)``), but comparing, hashing, iterating
it or testing it for truth raises, so an always-equal object fails instead of passing.
When the program dies, every later request fails and the run fails whatever the test code
catches. The last line of stdout is the verdict: `VERDICT_MARK`, the spec's ``key`` (the
host's, per item: a line the program made the test print, however the test ends, never
carries it) and a JSON object ``{"passed", "message", "flags", "harness_error",
"called"}`` (``called``: whether the test asked the program anything).
"""

import builtins
import contextlib
import json
import os
import sys
import threading
import traceback
from typing import Any, NoReturn

from referee.verifiers.code.boundary.codec import (
    NO_NODES,
    Exchange,
    Nodes,
    Unsupported,
    build_nodes,
    decode,
    dumps,
    loads,
    set_state,
)

VERDICT_MARK = "@@referee-verdict@@ "
STARTED = {"started": True}
"""The line said (after the mark and key) as the test's own code starts: the tester
ends after it with a verdict, or the test's code ended it."""
MAX_MESSAGE_CHARS = 300
_SAFE_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type)
    and issubclass(value, Exception)
    and not issubclass(value, (SystemExit, KeyboardInterrupt, GeneratorExit))
)


class ProgramGone(Exception):
    """The program closed the channel: it exited, crashed or was killed."""


class HarnessError(Exception):
    """The test passes something the boundary cannot carry (the reference's problem)."""


class Link:
    """The channel to the program. Remembers the flags the run earned."""

    def __init__(self, reader: Any, writer: Any) -> None:
        self.reader = reader
        self.writer = writer
        self.gone = False
        self.called = False
        """Whether the test asked the program anything: a verdict reached without it
        is the test's alone, whatever the program is."""
        self.flags: set[str] = set()
        self.nodes = NO_NODES
        """The setup's classes, whose objects cross by value (set once setup ran)."""
        self.arrived: set[str] = set()
        """Flags for the program objects that came back: they explain a failed run (an
        always-equal object handed back to the program, or tested with ``is``), and are
        no attempt in a passing one (LeetCode's ``Solution()``)."""

    def request(self, message: dict[str, Any]) -> Any:
        reply = self.exchange(message)
        return self.answer(reply, self._built(reply, []))

    def call(
        self,
        message: dict[str, Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        sent: list[Any],
    ) -> Any:
        """A call's result, after the changes the program made to its arguments were made
        to the tests' own (Python's semantics: ``lst.sort()`` in the program sorts the list
        the test holds; a list of nodes relinked in place is relinked here). ``sent``: the
        nodes the message carries, by index; a node the program returns or links to that
        it was sent is the test's own object."""
        reply = self.exchange(message)
        built = self._built(reply, sent)
        for index, pairs in reply.get("changed", ()):
            if type(index) is not int or not 0 <= index < len(sent):
                raise ValueError("malformed reply")
            set_state(sent[index], pairs, built)
            self.flags.add("mutated_arguments")
        for where, value in reply.get("mutated", ()):
            if type(where) is int and 0 <= where < len(args):
                argument = args[where]
            elif type(where) is str and where in kwargs:
                argument = kwargs[where]
            else:
                raise ValueError("malformed reply")
            if not update_in_place(argument, decode(value, built=built)):
                raise ValueError("malformed reply")
            self.flags.add("mutated_arguments")
        return self.answer(reply, built)

    def _built(self, reply: dict[str, Any], sent: list[Any]) -> list[Any]:
        """The nodes a reply may name: those sent, then the new ones it describes."""
        built = list(sent)
        build_nodes(reply.get("graph", []), self.nodes, built)
        return built

    def exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        self.called = True
        if self.gone:
            raise ProgramGone("the program is no longer running")
        try:
            self.writer.write(dumps(message))
            self.writer.flush()
            line = self.reader.readline()
        except (BrokenPipeError, ConnectionError, OSError):
            line = ""
        if not line:
            self.gone = True
            self.flags.add("early_exit")
            raise ProgramGone("the program exited before the tests finished")
        reply: dict[str, Any] = loads(line)
        return reply

    def answer(self, reply: dict[str, Any], built: list[Any]) -> Any:
        if "ok" in reply:
            return decode(reply["ok"], built=built)
        if "ref" in reply:
            label, custom_eq = str(reply.get("type", "?")), bool(reply.get("custom_eq"))
            self.arrived |= {"custom_type", "custom_eq"} if custom_eq else {"custom_type"}
            return ProgramObject(self, int(reply["ref"]), label, custom_eq)
        if "missing" in reply:
            raise NameError(f"the program defines no {reply['missing']!r}")
        name, message = reply["raise"]
        raise _exception(str(name), str(message))


_MUTABLE = (list, dict, set)


def update_in_place(old: Any, new: Any) -> bool:
    """Make ``old`` (a list, dict or set) hold what ``new`` holds, keeping the identity of
    ``old`` and of the containers inside it where their type is unchanged (a test may
    hold a row of a matrix). False when the two are not containers of one type."""
    if type(old) is not type(new) or type(old) not in _MUTABLE:
        return False
    if type(old) is set:
        old.clear()
        old.update(new)
    elif type(old) is list:
        for index in range(min(len(old), len(new))):
            if not update_in_place(old[index], new[index]):
                old[index] = new[index]
        del old[len(new) :]
        old.extend(new[len(old) :])
    else:
        for key in [k for k in old if k not in new]:
            del old[key]
        for key, value in new.items():
            if key not in old or not update_in_place(old[key], value):
                old[key] = value
    return True


def _exception(name: str, message: str) -> Exception:
    if name in _SAFE_EXCEPTIONS:
        kind = getattr(builtins, name)
        try:
            return kind(message)  # type: ignore[no-any-return]
        except Exception:  # noqa: BLE001 - some take other arguments
            pass
    return RuntimeError(f"the program raised {name}: {message}")


def _handle(value: Any) -> int | None:
    """A program object goes back to the program as its handle."""
    return value._target if isinstance(value, ProgramObject) else None


def _plain(out: Exchange, values: list[Any]) -> list[Any]:
    try:
        return out.attempt(values)
    except Unsupported as exc:
        raise HarnessError(
            f"the test passes a {exc} to the program; only plain values cross "
            "(None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, "
            "and objects of the classes the reference's setup defines)"
        ) from None


class _Remote:
    """Something of the program's: a top-level name or a held object."""

    def __init__(self, link: Link, target: Any, label: str) -> None:
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_label", label)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = Exchange(self._link.nodes, refer=_handle)
        plain_args = _plain(out, list(args))
        values = _plain(out, list(kwargs.values()))
        plain_kwargs = [[k, v] for k, v in zip(kwargs, values, strict=True)]
        request = {"op": "call", "target": self._target, "args": plain_args}
        request |= {"kwargs": plain_kwargs, **({"graph": out.graph} if out.graph else {})}
        return self._link.call(request, args, kwargs, out.objects)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self._link.request({"op": "getattr", "target": self._target, "attr": attr})

    def __repr__(self) -> str:
        return f"<program {self._label}>"


class ProgramObject(_Remote):
    """An object of the program that is not plain data: usable, never comparable. The
    run is flagged ``custom_type`` (and ``custom_eq`` when its class defines equality)
    when the test tries to compare it, or when it fails after one arrived
    (`Link.arrived`): LeetCode's ``Solution()`` is such an object on every item, and
    flags explain a 0."""

    def __init__(self, link: Link, target: int, label: str, custom_eq: bool) -> None:
        super().__init__(link, target, label)
        object.__setattr__(self, "_custom_eq", custom_eq)

    def _refuse(self, *args: Any) -> NoReturn:
        self._link.flags.add("custom_type")
        if self._custom_eq:
            self._link.flags.add("custom_eq")
        raise TypeError(
            f"the program returned a {self._label}, not plain data: it cannot be compared"
        )

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = __bool__ = __len__ = __iter__ = __contains__ = _refuse
    __int__ = __float__ = __index__ = __str__ = __format__ = _refuse
    __add__ = __sub__ = __mul__ = __getitem__ = _refuse


def run(spec: dict[str, Any], test: str, link: Link) -> dict[str, Any]:
    """Run the test with the program's names bound to proxies; the verdict."""
    scope: dict[str, Any] = {"__name__": "__referee_test__", "__builtins__": builtins}
    for name in spec["names"]:
        scope[name] = _Remote(link, name, name)
    verdict: dict[str, Any] = {"passed": False, "message": "", "harness_error": ""}
    try:
        setup = compile(spec.get("setup") or "", "<setup>", "exec")
        code = compile(test, "<test>", "exec")
    except (SyntaxError, ValueError) as exc:
        verdict["harness_error"] = f"the test does not compile: {exc}"
        verdict["flags"] = []
        return verdict
    in_threads = _thread_failures()
    # the test's own code starts: a process ending after this with no verdict (the
    # test's os._exit) ended in it
    sys.stdout.write(f"\n{VERDICT_MARK}{spec.get('key', '')} {json.dumps(STARTED)}\n")
    sys.stdout.flush()
    try:
        exec(setup, scope)
        link.nodes = Nodes(frozenset(spec.get("nodes", ())), scope.get)
        exec(code, scope)
        verdict["passed"] = not link.gone
    except HarnessError as exc:
        verdict["harness_error"] = str(exc)
    except SystemExit as exc:  # a test may end itself: sys.exit(0) passes, others fail
        verdict["passed"] = exc.code in (0, None) and not link.gone
        verdict["message"] = "" if verdict["passed"] else f"the test exited with {exc.code!r}"
    except AssertionError as exc:
        verdict["message"] = f"assertion failed{': ' + str(exc) if str(exc) else ''}"
    except Exception as exc:  # noqa: BLE001 - any failure of the test is the verdict
        verdict["message"] = f"{type(exc).__name__}: {exc}"
        verdict["trace"] = traceback.format_exc(limit=-3)
    if verdict["passed"] and in_threads:
        verdict["passed"] = False
        verdict["message"] = f"a thread of the test raised {in_threads[0]}"
    if link.gone:
        verdict["passed"] = False
        verdict["message"] = verdict["message"] or "the program exited before the tests finished"
    verdict["message"] = verdict["message"][:MAX_MESSAGE_CHARS]
    if not verdict["passed"]:
        link.flags |= link.arrived
    verdict["flags"] = sorted(link.flags)
    verdict["called"] = link.called
    return verdict


def _thread_failures() -> list[str]:
    """Where the failures of threads the test starts are recorded: by default they are
    only printed, and the test would pass."""
    failures: list[str] = []

    def record(args: threading.ExceptHookArgs) -> None:
        failures.append(f"{args.exc_type.__name__}: {args.exc_value}")

    threading.excepthook = record
    return failures


def main() -> None:
    """Read the spec and test from stdin, run, print the verdict as the last line."""
    spec = json.loads(sys.stdin.readline())
    test = sys.stdin.read()
    reader = os.fdopen(int(os.environ["REFEREE_CHANNEL_IN"]), "r", encoding="utf-8")
    writer = os.fdopen(int(os.environ["REFEREE_CHANNEL_OUT"]), "w", encoding="utf-8")
    verdict = run(spec, test, Link(reader, writer))
    sys.stdout.flush()
    sys.stdout.write(f"\n{VERDICT_MARK}{spec['key']} {json.dumps(verdict)}\n")
    sys.stdout.flush()
    with contextlib.suppress(OSError):
        writer.close()  # the program may be gone: a broken pipe here changes nothing
