"""`check_host` reports every backend and language, and tells the truth about bwrap."""

from __future__ import annotations

from sandbox import SandboxSettings, languages
from sandbox.doctor import check_host

from .conftest import needs_bwrap


@needs_bwrap
def test_report_names_every_backend_and_language() -> None:
    checks = {c.component: c for c in check_host(SandboxSettings(), smoke=False)}
    assert checks["backend bwrap"].ok
    assert "NOT isolating" in checks["backend process"].detail
    for name, lang in languages.LANGUAGES.items():
        check = checks[f"language {name}"]
        assert check.ok == (languages.missing_tools(lang) == []), check
