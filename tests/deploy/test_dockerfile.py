"""The Dockerfile, read statically: no Docker daemon runs here, so the images are never
built by these tests. What is checked is what the file promises: multi-stage, a pinned
base, a non-root user, variants by build argument, no remote ADD."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml

from tests.deploy.conftest import ROOT

DOCKERFILE = ROOT / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1]) for text in logical]


def arg_defaults() -> dict[str, str]:
    defaults = {}
    for op, args in instructions():
        if op == "ARG" and "=" in args:
            name, value = args.split("=", 1)
            defaults[name] = value.strip('"')
    return defaults


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for op, args in instructions():
        if op == "FROM":
            result.append([])
        if result:
            result[-1].append((op, args))
    return result


def pinned(image: str) -> bool:
    """A tag naming a version (not latest) or a digest."""
    if "@sha256:" in image:
        return True
    _, _, tag = image.rpartition(":")
    return bool(tag) and "/" not in tag and tag != "latest" and bool(re.search(r"\d", tag))


def test_multi_stage_build_from_a_pinned_base() -> None:
    froms = [args for op, args in instructions() if op == "FROM"]
    assert len(froms) >= 2
    assert all(f.startswith("${BASE_IMAGE}") for f in froms)
    assert pinned(arg_defaults()["BASE_IMAGE"])
    # The runtime stage copies the built environment, not the build tools.
    runtime = stages()[-1]
    assert any(op == "COPY" and args.startswith("--from=build") for op, args in runtime)


def test_runtime_stage_runs_as_a_numeric_non_root_user() -> None:
    users = [args for op, args in stages()[-1] if op == "USER"]
    assert users, "the final stage must set USER"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0  # numeric, so runAsNonRoot can verify it


def test_no_remote_add_and_no_curl_pipe() -> None:
    for op, args in instructions():
        assert op != "ADD", "use COPY; ADD of URLs or archives is not reproducible"
        assert not re.search(r"(curl|wget)[^|]*\|\s*(ba)?sh", args), args


def test_entrypoint_is_the_referee_cli_under_an_init() -> None:
    (entrypoint,) = [args for op, args in instructions() if op == "ENTRYPOINT"]
    assert entrypoint == '["tini", "--", "referee"]'
    (cmd,) = [args for op, args in instructions() if op == "CMD"]
    assert cmd.startswith('["serve"')


def test_sandbox_variant_installs_bubblewrap_and_the_toolchains() -> None:
    packages = set(shlex.split(arg_defaults()["SANDBOX_PACKAGES"]))
    assert {"bubblewrap", "gcc", "g++", "nodejs", "golang-go", "rustc", "sqlite3", "iverilog"} <= (
        packages
    )
    assert any("openjdk" in p or "default-jdk" in p for p in packages)
    (run,) = [args for op, args in stages()[-1] if op == "RUN" and "apt-get" in args]
    assert '"$VARIANT" = "sandbox"' in run and "$SANDBOX_PACKAGES" in run


@pytest.mark.parametrize("service", ["gateway", "worker-sandbox", "worker-gpu"])
def test_compose_builds_every_variant_from_this_file_by_arguments(service: str) -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    build = compose["services"][service]["build"]
    assert build["dockerfile"] == "Dockerfile"
    declared = {args.split("=", 1)[0] for op, args in instructions() if op == "ARG"}
    assert set(build.get("args", {})) <= declared
    base = str(build.get("args", {}).get("BASE_IMAGE", arg_defaults()["BASE_IMAGE"]))
    default = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", base)
    assert pinned(default), default


def test_third_party_images_are_pinned() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert pinned(compose["services"]["redis"]["image"])
    values = yaml.safe_load((ROOT / "helm" / "referee" / "values.yaml").read_text())
    redis = values["redis"]["image"]
    assert pinned(f"{redis['repository']}:{redis['tag']}")
