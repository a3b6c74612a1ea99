"""The sandbox's front door: `Sandbox.run(program, cases, limits) -> RunReport`.

The program is written to a fresh host directory, compiled once (when the language has a
compile step) with that directory writable, then every case runs with it read-only, at
most ``settings.parallelism`` at a time. Python cases go through the pre-started
interpreter (`sandbox.pyfast`) when the backend is bwrap and the fast path is enabled.

`run` never raises for anything the program does, nor for a broken sandbox: both come
back in the report (see `sandbox.types`). It raises `ValueError` only for a request that
can never work (an unknown language, a file name with a path in it).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from referee.sandbox import backends, gobuild, languages, leftovers, toolchains
from referee.sandbox.backends.base import Backend, Channel, Command
from referee.sandbox.builds import BuildCache
from referee.sandbox.classification import outcome
from referee.sandbox.identity import HostIdentity, IdentityPool
from referee.sandbox.paths import MAX_FILES, plain_name, relative_path
from referee.sandbox.program_dir import ProgramDir
from referee.sandbox.pyfast.host import ForkServer
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import (
    Case,
    CaseOutcome,
    CompileOutcome,
    CompileStatus,
    FastPathDeclined,
    Limits,
    Program,
    RunReport,
    SandboxFailure,
    SandboxStatus,
)

# Compilers are multi-threaded (go, rustc, javac); the pids cgroup counts threads.
_COMPILE_PROCESSES = 512
PROBLEM_RECHECK_S = 30.0
"""How long a found backend problem is believed before the backend is probed again."""
MIN_CASE_S = 0.2
"""The least time worth a case under `Sandbox.run`'s ``end_by``: with less it is not started."""


log = logging.getLogger(__name__)
T = TypeVar("T")


