"""What this host can do: which backends work, whether cgroups are usable, and which
languages run — for ``referee doctor``. Probing runs real processes (bwrap, a hello world
per language when ``smoke`` is set), so it takes seconds; nothing runs at import."""

from __future__ import annotations

import os
from dataclasses import dataclass

from referee.sandbox import cgroups, gobuild, languages, toolchains
from referee.sandbox.backends import create
from referee.sandbox.runner import Sandbox
from referee.sandbox.settings import SandboxSettings
from referee.sandbox.types import Case, CaseStatus, Program, SandboxStatus

HELLO = {
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
    "php": '<?php echo "ok\\n";',
    "ruby": "puts 'ok'",
    "perl": 'print "ok\\n";',
    "lua": "print('ok')",
    "r": 'cat("ok\\n")',
    "racket": '#lang racket/base\n(displayln "ok")',
    "csharp": 'class P { static void Main() { System.Console.WriteLine("ok"); } }',
    "d": 'import std.stdio; void main() { writeln("ok"); }',
    "typescript": "const s: string = 'ok'; console.log(s);",
    "scala": 'object Main { def main(a: Array[String]): Unit = println("ok") }',
    "kotlin": 'fun main() { println("ok") }',
    "kotlin_script": 'println("ok")',
    # test-runner modes: their own report is the output; passing is what counts
    "pytest": "def test_ok():\n    pass\n",
    "go_test": 'package main\nimport "testing"\nfunc TestOk(t *testing.T) {}\n',
    "d_unittest": "unittest { assert(true); }",
    "junit": "import org.junit.jupiter.api.Test;\npublic class OkTest { @Test void ok() {} }",
    "gtest": "#include <gtest/gtest.h>\nTEST(Ok, Ok) { EXPECT_TRUE(true); }",
    "jest": 'test("ok", () => { expect(1).toBe(1); });',
    "react": 'import { render, screen } from "@testing-library/react";\n'
    'test("ok", () => { render(<p>ok</p>); expect(screen.getByText("ok")).toBeInTheDocument(); });',
}
"""A program per language that prints ``ok`` (a test runner: passes), run by the smoke
check."""


@dataclass(frozen=True)
class Check:
    """One line of the report. ``ok`` False with ``detail`` saying why. ``required``: the
    configured sandbox cannot work without it (`failed` counts it)."""

    component: str
    ok: bool
    detail: str
    required: bool = False


def check_host(settings: SandboxSettings | None = None, smoke: bool = True) -> list[Check]:
    """Probe backends, cgroups and languages; with ``smoke``, run a hello world per
    available language through the configured backend. The configured backend is
    ``required``; the others are listed as alternatives, without warnings."""
    settings = settings or SandboxSettings()
    checks = [_check_backend(settings, name) for name in ("bwrap", "docker", "process")]
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


def failed(checks: list[Check]) -> list[str]:
    """Why the configured sandbox cannot score code on this host (empty when it can): a
    required check failed, or not one language runs."""
    reasons = [f"{c.component}: {c.detail}" for c in checks if c.required and not c.ok]
    languages_ok = [c for c in checks if c.component.startswith("language ") and c.ok]
    if not languages_ok:
        reasons.append("no language runs on this host")
    return reasons


def _check_backend(settings: SandboxSettings, name: str) -> Check:
    configured = name == settings.backend
    backend = create(settings.model_copy(update={"backend": name}))
    problem = backend.problem()
    label = f"backend {name}" + (" (configured)" if configured else "")
    if problem is not None:
        return Check(label, False, problem, required=configured)
    if not backend.isolating:
        note = "NOT isolating: trusted code only" if configured else "available, not isolating"
        return Check(label, True, f"works ({note})", required=configured)
    return Check(label, True, "works", required=configured)


def _check_identity(settings: SandboxSettings, euid: int) -> Check:
    """Who a sandboxed program is on the host. Started as root, every run starts bwrap
    as an unprivileged uid of its own (`sandbox.identity`), so a program that escaped its
    namespaces would still be nobody on the host."""
    inside = settings.sandbox_uid
    if euid != 0:
        return Check("sandbox identity", True, f"uid {inside} inside, uid {euid} outside")
    first = settings.host_uid_base
    last = first + settings.host_uid_span - 1
    return Check(
        "sandbox identity",
        True,
        f"uid {inside} inside, a fresh unprivileged host uid per run outside "
        f"({first}..{last}); the server itself runs as root: prefer a service account",
    )


def _check_language(sandbox: Sandbox, lang: languages.Language, smoke: bool) -> Check:
    component = f"language {lang.name}"
    missing = toolchains.missing_tools(lang, runtime=sandbox.settings.runtime_dir)
    if missing:
        return Check(component, False, "missing: " + ", ".join(missing))
    present = Check(component, True, "toolchain present (not run)")
    checked = _check_run(sandbox, lang) if smoke else present
    if lang.name not in ("go", "go_test"):
        return checked
    why = gobuild.unready(lang, sandbox.settings.runtime_dir)
    tool = "go build" if lang.name == "go" else "go test -c"
    built = "against the runtime's library" if why is None else f"by {tool}: {why}"
    return Check(component, checked.ok, f"{checked.detail}; builds {built}")


def _check_run(sandbox: Sandbox, lang: languages.Language) -> Check:
    component = f"language {lang.name}"
    report = sandbox.run(Program(language=lang.name, source=HELLO[lang.name]), [Case()])
    if report.sandbox_status is not SandboxStatus.OK:
        return Check(component, False, report.message)
    if not report.cases:
        output = report.compile.output if report.compile else ""
        return Check(component, False, f"compile failed: {output[:200]}")
    case = report.cases[0]
    printed = lang.runs_tests or case.stdout == "ok\n"  # a runner prints its own report
    works = case.status is CaseStatus.OK and printed
    detail = f"runs on {sandbox.backend.name}" if works else f"{case.status}: {case.stderr[:200]}"
    return Check(component, works, detail)
