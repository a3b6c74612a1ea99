"""``sandbox.run``: the raw runs of ``POST /v1/run`` and ``POST /run_code`` as items of an
internal verifier, so they go through the sandbox pool like every other piece of untrusted
code: the pool's fair queue orders them against other tenants, a request that is
abandoned or out of time gets its worker killed (the run with it), and in distributed
mode they run on a sandbox worker rather than in the gateway.

``reference`` is a `RunSpec`; the result's ``details["run"]`` is the encoded `Execution`
(`decode_execution`); a broken sandbox is an ``error`` result (``sandbox_error``), a run
that can never work (unknown language, bad file name) ``invalid``. Internal: the
registry hides it from listings and from clients' items, so its caps are the routes'
(`RunLimits`), never the sandbox's maxima.
"""

from __future__ import annotations

from typing import ClassVar

from referee.sandbox import Sandbox
from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params, parse_reference
from referee.verifiers.code.execution import RunSpec, encode_execution
from referee.verifiers.code.runtime import SandboxHandle, handle_of, require_ok
from referee.verifiers.types import Item, Pool

RAW_RUN = "sandbox.run"


class RawRunParams(Params):
    """No parameters: the whole run is in the reference."""


class RawRunVerifier(ItemVerifier[RawRunParams]):
    """Runs the `RunSpec` in the item's reference. Reward 1 when every case ran ``ok``
    and matched its expected output (where one was given), else 0; callers read the run
    itself from the details."""

    name = RAW_RUN
    pool = Pool.SANDBOX
    Params = RawRunParams
    internal: ClassVar[bool] = True
    description = "Internal: a raw sandbox run for POST /v1/run and /run_code."

    def __init__(self, sandbox: Sandbox | SandboxHandle | None = None) -> None:
        self._sandbox = handle_of(sandbox)

    def check(self, item: Item, params: RawRunParams) -> Outcome:
        spec = parse_reference(RunSpec, item.reference)
        try:
            done = spec.run(self._sandbox.get())
        except ValueError as exc:
            raise ItemInvalid("invalid_run", str(exc)) from None
        require_ok(done.report)  # a broken sandbox is an error result, never a run
        passed = done.report.ok and all(v is None or v.passed for v in done.verdicts)
        return Outcome(reward=1.0 if passed else 0.0, details={"run": encode_execution(done)})