class Sandbox:
    """Runs programs. Thread-safe; holds the Python fast-path server (if used) until
    `close`. Use as a context manager or keep one per process."""

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings()
        self.backend: Backend = backends.create(self.settings)
        if not self.backend.isolating:  # said once per sandbox that will run code on it
            log.warning("sandbox backend %r does NOT isolate untrusted code", self.backend.name)
        self.identities = IdentityPool(self.settings.host_uid_base, self.settings.host_uid_span)
        self._fast: ForkServer | None = None
        self._fast_peer: ForkServer | None = None  # linked runs' peers: a uid of their own
        self._lock = threading.Lock()
        self._problem: tuple[float, str | None] | None = None
        self.builds = BuildCache(
            self.settings.work_root,
            self.settings.build_cache_entries,
            self.settings.build_cache_mb << 20,
        )
        self.fast_path_fallbacks = 0
        """Python cases the fast path could not run, re-run in a bwrap of their own."""
        # A process killed mid-run (a preempted worker, say) could not clean up after
        # itself: whoever comes next does.
        leftovers.sweep(self.settings.work_root)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def resident_pids(self) -> list[int]:
        """Host pids this sandbox keeps between runs (the fast-path servers), for leak checks."""
        servers = [self._fast, self._fast_peer]
        return [pid for server in servers if server is not None for pid in server.server_pids()]

    def close(self) -> None:
        """Stop the fast-path servers, if any were started."""
        with self._lock:
            servers = [self._fast, self._fast_peer]
            self._fast = self._fast_peer = None
        for server in servers:
            if server is not None:
                server.close()
        self.builds.close()

    def problem(self) -> str | None:
        """Why the backend cannot run anything on this host (`backends.unusable`), or None.
        Probed once when it works; a problem is probed again after `PROBLEM_RECHECK_S`
        (the operator may be installing what is missing)."""
        with self._lock:
            known = self._problem
        if known is not None and (known[1] is None or time.monotonic() < known[0]):
            return known[1]
        found = backends.unusable(self.backend) or _runtime_problem(
            self.settings.runtime_dir, self.identities.active
        )
        with self._lock:
            self._problem = (time.monotonic() + PROBLEM_RECHECK_S, found)
        return found

    def _unavailable(self, lang: languages.Language) -> str | None:
        """Why ``lang`` cannot run here at all (backend or toolchain), or None."""
        problem = self.problem()
        if problem is not None:
            return problem
        missing = toolchains.missing_tools(
            lang, shared=self.identities.active, runtime=self.settings.runtime_dir
        )
        if missing:
            return f"{lang.name} toolchain missing on this host: {', '.join(missing)}"
        return None

    def run(
        self,
        program: Program,
        cases: Sequence[Case],
        limits: Limits | None = None,
        deadline: float | None = None,
        end_by: float | None = None,
    ) -> RunReport:
        """Compile ``program`` once and run every case; see the module docstring. With a
        ``deadline`` (`time.monotonic`), the latest a case may start, a case not started
        by then is not run: ``cases`` in the report are then the outcomes of a prefix of
        ``cases``, the ones that ran. With ``end_by`` (`time.monotonic`) every case ends by
        then: a case's wall and CPU limits are cut to the time left when it starts, and a
        case with less than `MIN_CASE_S` left is not started (as past ``deadline``). The
        compile keeps ``limits.compile_wall_s``: a caller that must bound it sets it."""
        limits = limits or self.settings.limits
        lang = languages.find(program.language)
        if lang is None:
            raise ValueError(f"unknown language {program.language!r}")
        _require_valid(program, cases)
        if not limits.spawn and any(c.fetch for c in cases):
            # the fetching supervisor runs the program as its child
            raise ValueError("fetch: files cannot be fetched from a run kept from spawning")
        files = _program_files(program, lang.main_for(program.source))
        report = RunReport(backend=self.backend.name, language=lang.name)
        unavailable = self._unavailable(lang)
        if unavailable is None and not self.backend.fetches and any(c.fetch for c in cases):
            unavailable = (
                f"fetching files back needs the bwrap or process backend, not {self.backend.name}"
            )
        if unavailable is None and not limits.spawn and not self._confines_spawning():
            unavailable = (
                f"the {self.backend.name} backend cannot keep a program from starting "
                "processes, which tests run in the program's own process need: use bwrap"
            )
        if unavailable is not None:
            report.sandbox_status = SandboxStatus.UNAVAILABLE
            report.message = unavailable
            return report
        identity = self.identities.acquire()
        box, report.compile = self._cached_build(lang, files, program, identity, limits)
        try:
            binds = _binds(lang, self.identities.active, self.settings.runtime_dir)
            if report.compile is None:
                report.compile = self._build(lang, files, box, binds, program, limits)
            if report.compile.status is CompileStatus.OK or lang.compile is None:
                report.cases = self._cases(
                    lang,
                    list(files),
                    box,
                    binds,
                    program,
                    cases,
                    limits,
                    (deadline, end_by),
                )
        except SandboxFailure as exc:
            report.sandbox_status = SandboxStatus.ERROR
            report.message = str(exc)
            report.cases = []
        finally:
            box.remove()
            self.identities.release(identity)
        return report

    def run_linked(
        self,
        program: Program,
        peer: Program,
        cases: Sequence[Case],
        limits: Limits | None = None,
        deadline: float | None = None,
    ) -> RunReport:
        """Run ``program`` and ``peer`` side by side for every case, each in a sandbox of its
        own, linked by a channel (two pipes: what one writes the other reads; the fds are
        named in ``REFEREE_CHANNEL_IN`` / ``REFEREE_CHANNEL_OUT``). The *peer* gets the
        case (stdin, argv, files); the program gets none, so nothing in a case reaches the
        program except through the peer. Compiled languages are built first, both sides
        at once (``compile`` and ``peer_compile`` in the report); when either does not
        build, no case runs.
        ``cases`` in the report are the program's outcomes, ``peers`` the peer's; with a
        ``deadline``, of the prefix of ``cases`` started by then, as in `run`. Same errors
        as `run`; the docker backend cannot link (``sandbox_error``)."""
        limits = limits or self.settings.limits
        found = [languages.find(p.language) for p in (program, peer)]
        langs = [lang for lang in found if lang is not None]
        if len(langs) != 2:
            raise ValueError(f"unknown language {program.language!r} or {peer.language!r}")
        _require_valid(program, cases)
        _require_valid(peer, cases)
        report = RunReport(backend=self.backend.name, language=langs[0].name)
        unavailable = self._unlinkable(langs)
        if unavailable is not None:
            report.sandbox_status = SandboxStatus.UNAVAILABLE
            report.message = unavailable
            return report
        programs = (program, peer)
        files = [
            _program_files(p, lang.main_for(p.source))
            for p, lang in zip(programs, langs, strict=True)
        ]
        # two users: the program and its peer do not even share a uid
        identities = [self.identities.acquire(), self.identities.acquire()]
        built = [
            self._cached_build(lang, given, p, identity, limits)
            for lang, given, p, identity in zip(langs, files, programs, identities, strict=True)
        ]
        boxes = [box for box, _ in built]
        fast = self._fast_pair(langs, limits)

        def one(case: Case) -> tuple[CaseOutcome, CaseOutcome]:
            if fast is not None and not (case.fetch or case.data_files):
                try:
                    return _fast_linked_case(fast, programs, case, limits)
                except SandboxFailure as exc:  # as in `run`: the case runs again in bwraps
                    self._fell_back(exc)
            return self._linked_case(langs, boxes, programs, case, limits)

        try:
            report.compile, report.peer_compile = self._build_pair(
                langs, files, built, programs, limits
            )
            if all(
                c is None or c.status is CompileStatus.OK
                for c in (report.compile, report.peer_compile)
            ):
                pairs = self._started_by(deadline, one, cases)
                report.cases = [pair[0] for pair in pairs]
                report.peers = [pair[1] for pair in pairs]
        except SandboxFailure as exc:
            report.sandbox_status = SandboxStatus.ERROR
            report.message = str(exc)
            report.cases, report.peers = [], []
        finally:
            for box, identity in zip(boxes, identities, strict=True):
                box.remove()
                self.identities.release(identity)
        return report

    def _unlinkable(self, langs: list[languages.Language]) -> str | None:
        """Why a linked run of ``langs`` cannot happen here, or None."""
        if not self.backend.links:
            return (
                "linked runs (assert tests run in a second sandbox) need the bwrap or "
                f"process backend, not {self.backend.name} (REFEREE_SANDBOX_BACKEND)"
            )
        return next(filter(None, map(self._unavailable, langs)), None)

    def _build_pair(
        self,
        langs: list[languages.Language],
        files: list[dict[str, str]],
        built: list[tuple[ProgramDir, CompileOutcome | None]],
        programs: tuple[Program, Program],
        limits: Limits,
    ) -> tuple[CompileOutcome | None, CompileOutcome | None]:
        """Build both sides of a linked run (at once) where not built yet; their
        outcomes (None: nothing to compile)."""

        def build(side: int) -> CompileOutcome | None:
            lang, (box, compiled) = langs[side], built[side]
            if compiled is not None or lang.compile is None:
                return compiled
            binds = _binds(lang, self.identities.active, self.settings.runtime_dir)
            return self._build(lang, files[side], box, binds, programs[side], limits)

        with ThreadPoolExecutor(max_workers=1) as side:
            theirs = side.submit(build, 1)
            mine = build(0)
            return mine, theirs.result()

    def _linked_case(
        self,
        langs: list[languages.Language],
        boxes: list[ProgramDir],
        programs: tuple[Program, Program],
        case: Case,
        limits: Limits,
    ) -> tuple[CaseOutcome, CaseOutcome]:
        to_program, to_peer = channel_pipes()
        channels = (Channel(to_program[0], to_peer[1]), Channel(to_peer[0], to_program[1]))
        try:
            binds = [
                _binds(lang, self.identities.active, self.settings.runtime_dir) for lang in langs
            ]
            commands = _linked_commands(langs, boxes, programs, case, limits, channels, binds)
        except BaseException:
            for fd in (*to_program, *to_peer):
                os.close(fd)
            raise
        with ThreadPoolExecutor(max_workers=1) as side:
            peer = side.submit(self.backend.execute, commands[1])
            try:
                mine = self.backend.execute(commands[0])
            finally:
                theirs = peer.result()
        return outcome(mine, limits), outcome(theirs, limits)

    def _started_by(
        self, deadline: float | None, one: Callable[[Case], T], cases: Sequence[Case]
    ) -> list[T]:
        """`_map` over the cases that start by ``deadline`` (`time.monotonic`): the
        outcomes of a prefix of ``cases`` (all of them without a deadline)."""

        def timely(case: Case) -> T | None:
            if deadline is not None and time.monotonic() > deadline:
                return None  # too late to start
            return one(case)

        ran: list[T] = []
        for found in self._map(timely, cases):
            if found is None:
                break  # cases start in order: the rest started later still
            ran.append(found)
        return ran

    def _map(self, one: Callable[[Case], T], cases: Sequence[Case]) -> list[T]:
        if len(cases) <= 1 or self.settings.parallelism == 1:
            return [one(case) for case in cases]
        with ThreadPoolExecutor(max_workers=min(self.settings.parallelism, len(cases))) as pool:
            return list(pool.map(one, cases))

    def _compile(
        self,
        lang: languages.Language,
        files: list[str],
        box: ProgramDir,
        binds: dict[str, Path],
        program: Program,
        limits: Limits,
        steps: tuple[tuple[str, ...], ...],
    ) -> CompileOutcome:
        """Run the build's ``steps`` (`gobuild.steps`) until one fails, all within the
        compile time limit; their outputs joined."""
        if not steps:
            return CompileOutcome(status=CompileStatus.SKIPPED)
        outcome = CompileOutcome(status=CompileStatus.OK)
        for template in steps:
            argv = lang.argv(template, files, limits.compile_memory_mb)
            if template is lang.compile:
                argv += program.build_flags
            left = limits.compile_wall_s - outcome.wall_s
            if left <= 0:
                return outcome.model_copy(update={"status": CompileStatus.TIMEOUT})
            step = self._compile_step(lang, argv, box, binds, limits, left)
            outcome = CompileOutcome(
                status=step.status,
                output=outcome.output + step.output,
                wall_s=round(outcome.wall_s + step.wall_s, 6),
            )
            if step.status is not CompileStatus.OK:
                break
        if outcome.status is CompileStatus.OK and box.size() > limits.disk_mb << 20:
            quota = f"\nthe build output is larger than the disk quota ({limits.disk_mb} MB)"
            outcome = outcome.model_copy(
                update={"status": CompileStatus.ERROR, "output": outcome.output + quota}
            )
        return outcome

    def _compile_step(
        self,
        lang: languages.Language,
        argv: list[str],
        box: ProgramDir,
        binds: dict[str, Path],
        limits: Limits,
        wall_s: float,
    ) -> CompileOutcome:
        ex = self.backend.execute(
            Command(
                argv=argv,
                box=box.path(),
                box_writable=True,
                cwd_is_box=True,
                env=dict(lang.env),
                stdin=b"",
                files={},
                wall_s=wall_s,
                cpu_s=wall_s,
                memory_mb=limits.compile_memory_mb,
                memory_rlimit="none" if lang.memory_rlimit == "none" else "data",
                processes=_COMPILE_PROCESSES,
                # every build output lands in the program directory, on the host's disk:
                # no file may exceed the run's disk quota, and their total is checked after
                file_size_mb=limits.disk_mb,
                disk_mb=max(limits.disk_mb, 512),
                output_bytes=limits.output_bytes,
                binds=binds,
                identity=box.owner,
            )
        )
        if ex.returncode == 1 and ex.stderr.startswith(b"bwrap: "):
            # bwrap could not build the sandbox (the compiler's own messages never start
            # so): the infrastructure's failure, never the program's compile error
            raise SandboxFailure(ex.stderr.decode(errors="replace").strip()[:300])
        text = (ex.stderr + ex.stdout).decode("utf-8", errors="replace")
        if ex.timed_out:
            status = CompileStatus.TIMEOUT
        else:
            status = CompileStatus.OK if ex.returncode == 0 else CompileStatus.ERROR
        return CompileOutcome(status=status, output=text, wall_s=round(ex.wall_s, 6))

    def _cases(
        self,
        lang: languages.Language,
        files: list[str],
        box: ProgramDir,
        binds: dict[str, Path],
        program: Program,
        cases: Sequence[Case],
        limits: Limits,
        pace: tuple[float | None, float | None] = (None, None),
    ) -> list[CaseOutcome]:
        """The outcomes of the cases started in time: ``pace`` is `run`'s ``deadline``
        and ``end_by``."""
        fast = self._fast_path(lang)
        argv = lang.argv(lang.run, files, limits.memory_mb)
        deadline, end_by = pace
        if end_by is not None:
            deadline = min(end_by - MIN_CASE_S, deadline if deadline is not None else end_by)

        def full(case: Case, limits: Limits) -> CaseOutcome:
            return outcome(
                self.backend.execute(_case_command(lang, argv, box, binds, case, limits)),
                limits,
            )

        def one(case: Case) -> CaseOutcome:
            mine = _within(limits, end_by)
            if fast is None or not fast.fits(mine) or case.fetch or case.data_files:
                # fetching files needs the per-case supervisor; the fast path takes text
                return full(case, mine)
            try:
                return outcome(fast.execute(program, case, mine), mine)
            except SandboxFailure as exc:
                # The fast path is an optimisation: when it cannot run the case (its server
                # died, e.g. an OOM kill in the shared pool cgroup, or could not fork under
                # a concurrent case's fork bomb), the case runs again in a bwrap of its
                # own, which also reports the right status for what the case did.
                self._fell_back(exc)
                return full(case, _within(mine, end_by))

        return self._started_by(deadline, one, cases)

    def _build_key(
        self, lang: languages.Language, files: dict[str, str], program: Program, limits: Limits
    ) -> str | None:
        """The `BuildCache` key of ``program`` (None: nothing to compile, or a build
        not to keep)."""
        steps = gobuild.steps(lang, program.build_flags, self.settings.runtime_dir, files)
        if not steps or not program.keep_build:
            return None
        argv = [lang.argv(step, list(files), limits.compile_memory_mb) for step in steps]
        return BuildCache.key(argv, files, program.build_flags)

    def _cached_build(
        self,
        lang: languages.Language,
        files: dict[str, str],
        program: Program,
        identity: HostIdentity | None,
        limits: Limits,
    ) -> tuple[ProgramDir, CompileOutcome | None]:
        """The program's directory: a copy of its cached build, with that build's
        compile outcome, or else a fresh directory holding ``files`` and None (a miss, a
        build evicted while copied, or one over this run's disk quota: the compile says
        so)."""
        key = self._build_key(lang, files, program, limits)
        build = self.builds.get(key) if key is not None else None
        if build is not None and build.size <= limits.disk_mb << 20:
            box = ProgramDir(self.settings.work_root, {}, identity, seed=build.directory)
            try:
                box.path()
                return box, CompileOutcome(
                    status=CompileStatus.OK, output=build.output, cached=True
                )
            except (OSError, SandboxFailure):
                # evicted while copied, or the work root unusable: the plain path says so
                box.remove()
        return ProgramDir(self.settings.work_root, files, identity), None

    def _build(
        self,
        lang: languages.Language,
        files: dict[str, str],
        box: ProgramDir,
        binds: dict[str, Path],
        program: Program,
        limits: Limits,
    ) -> CompileOutcome:
        """Compile ``files`` in ``box``; once built, the sources leave it and the build
        is kept (`BuildCache`) when the program allows."""
        steps = gobuild.steps(lang, program.build_flags, self.settings.runtime_dir, files)
        compiled = self._compile(lang, list(files), box, binds, program, limits, steps)
        if compiled.status is CompileStatus.OK:
            box.sanitize()
            box.drop([*files, *gobuild.leftovers(steps)])
            key = self._build_key(lang, files, program, limits)
            if key is not None:
                self.builds.put(key, box.path(), compiled.output)
        return compiled

    def _confines_spawning(self) -> bool:
        """Whether ``Limits.spawn`` False is enforced here; the process backend isolates
        nothing (trusted code only), so it is not asked to."""
        return self.backend.confines_spawning or not self.backend.isolating

    def _fell_back(self, failure: SandboxFailure) -> None:
        """Say and count that the fast path could not run a case (it runs again in bwrap);
        a case the fast path declines (`FastPathDeclined`) is neither."""
        if isinstance(failure, FastPathDeclined):
            return
        log.warning("python fast path failed (%s); re-running the case in bwrap", failure)
        with self._lock:
            self.fast_path_fallbacks += 1

    def _fast_pair(
        self, langs: list[languages.Language], limits: Limits
    ) -> tuple[ForkServer, ForkServer] | None:
        """Fast-path servers for a linked run of two python3 programs: one for programs,
        one for peers, so that (with host identities) the two sides never share a uid."""
        servers = [self._fast_path(lang) for lang in langs]
        if servers[0] is None or servers[1] is None or not servers[0].fits(limits):
            return None
        with self._lock:
            if self._fast_peer is None:
                self._fast_peer = ForkServer(self.settings, self.identities)
            return servers[0], self._fast_peer

    def _fast_path(self, lang: languages.Language) -> ForkServer | None:
        if not (
            self.settings.python_fast_path
            and lang.name == "python3"
            and self.backend.name == "bwrap"
        ):
            return None

        with self._lock:
            if self._fast is None:
                self._fast = ForkServer(self.settings, self.identities)
            return self._fast


