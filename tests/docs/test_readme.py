"""The README's examples work as written: the curl call and the Python snippet (saved as
a script and run, as a new user would), against a real server."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx

from referee.sandbox import languages
from tests.conftest import REPO

README = (REPO / "README.md").read_text()
DEFAULT_URL = "http://127.0.0.1:8000"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_the_curl_example_scores_as_shown(live_server: str) -> None:
    [curl] = [b for b in blocks("bash") if b.startswith("curl")]
    argv = shlex.split(curl.replace("\\\n", " "))
    body = json.loads(argv[argv.index("-d") + 1])
    response = httpx.post(f"{live_server}/v1/score", json=body, timeout=60)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [(r["id"], r["status"], r["reward"]) for r in results] == [
        ("a", "ok", 1.0), ("b", "ok", 1.0), ("c", "ok", 1.0),
    ]  # fmt: skip
    assert response.json()["groups"]["q1"]["size"] == 2


def test_the_python_snippet_runs_as_a_script(live_server: str, tmp_path: Path) -> None:
    [snippet] = [b for b in blocks("python") if "LocalScorer" in b]
    script = tmp_path / "snippet.py"
    script.write_text(snippet.replace(DEFAULT_URL, live_server))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1.0", "ok"]


def test_a_script_without_the_guard_is_told_why_it_fails(tmp_path: Path) -> None:
    [snippet] = [b for b in blocks("python") if "LocalScorer" in b]
    unguarded = "\n".join(
        line.removeprefix("    ")
        for line in snippet.splitlines()
        if "__name__" not in line and "Client(" not in line and "client.score" not in line
    )
    script = tmp_path / "unguarded.py"
    script.write_text(unguarded)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode != 0
    assert 'if __name__ == "__main__"' in done.stderr.splitlines()[-1]


def test_the_sandbox_doc_lists_every_language() -> None:
    """docs/sandbox.md's table has a row per language, with its Debian package."""
    text = (REPO / "docs" / "sandbox.md").read_text()
    for lang in languages.LANGUAGES.values():
        assert f"| `{lang.name}` |" in text, lang.name
        assert f"| `{lang.package}` |" in text, lang.name
