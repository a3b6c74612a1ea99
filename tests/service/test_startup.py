"""Start-up cost: the CLI and the gateway import no library that only pool workers use
(NLTK alone costs 1-2 s of every `referee` command), while the workers' fork server
imports those libraries ahead, so no item waits for them."""

from __future__ import annotations

import importlib
import subprocess
import sys

from referee.verifiers.preload import PRELOADED
from tests.conftest import REPO

PROBE = (
    "import sys\n"
    "import referee.service.cli, referee.service.http.app\n"
    "from referee.verifiers.builtin import default_registry\n"
    "from referee.verifiers.preload import PRELOADED\n"
    "default_registry()\n"
    "print(sorted(m for m in PRELOADED if m in sys.modules))\n"
)


def test_the_cli_and_the_gateway_start_without_the_workers_libraries() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_the_preloaded_modules_exist() -> None:
    assert "nltk" in PRELOADED
    for name in PRELOADED:
        importlib.import_module(name)