def _within(limits: Limits, end_by: float | None) -> Limits:
    """``limits`` with wall and CPU time cut to what is left until ``end_by``."""
    if end_by is None:
        return limits
    left = max(end_by - time.monotonic(), MIN_CASE_S)
    if left >= limits.wall_s and left >= limits.cpu_s:
        return limits
    return limits.model_copy(
        update={"wall_s": min(limits.wall_s, left), "cpu_s": min(limits.cpu_s, left)}
    )


def _require_valid(program: Program, cases: Sequence[Case]) -> None:
    """Raise ValueError (the caller's input) for a build flag outside the language's
    allow-list, a case file name with a path in it, or text that cannot be written as
    UTF-8 (lone surrogates), instead of failing half-way through a run."""
    lang = languages.find(program.language)
    if program.build_flags:
        refused = lang.refused_flag(program.build_flags) if lang else None
        if lang is None or lang.compile is None or refused is not None:
            what = f"{refused!r} is not" if refused is not None else "build flags are not"
            raise ValueError(f"build_flags: {what} allowed for {program.language}")
    texts = [program.source, *program.files.values()]
    for case in cases:
        texts += [case.stdin, *case.argv, *case.files.values()]
        if len(case.files) + len(case.data_files) > MAX_FILES:
            raise ValueError(f"files: at most {MAX_FILES} files per case")
        for name in [*case.files, *case.data_files, *case.fetch]:
            if not relative_path(name):
                raise ValueError(f"bad case file name {name[:64]!r}")
        sizes = [len(arg.encode("utf-8", "surrogatepass")) for arg in case.argv]
        if any(size > MAX_ARG_BYTES for size in sizes) or sum(sizes) > MAX_ARGV_BYTES:
            raise ValueError(
                f"argv: an argument is over {MAX_ARG_BYTES} bytes or all are over "
                f"{MAX_ARGV_BYTES} (the kernel would refuse to start the program)"
            )
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"text is not valid UTF-8 (position {exc.start}): {exc.reason}"
            ) from None


