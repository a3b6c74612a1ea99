"""Which host user a sandbox runs as.

bwrap maps the sandbox's uid 65534 to the uid that *starts* bwrap. Started by root, that
is host root: a process that escaped the sandbox's restrictions (a writable ``/proc/sys``
file, a kernel bug) would hold root's files. So when the server runs as root, every run
starts bwrap as an unprivileged host uid of its own, taken from a pool (`IdentityPool`):
an escape then holds nothing, and runs cannot share per-user kernel budgets (inotify
instances, RLIMIT_NPROC) or signal each other. Run unprivileged (recommended), the server
has no other uid to give: bwrap runs as the server's own user.

The pool's uids need no passwd entries; nothing on the host disk belongs to them but the
run's own program directory, which is created for it and deleted after it.
"""

from __future__ import annotations

import os
import random
import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HostIdentity:
    """A host uid and gid to start a sandbox as."""

    uid: int
    gid: int


class IdentityPool:
    """Unprivileged identities (uid = gid) drawn at random from ``[base, base + span)``,
    one per run while it lasts, never two live runs of this process on one. Processes
    do not coordinate: the span is wide (16 million by default) so that two processes'
    runs rarely meet on a uid, and when they do they still share nothing but that uid's
    per-user budgets (each run has its own namespaces). Thread-safe. Inactive (None for
    everything) unless running as root: an unprivileged process cannot switch users."""

    def __init__(self, base: int, span: int, *, active: bool | None = None) -> None:
        self.base = base
        self.span = span
        self.active = os.geteuid() == 0 if active is None else active
        self._taken: set[int] = set()
        self._lock = threading.Lock()
        self._random = random.SystemRandom()

    def acquire(self) -> HostIdentity | None:
        """An identity no other live run of this process holds; None when inactive."""
        if not self.active:
            return None
        with self._lock:
            uid = self.base + self._random.randrange(self.span)
            while uid in self._taken:
                uid = self.base + self._random.randrange(self.span)
            self._taken.add(uid)
        return HostIdentity(uid, uid)

    def release(self, identity: HostIdentity | None) -> None:
        """Give an identity back (None is ignored)."""
        if identity is not None:
            with self._lock:
                self._taken.discard(identity.uid)


def as_user(identity: HostIdentity | None) -> dict[str, Any]:
    """`subprocess.Popen` keyword arguments that start the child as ``identity`` (no
    supplementary groups); none for None."""
    if identity is None:
        return {}
    return {"user": identity.uid, "group": identity.gid, "extra_groups": []}
