"""Installed, referee is one name: every package lives under `referee.`, and the bare
folder names (`verifiers` is also Prime Intellect's library) import nothing."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO

FOLDERS = ("service", "verifiers", "sandbox", "gpu_rm")


def test_every_package_of_the_folders_is_installed_under_referee() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        "referee." + ".".join(init.parent.relative_to(REPO).parts)
        for folder in FOLDERS
        for init in (REPO / folder).rglob("__init__.py")
        if "build" not in init.parts
    }
    assert set(config["packages"]) == on_disk
    assert config["package-dir"] == {f"referee.{f}": f for f in FOLDERS}


@pytest.mark.parametrize("name", FOLDERS)
def test_the_bare_folder_names_are_not_importable(name: str) -> None:
    """Run from outside the repository, as a user's program would be."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {name}"],
        cwd="/",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "No module named" in done.stderr


def test_the_referee_packages_import_from_anywhere() -> None:
    code = "import referee.service.cli, referee.verifiers, referee.sandbox, referee.gpu_rm"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd="/", capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
