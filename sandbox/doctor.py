"""What this host can do: which backends work, whether cgroups are usable, and which
languages run — for ``referee doctor``. Probing runs real processes (bwrap, a hello world
per language when ``smoke`` is set), so it takes seconds; nothing runs at import."""

from __future__ import annotations

import os
from dataclasses import dataclass

from referee.sandbox import cgroups, languages
from referee.sandbox.backends import create
from referee.sandbox.runner import Sandbox
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import Case, CaseStatus, Program, SandboxStatus

_HELLO = {
    "python3": "print('ok')",
    "c": '#include <stdio.h>\nint main(){puts("ok");}',
    "cpp": '#include <iostream>\nint main(){std::cout<<"ok\\n";}',
    "java": 'public class Main{public static void main(String[] a){System.out.println("ok");}}',
    "javascript": "console.log('ok')",
    "go": 'package main\nimport "fmt"\nfunc main(){fmt.Println("ok")}',
    "rust": 'fn main(){println!("ok");}',
    "bash": "echo ok",
    "sql": "select 'ok';",
    "verilog": 'module m; initial begin $display("ok"); $finish; end endmodule',
}


@dataclass(frozen=True)
class Check:
    """One line of the report. ``ok`` False with ``detail`` saying why (or a warning)."""

    component: str
    ok: bool
    detail: str


def check_host(settings: SandboxSettings | None = None, smoke: bool = True) -> list[Check]:
    """Probe backends, cgroups and languages; with ``smoke``, run a hello world per
    available language through the configured backend."""
    settings = settings or SandboxSettings()
    checks: list[Check] = []
    for name in ("bwrap", "docker", "process"):
        backend = create(settings.model_copy(update={"backend": name}))
        problem = backend.problem()
        note = "" if backend.isolating else " (NOT isolating: trusted code only)"
        checks.append(Check(f"backend {name}", problem is None, (problem or "works") + note))
    checks.append(_check_identity(settings, os.geteuid()))
    support = cgroups.detect()
    checks.append(
        Check(
            "cgroups",
            support is not None and support.pids is not None,
            support.describe()
            if support
            else "none usable: memory and process limits are "
            "rlimits only (a fork bomb is bounded only by the pid namespace)",
        )
    )
    with Sandbox(settings) as sandbox:
        for lang in languages.LANGUAGES.values():
            checks.append(_check_language(sandbox, lang, smoke))
    return checks


def _check_identity(settings: SandboxSettings, euid: int) -> Check:
    """bwrap maps the sandbox's uid to the uid that started it: started as root, files in
    the visible system directories that only root may read are readable in the sandbox
    (capabilities are still dropped and every mount is read-only)."""
    inside = settings.sandbox_uid
    if euid != 0:
        return Check("sandbox identity", True, f"uid {inside} inside, uid {euid} outside")
    return Check(
        "sandbox identity",
        False,
        f"uid {inside} inside maps to root outside (this process runs as root): "
        "run referee as an unprivileged user, as the image does (uid 10001)",
    )


def _check_language(sandbox: Sandbox, lang: languages.Language, smoke: bool) -> Check:
    component = f"language {lang.name}"
    missing = languages.missing_tools(lang)
    if missing:
        return Check(component, False, "missing: " + ", ".join(missing))
    if not smoke:
        return Check(component, True, "toolchain present (not run)")
    report = sandbox.run(Program(language=lang.name, source=_HELLO[lang.name]), [Case()])
    if report.sandbox_status is not SandboxStatus.OK:
        return Check(component, False, report.message)
    if not report.cases:
        output = report.compile.output if report.compile else ""
        return Check(component, False, f"compile failed: {output[:200]}")
    case = report.cases[0]
    works = case.status is CaseStatus.OK and case.stdout == "ok\n"
    detail = f"runs on {sandbox.backend.name}" if works else f"{case.status}: {case.stderr[:200]}"
    return Check(component, works, detail)
