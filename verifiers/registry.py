"""Find verifiers by name: the built-ins plus third-party ones from entry points.

Third-party packages declare verifiers in the ``verifiers`` entry-point group.
An entry point may name a verifier instance, a verifier class (instantiated with no
arguments) or a zero-argument function returning a list of verifiers. A plugin that
fails to load is recorded in `Registry.load_errors` and skipped: one broken plugin must
not take the service down.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from referee.verifiers.base import Verifier

ENTRY_POINT_GROUP = "referee.verifiers"

log = logging.getLogger(__name__)


class UnknownVerifier(LookupError):
    """No registered verifier matches the requested ``name`` or ``name@version``."""


class Registry:
    """Verifiers by name and version. Not thread-safe for writes; fill it, then read it."""

    def __init__(self) -> None:
        self._by_name: dict[str, dict[int, Verifier]] = {}
        self._internal: set[str] = set()
        self.load_errors: dict[str, str] = {}

    def register(self, verifier: Verifier) -> None:
        """Add ``verifier``; a second registration of the same name@version replaces the first.

        Verifiers that nest others (composite, calibration) expose ``bind_registry`` and
        are given this registry to resolve their sub-verifiers from.
        """
        if not isinstance(verifier, Verifier):
            raise TypeError(f"{verifier!r} does not implement the Verifier protocol")
        bind = getattr(verifier, "bind_registry", None)
        if callable(bind):
            bind(self)
        self._by_name.setdefault(verifier.name, {})[verifier.version] = verifier
        if getattr(verifier, "internal", False):
            self._internal.add(verifier.name)

    def get(self, ref: str, *, internal: bool = False) -> Verifier:
        """Resolve ``name`` (latest version), ``name@version`` or the full
        ``name@version+build`` a result reports (``reasoning_gym@1+reasoning-gym.0.1.25``:
        that build only). Internal verifiers (a true ``internal`` attribute: what the
        service itself submits, such as raw sandbox runs) resolve only with
        ``internal=True``; to anyone else they do not exist."""
        name, _, version = ref.partition("@")
        versions = self._by_name.get(name)
        if name in self._internal and not internal:
            versions = None
        if not versions:
            raise UnknownVerifier(f"unknown verifier {name!r}; see GET /v1/verifiers")
        if not version:
            return versions[max(versions)]
        number, plus, _ = version.partition("+")
        found = versions.get(int(number)) if number.isascii() and number.isdigit() else None
        # "1+build-metadata" (a result's ``verifier``, echoed back) names exactly that
        # build: another one (a different package under the verifier) is not it.
        if found is None or (plus and ref_of(found) != f"{name}@{version}"):
            known = ", ".join(ref_of(v) for _, v in sorted(versions.items()))
            raise UnknownVerifier(f"unknown version {ref!r}; available: {known}")
        return found

    def all(self) -> list[Verifier]:
        """Every registered public verifier, sorted by name then version."""
        return [
            self._by_name[name][v]
            for name in sorted(self._by_name)
            if name not in self._internal
            for v in sorted(self._by_name[name])
        ]

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Register every verifier advertised under ``group``; record failures, never raise."""
        for ep in entry_points(group=group):
            try:
                for verifier in _instantiate(ep):
                    self.register(verifier)
            except Exception as exc:  # noqa: BLE001 - third-party code may fail any way
                self.load_errors[ep.name] = f"{type(exc).__name__}: {exc}"
                log.warning("verifier plugin %s failed to load: %s", ep.name, exc)


def _instantiate(ep: EntryPoint) -> Iterable[Verifier]:
    obj: Any = ep.load()
    if isinstance(obj, type):
        return [obj()]
    if isinstance(obj, Verifier):
        return [obj]
    if callable(obj):
        return list(obj())
    raise TypeError(f"entry point {ep.value} is neither a verifier, a class nor a factory")


def ref_of(verifier: Verifier) -> str:
    """What results of ``verifier`` report as their ``verifier``."""
    return str(getattr(verifier, "ref", f"{verifier.name}@{verifier.version}"))
