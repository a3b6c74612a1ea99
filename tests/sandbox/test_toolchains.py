"""What the host offers: a missing toolchain or runtime is named with how to get it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from referee.sandbox import (
    Case,
    Program,
    Sandbox,
    SandboxSettings,
    SandboxStatus,
    languages,
    toolchains,
)

from .conftest import FAST


def test_a_missing_toolchain_names_the_package_to_install() -> None:
    lang = languages.Language(
        "x", "m.x", ("/nonexistent/x",), tools=("/nonexistent/x",), package="x-lang"
    )
    assert toolchains.missing_tools(lang) == ["/nonexistent/x (apt-get install x-lang)"]


def test_a_language_from_the_runtime_without_one_names_the_setting() -> None:
    [jest] = [lang for lang in languages.LANGUAGES.values() if lang.name == "jest"]
    assert "REFEREE_SANDBOX_RUNTIME_DIR" in toolchains.missing_tools(jest)[0]
    with Sandbox(SandboxSettings(backend="bwrap", limits=FAST)) as sandbox:
        report = sandbox.run(Program(language="jest", source="test('x', () => {});"), [Case()])
    assert report.sandbox_status is SandboxStatus.UNAVAILABLE
    assert "build-runtime.sh" in report.message


def test_readable_by_all_needs_every_parent_searchable() -> None:
    """Under /tmp (searchable by all): readable when every level is o+x and the directory
    o+r; not when one parent drops o+x, nor when the directory drops o+r."""
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        inner = base / "a" / "b"
        inner.mkdir(parents=True)
        for path in (base, base / "a", inner):
            path.chmod(0o755)
        assert toolchains.readable_by_all(inner)
        (base / "a").chmod(0o750)  # a parent others cannot search
        assert not toolchains.readable_by_all(inner)
        (base / "a").chmod(0o755)
        inner.chmod(0o711)  # searchable, not readable
        assert not toolchains.readable_by_all(inner)
    finally:
        shutil.rmtree(base)