def _program_files(program: Program, main: str) -> dict[str, str]:
    files = {main: program.source}
    for name, text in program.files.items():
        if not plain_name(name) or name == main:
            raise ValueError(f"bad program file name {name[:64]!r}")
        files[name] = text
    return files


MAX_ARG_BYTES = 128 * 1024
MAX_ARGV_BYTES = 1024 * 1024
"""Linux refuses one argument over 128 KiB and argv + environment over a few MiB."""


def _runtime_problem(runtime: Path | None, shared: bool) -> str | None:
    """Why the configured runtime directory cannot be mounted, or None. ``shared``: runs
    start as other users than ours, so every user must be able to read it."""
    if runtime is None:
        return None
    setting = f"REFEREE_SANDBOX_RUNTIME_DIR={runtime}"
    if not (runtime / "manifest.json").is_file():
        return (
            f"{setting} is not a runtime directory (no manifest.json): build it with "
            "scripts/build-runtime.sh or unset the setting"
        )
    if shared and not toolchains.readable_by_all(runtime):
        return f"{setting} is not readable by every user (sandboxes run as other users)"
    return None


def _binds(lang: languages.Language, shared: bool, runtime: Path | None) -> dict[str, Path]:
    binds = {languages.RUNTIME_MOUNT: runtime} if runtime is not None else {}
    if lang.name != "rust":
        return binds
    root = toolchains.rust_sysroot(shared)
    if root is None:
        raise SandboxFailure("rust toolchain vanished")
    return {**binds, languages.RUST_MOUNT: root}


