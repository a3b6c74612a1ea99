"""Every Triton kernel compiles with Triton's real compiler for sm_80 and sm_90, on CPU.

The interpreter (``TRITON_INTERPRET=1``, set by this folder's conftest for the numerics
tests) accepts kernels the compiler rejects, so this runs `gpu_rm.kernels.targets` in a
fresh process with the variable removed.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from referee.gpu_rm.kernels.targets import builds


def test_every_kernel_compiles_to_cubin_for_sm80_and_sm90() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "referee.gpu_rm.kernels.targets"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "compiled" in done.stdout


def test_the_declared_builds_name_every_kernel_argument() -> None:
    """A build's signature must list exactly the kernel's parameters, so a parameter added
    to a kernel without its launch type fails here rather than on a GPU."""
    for build in builds():
        params = list(build.signature) + list(build.constexprs)
        assert sorted(params) == sorted(build.fn.arg_names), build.label()
