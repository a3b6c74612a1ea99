"""`check_host` reports every backend and language, and tells the truth about bwrap."""

from __future__ import annotations

from referee.sandbox import SandboxSettings, languages
from referee.sandbox.doctor import _check_identity, check_host

from .conftest import needs_bwrap


@needs_bwrap
def test_report_names_every_backend_and_language() -> None:
    checks = {c.component: c for c in check_host(SandboxSettings(), smoke=False)}
    assert checks["backend bwrap"].ok
    assert "NOT isolating" in checks["backend process"].detail
    for name, lang in languages.LANGUAGES.items():
        check = checks[f"language {name}"]
        assert check.ok == (languages.missing_tools(lang) == []), check


def test_running_as_root_is_reported_as_a_weaker_identity() -> None:
    """Started as root, bwrap maps the sandbox's uid to root: the report says so."""
    settings = SandboxSettings()
    as_root = _check_identity(settings, 0)
    assert not as_root.ok and "maps to root" in as_root.detail
    as_user = _check_identity(settings, 10001)
    assert as_user.ok and "uid 10001 outside" in as_user.detail