def _fast_linked_case(
    servers: tuple[ForkServer, ForkServer],
    programs: tuple[Program, Program],
    case: Case,
    limits: Limits,
) -> tuple[CaseOutcome, CaseOutcome]:
    """One case of a linked run on the fast path: the program (no input) on the first
    server, the peer (the case) on the second, each with its end of the channel. Raises
    SandboxFailure when either side's server could not run its case."""
    to_program, to_peer = channel_pipes()
    channels = (Channel(to_program[0], to_peer[1]), Channel(to_peer[0], to_program[1]))
    with ThreadPoolExecutor(max_workers=1) as side:
        peer = side.submit(servers[1].execute, programs[1], case, limits, channels[1])
        try:
            mine = servers[0].execute(programs[0], Case(), limits, channels[0])
        finally:
            theirs = peer.result()
    return outcome(mine, limits), outcome(theirs, limits)


def channel_pipes() -> tuple[tuple[int, int], tuple[int, int]]:
    """The two pipes of a linked run's channel, each readable and writable by any user
    who holds it: a JVM cannot use an inherited fd by number and opens it again as
    ``/proc/self/fd/N``, which checks the pipe's mode against the sandbox's user (the
    pipe is the host's, mode 0600). Only a process that holds the fds, or may read
    another's ``/proc/PID/fd``, reaches them: the two sides, each in its own pid
    namespace under its own user, see only their own."""
    pipes = (os.pipe(), os.pipe())
    for fd in (*pipes[0], *pipes[1]):
        os.fchmod(fd, 0o666)
    return pipes


