"""The Helm chart: `helm lint` and `helm template` over the shipped value sets, and the
rendered objects' security properties asserted one by one."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from referee.service.settings import SessionSettings
from tests.deploy.conftest import ROOT

CHART = ROOT / "helm" / "referee"
VALUE_SETS = {
    "default": CHART / "ci" / "default-values.yaml",
    "external-redis": CHART / "ci" / "external-redis-values.yaml",
    "existing-secret": CHART / "ci" / "existing-secret-autoscaling-values.yaml",
    "gpu": ROOT / "examples" / "values-gpu.yaml",
}
Manifest = dict[str, Any]


def run_helm(helm: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm, *args], capture_output=True, text=True, timeout=60, check=False)


@cache
def _render(helm: str, values: Path, extra: tuple[str, ...] = ()) -> tuple[Manifest, ...]:
    done = run_helm(helm, "template", "rel", str(CHART), "-f", str(values), *extra)
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def render(helm: str, name: str, *extra: str) -> tuple[Manifest, ...]:
    return _render(helm, VALUE_SETS[name], tuple(extra))


def values_of(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(VALUE_SETS[name].read_text())
    return data


def of_kind(docs: tuple[Manifest, ...], kind: str) -> list[Manifest]:
    return [d for d in docs if d["kind"] == kind]


def named(docs: tuple[Manifest, ...], kind: str, suffix: str) -> Manifest:
    (found,) = [d for d in of_kind(docs, kind) if d["metadata"]["name"].endswith(suffix)]
    return found


def workloads(docs: tuple[Manifest, ...]) -> Iterator[Manifest]:
    yield from (d for d in docs if d["kind"] in ("Deployment", "StatefulSet"))


def env_of(container: Manifest) -> dict[str, Manifest]:
    return {e["name"]: e for e in container.get("env", [])}


@pytest.mark.parametrize("name", VALUE_SETS)
def test_lint_strict_passes(helm: str, name: str) -> None:
    done = run_helm(helm, "lint", "--strict", str(CHART), "-f", str(VALUE_SETS[name]))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", VALUE_SETS)
def test_every_pod_is_non_root_read_only_and_capability_free(helm: str, name: str) -> None:
    pods = list(workloads(render(helm, name)))
    assert pods
    for workload in pods:
        spec = workload["spec"]["template"]["spec"]
        pod_ctx = spec.get("securityContext", {})
        assert spec.get("automountServiceAccountToken") is False, workload["metadata"]["name"]
        for container in spec["containers"]:
            ctx = container["securityContext"]
            where = f"{workload['metadata']['name']}/{container['name']}"
            assert ctx.get("runAsNonRoot", pod_ctx.get("runAsNonRoot")) is True, where
            assert pod_ctx.get("runAsUser", 1) != 0, where
            assert ctx["readOnlyRootFilesystem"] is True, where
            assert ctx["allowPrivilegeEscalation"] is False, where
            assert ctx["capabilities"] == {"drop": ["ALL"]}, where
            assert not ctx.get("privileged"), where
            # A read-only root needs a writable /tmp.
            mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
            assert "/tmp" in mounts or container["name"] == "redis", where


@pytest.mark.parametrize("name", VALUE_SETS)
def test_only_the_sandbox_pool_relaxes_seccomp(helm: str, name: str) -> None:
    for workload in workloads(render(helm, name)):
        spec = workload["spec"]["template"]["spec"]
        seccomp = spec["securityContext"]["seccompProfile"]["type"]
        container = spec["containers"][0]["securityContext"]
        if workload["metadata"]["name"].endswith("worker-sandbox"):
            # What bubblewrap needs (values.yaml, docs/deployment.md) and nothing more.
            assert seccomp == "Unconfined"
            assert container["appArmorProfile"] == {"type": "Unconfined"}
            assert container["procMount"] == "Unmasked"
            assert spec["hostUsers"] is False  # Kubernetes requires it with Unmasked
            assert "add" not in container["capabilities"]
        else:
            assert seccomp == "RuntimeDefault", workload["metadata"]["name"]
            assert "procMount" not in container
            assert "hostUsers" not in spec


def _egress_rules(policy: Manifest) -> list[Manifest]:
    assert "Egress" in policy["spec"]["policyTypes"]
    rules: list[Manifest] = policy["spec"].get("egress", [])
    return rules


@pytest.mark.parametrize("name", VALUE_SETS)
def test_sandbox_workers_have_no_egress_but_dns_and_redis(helm: str, name: str) -> None:
    docs = render(helm, name)
    policy = named(docs, "NetworkPolicy", "worker-sandbox")
    assert policy["spec"]["podSelector"]["matchLabels"]["referee.dev/pool"] == "sandbox"
    assert "Ingress" in policy["spec"]["policyTypes"]
    assert not policy["spec"].get("ingress")
    redis_port = 6379 if values_of(name).get("redis", {}).get("enabled", True) else 6380
    for rule in _egress_rules(policy):
        ports = {p["port"] for p in rule.get("ports", [])}
        assert rule.get("ports"), f"rule without ports allows every port: {rule}"
        assert ports <= {53, redis_port}, rule
        for peer in rule.get("to", []):
            assert peer.get("ipBlock", {}).get("cidr") not in ("0.0.0.0/0", "::/0"), rule
        if ports == {redis_port}:
            assert rule.get("to"), "the Redis rule must name Redis"


def test_io_pool_may_reach_judges_and_cpu_pool_may_not(helm: str) -> None:
    docs = render(helm, "default")
    assert _egress_rules(named(docs, "NetworkPolicy", "worker-io")) == [{}]
    assert {} not in _egress_rules(named(docs, "NetworkPolicy", "worker-cpu"))


def test_sandbox_egress_cannot_be_switched_on(helm: str) -> None:
    done = run_helm(
        helm, "template", "rel", str(CHART), "-f", str(VALUE_SETS["default"]),
        "--set", "workers.sandbox.networkPolicy.allowEgress=true",
    )  # fmt: skip
    assert done.returncode != 0
    assert "allowEgress" in done.stderr


def test_redis_is_reachable_only_from_referee_pods(helm: str) -> None:
    policy = named(render(helm, "default"), "NetworkPolicy", "referee-redis")
    (rule,) = policy["spec"]["ingress"]
    (peer,) = rule["from"]
    expression = peer["podSelector"]["matchExpressions"][0]
    assert expression["values"] == ["gateway", "worker"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]


@pytest.mark.parametrize(
    ("name", "pools"),
    [
        ("default", {"cpu", "sandbox", "io"}),
        ("external-redis", {"cpu", "sandbox", "io"}),
        ("gpu", {"cpu", "sandbox", "io", "gpu"}),
    ],
)
def test_one_worker_deployment_per_enabled_pool(helm: str, name: str, pools: set[str]) -> None:
    deployments = of_kind(render(helm, name), "Deployment")
    workers = {
        d["spec"]["template"]["metadata"]["labels"]["referee.dev/pool"]: d
        for d in deployments
        if d["metadata"]["labels"].get("app.kubernetes.io/component") == "worker"
    }
    assert set(workers) == pools
    for pool, deployment in workers.items():
        args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[:3] == ["worker", "--pool", pool]


def test_gpu_workers_request_gpus_on_gpu_nodes(helm: str) -> None:
    docs = render(helm, "gpu")
    spec = named(docs, "Deployment", "worker-gpu")["spec"]["template"]["spec"]
    resources = spec["containers"][0]["resources"]
    assert resources["limits"]["nvidia.com/gpu"] == 1
    assert resources["requests"]["nvidia.com/gpu"] == 1
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec[
        "tolerations"
    ]
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    models = next(v for v in spec["volumes"] if v["name"] == "models")
    assert models["persistentVolumeClaim"] == {"claimName": "reward-models", "readOnly": True}
    mount = next(m for m in spec["containers"][0]["volumeMounts"] if m["name"] == "models")
    assert mount["readOnly"] is True
    catalog = json.loads(env_of(spec["containers"][0])["REFEREE_RM_MODELS"]["value"])
    assert catalog["skywork-rm-8b"]["path"].startswith("/models/")
    # No other pool asks for a GPU.
    for deployment in of_kind(docs, "Deployment"):
        if not deployment["metadata"]["name"].endswith("worker-gpu"):
            text = json.dumps(deployment["spec"]["template"]["spec"]["containers"])
            assert "nvidia.com/gpu" not in text


def test_bundled_redis_keeps_an_append_only_file(helm: str) -> None:
    docs = render(helm, "default")
    config = named(docs, "ConfigMap", "referee-redis")["data"]["redis.conf"].splitlines()
    assert "appendonly yes" in config
    assert "appendfsync everysec" in config
    assert "maxmemory-policy noeviction" in config
    redis = named(docs, "StatefulSet", "referee-redis")
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    container = redis["spec"]["template"]["spec"]["containers"][0]
    assert "/data" in {m["mountPath"] for m in container["volumeMounts"]}
    assert "--requirepass" in container["command"][-1]


def test_external_redis_replaces_the_statefulset(helm: str) -> None:
    docs = render(helm, "external-redis")
    assert not of_kind(docs, "StatefulSet")
    gateway = named(docs, "Deployment", "gateway")["spec"]["template"]["spec"]["containers"][0]
    broker = env_of(gateway)["REFEREE_BROKER_URL"]
    assert broker["valueFrom"]["secretKeyRef"]["key"] == "REFEREE_BROKER_URL"
    policy = named(docs, "NetworkPolicy", "worker-sandbox")
    cidrs = [p["ipBlock"]["cidr"] for r in _egress_rules(policy) for p in r.get("to", [])
             if "ipBlock" in p]  # fmt: skip
    assert cidrs == ["10.20.0.0/24"]


def _secret_values(values: dict[str, Any]) -> list[str]:
    secrets = values.get("secrets", {})
    found = [*secrets.get("apiKeys", []), *secrets.get("judgeKeys", {}).values()]
    found += [secrets[k] for k in ("redisPassword",) if secrets.get(k)]
    if url := values.get("redis", {}).get("external", {}).get("url"):
        found.append(url)
    return found


@pytest.mark.parametrize("name", VALUE_SETS)
def test_credentials_live_only_in_the_secret(helm: str, name: str) -> None:
    docs = render(helm, name)
    secret_values = _secret_values(values_of(name))
    for doc in docs:
        if doc["kind"] == "Secret":
            continue
        text = json.dumps(doc)
        for value in secret_values:
            assert value not in text, f"{value!r} leaks into {doc['kind']} {doc['metadata']}"
    secrets = of_kind(docs, "Secret")
    if values_of(name)["secrets"].get("existingSecret"):
        assert not secrets
    else:
        (secret,) = secrets
        assert set(secret_values) <= set(secret["stringData"].values()) | set(
            ",".join(values_of(name)["secrets"]["apiKeys"]).split(",")
        )


@pytest.mark.parametrize("name", ["external-redis", "existing-secret"])
def test_judge_keys_reach_only_the_io_pool(helm: str, name: str) -> None:
    docs = render(helm, name)
    judge_env = {p["api_key_env"] for p in values_of(name)["judge"]["profiles"].values()}
    secret_name = values_of(name)["secrets"].get("existingSecret") or "rel-referee-secrets"
    for workload in workloads(docs):
        container = workload["spec"]["template"]["spec"]["containers"][0]
        env = env_of(container)
        is_io = workload["metadata"]["name"].endswith("worker-io")
        for var in judge_env:
            assert (var in env) == is_io, (workload["metadata"]["name"], var)
            if is_io:
                assert env[var]["valueFrom"]["secretKeyRef"] == {"name": secret_name, "key": var}
        # Client API keys are the gateway's alone.
        is_gateway = workload["metadata"]["name"].endswith("gateway")
        assert ("REFEREE_API_KEYS" in env) == is_gateway


def test_gateway_has_service_autoscaler_disruption_budget_and_probes(helm: str) -> None:
    docs = render(helm, "default")
    deployment = named(docs, "Deployment", "gateway")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:3] == ["serve", "--host", "0.0.0.0"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert "replicas" not in deployment["spec"]  # the HPA owns it
    service = named(docs, "Service", "gateway")
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    hpa = named(docs, "HorizontalPodAutoscaler", "gateway")
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    pdb = named(docs, "PodDisruptionBudget", "gateway")
    assert pdb["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]


@pytest.mark.parametrize("name", ["existing-secret", "gpu"])
def test_autoscaled_pools_scale_on_their_own_queue_depth(helm: str, name: str) -> None:
    docs = render(helm, name)
    workers = values_of(name)["workers"]
    scaled = {p for p, w in workers.items() if w.get("autoscaling", {}).get("enabled")}
    assert scaled
    for pool in scaled:
        hpa = named(docs, "HorizontalPodAutoscaler", f"worker-{pool}")
        external = [m for m in hpa["spec"]["metrics"] if m["type"] == "External"]
        (metric,) = external
        assert metric["external"]["metric"]["selector"]["matchLabels"] == {"pool": pool}
        assert metric["external"]["metric"]["name"] == "referee_pool_queued_tasks"
        deployment = named(docs, "Deployment", f"worker-{pool}")
        assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
        assert "replicas" not in deployment["spec"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["--set", "secrets.apiKeys=null"], "secrets.apiKeys is empty"),
        (["--set", "secrets.redisPassword="], "secrets.redisPassword is empty"),
        (["--set", "redis.enabled=false"], "redis.external.url"),
        (["--set", "podSecurityContext.runAsNonRoot=false"], "runAsNonRoot"),
        (["--set", "workers.gpu.gpus=0"], "gpus"),
        (["--set", "workers.sandbox.bwrap.procMount=Anything"], "procMount"),
        (["--set", "unknownKey=1"], "unknownKey"),
    ],
)
def test_bad_values_fail_at_render_time(helm: str, overrides: list[str], message: str) -> None:
    done = run_helm(
        helm, "template", "rel", str(CHART), "-f", str(VALUE_SETS["default"]), *overrides
    )
    assert done.returncode != 0
    assert message in done.stderr


def test_every_values_key_is_documented() -> None:
    """Each key in values.yaml has a comment on the line before it. Pools share their keys:
    one documented under workers.cpu counts for the same key under the other pools. The
    insides of values passed to Kubernetes verbatim (resources, selectors...) are not
    repeated."""
    verbatim = {"resources", "tolerations", "podSecurityContext", "seccompProfile",
                "appArmorProfile", "namespaceSelector", "podSelector"}  # fmt: skip
    documented: set[tuple[str, ...]] = set()
    undocumented = []
    stack: list[tuple[int, str]] = []
    previous = ""
    for number, line in enumerate((CHART / "values.yaml").read_text().splitlines(), 1):
        stripped = line.strip()
        match = re.match(r"^( *)([A-Za-z][\w.-]*):", line)
        if match:
            indent = len(match.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, match.group(2)))
            path = tuple(key for _, key in stack)
            shared = ("workers", "cpu", *path[2:]) if path[:1] == ("workers",) else path
            if previous.startswith("#"):
                documented.update({path, shared})
            elif verbatim & set(path[:-1]):
                pass
            elif shared not in documented and path != ("workers", "cpu"):
                undocumented.append(f"line {number}: {'.'.join(path)}")
        if stripped:
            previous = stripped
    assert not undocumented, undocumented


def test_session_settings_reach_the_server_as_it_reads_them(helm: str) -> None:
    docs = render(helm, "default", "--set", "config.sessions.max_open=12")
    config = named(docs, "ConfigMap", "-config")["data"]
    settings = SessionSettings.model_validate_json(config["REFEREE_SESSIONS"])
    assert (settings.max_open, settings.max_per_key) == (12, 32)
