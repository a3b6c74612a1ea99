"""`check_host` reports every backend and language, and tells the truth about bwrap."""

from __future__ import annotations

from referee.sandbox import SandboxSettings, languages, toolchains
from referee.sandbox.doctor import Check, _check_identity, check_host, failed

from .conftest import needs_bwrap


@needs_bwrap
def test_report_names_every_backend_and_language() -> None:
    report = check_host(SandboxSettings(), smoke=False)
    checks = {c.component: c for c in report}
    assert checks["backend bwrap (configured)"].ok and checks["backend bwrap (configured)"].required
    assert checks["backend process"].detail == "works (available, not isolating)"
    assert not checks["backend process"].required
    assert failed(report) == []
    for name, lang in languages.LANGUAGES.items():
        check = checks[f"language {name}"]
        assert check.ok == (toolchains.missing_tools(lang) == []), check


def test_the_process_backend_warns_only_when_configured() -> None:
    report = check_host(SandboxSettings(backend="process"), smoke=False)
    checks = {c.component: c for c in report}
    assert checks["backend process (configured)"].detail == (
        "works (NOT isolating: trusted code only)"
    )


def test_a_missing_configured_backend_fails_the_report() -> None:
    report = check_host(SandboxSettings(bwrap_path="/nonexistent/bwrap"), smoke=False)
    reasons = failed(report)
    assert any("backend bwrap (configured)" in r and "bubblewrap" in r for r in reasons)
    languages_only = [Check("language c", False, "missing: gcc")]
    assert failed(languages_only) == ["no language runs on this host"]


def test_running_as_root_is_reported_with_the_per_run_identity() -> None:
    """Started as root, each run still starts as an unprivileged host uid of its own."""
    settings = SandboxSettings()
    as_root = _check_identity(settings, 0)
    assert as_root.ok and "fresh unprivileged host uid per run" in as_root.detail
    as_user = _check_identity(settings, 10001)
    assert as_user.ok and "uid 10001 outside" in as_user.detail