def _linked_commands(
    langs: list[languages.Language],
    boxes: list[ProgramDir],
    programs: tuple[Program, Program],
    case: Case,
    limits: Limits,
    channels: tuple[Channel, Channel],
    binds: list[dict[str, Path]],
) -> list[Command]:
    """The program's command (no input) and the peer's (the case), each with its channel."""
    commands = []
    inputs = (Case(), case)
    for lang, box, program, given, channel, mounts in zip(
        langs, boxes, programs, inputs, channels, binds, strict=True
    ):
        command = _case_command(lang, _run_argv(lang, program, limits), box, mounts, given, limits)
        commands.append(dataclasses.replace(command, channel=channel))
    return commands


def _run_argv(lang: languages.Language, program: Program, limits: Limits) -> list[str]:
    """The argv running ``program``'s build."""
    files = _program_files(program, lang.main_for(program.source))
    return lang.argv(lang.run, list(files), limits.memory_mb)


def _case_command(
    lang: languages.Language,
    argv: list[str],
    box: ProgramDir,
    binds: dict[str, Path],
    case: Case,
    limits: Limits,
) -> Command:
    """The command running one case."""
    memory = limits.memory_mb + lang.overhead_mb
    return Command(
        argv=[*argv, *case.argv],
        box=box.path(),
        box_writable=False,
        cwd_is_box=False,
        env=dict(lang.env),
        stdin=case.stdin.encode(),
        files={**{k: v.encode() for k, v in case.files.items()}, **case.data_files},
        wall_s=limits.wall_s,
        cpu_s=limits.cpu_s,
        memory_mb=memory,
        memory_rlimit=lang.memory_rlimit,
        processes=limits.processes,
        file_size_mb=limits.file_size_mb,
        disk_mb=limits.disk_mb,
        output_bytes=limits.output_bytes,
        spawn=limits.spawn,
        binds=binds,
        identity=box.owner,
        fetch=tuple(case.fetch),
    )
