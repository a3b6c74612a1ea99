"""Token-statistics benchmark: referee's ``logprobs`` path against the plain Transformers
way (full logits, ``log_softmax``, gather), in one run.

Throughput (``--part throughput``): ``--batch`` continuations (32) in GRPO groups of 8
sharing a prompt of 256-1,024 tokens, responses log-normal (median 200, capped at
1,024), on a random Llama-like causal LM (``--hidden``, ``--layers``, ``--vocab``).
Per continuation token: log-probability and entropy. Paths, median of ``--repeats``
after a warm-up, interleaved:

- plain: padded micro-batches of one group, ``model(...).logits`` (every position, every
  vocabulary row, float32), ``log_softmax``, gather, entropy;
- plain+keep: the same with the logits of the continuation positions only (hidden states
  gathered first): the strongest plain baseline;
- referee: `LogprobsVerifier.ascore` per group, all concurrently (batcher, packing, each
  prompt once, statistics in vocabulary chunks).

Memory (``--part memory``): log-probabilities and entropies of ``--tokens`` (16,384)
positions over a ``--memory-vocab`` (151,936) vocabulary from their final hidden states,
each way in a fresh process, its peak resident memory above the inputs' (``VmHWM``):
the full-logits way (a ``[tokens x vocab]`` float32 tensor, then ``log_softmax``) and
referee's chunked statistics (`gpu_rm.kernels.token_stats`).

LM head (``--part head``): the output-layer part alone, on ``--head-tokens`` final hidden
states (``--hidden``, ``--vocab``, ``--dtype``): referee's statistics (`token_stats`: the
fused Triton kernel on CUDA, the chunked reference elsewhere) and the plain way (logits,
``log_softmax``, gather, entropy), each against the rate of one plain ``hidden @ W.T``
of the same shape measured in the same run: the fraction of the matmul rate the
statistics reach (``2 x tokens x hidden x vocab`` FLOPs each).

    python bench/logprobs.py                 # throughput and memory, CPU defaults
    python bench/logprobs.py --part throughput --device cuda --dtype bfloat16 \
        --hidden 896 --layers 24 --vocab 151936   # a 0.5B-shaped model on a GPU
    python bench/logprobs.py --part head --device cuda --dtype bfloat16 \
        --hidden 896 --vocab 151936 --head-tokens 16384   # the LM-head fraction on a GPU
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import transformers  # noqa: E402

from bench.grm import build_model  # noqa: E402
from referee.gpu_rm.kernels import TokenHead, token_stats  # noqa: E402
from referee.gpu_rm.registry import ModelRegistry  # noqa: E402
from referee.gpu_rm.settings import ModelSpec, RMSettings  # noqa: E402
from referee.verifiers import Item  # noqa: E402
from referee.verifiers.logprobs import LogprobsVerifier  # noqa: E402


def workload(args: argparse.Namespace, vocab: int) -> list[list[tuple[list[int], list[int]]]]:
    """Groups of (prompt ids, continuation ids)."""
    rng = random.Random(args.seed)
    groups = []
    for _ in range(args.batch // args.group):
        prompt = [rng.randrange(10, vocab) for _ in range(rng.randint(256, 1024))]
        group = []
        for _ in range(args.group):
            n = min(max(int(rng.lognormvariate(math.log(200), 0.8)), 2), 1024)
            group.append((prompt, [rng.randrange(10, vocab) for _ in range(n)]))
        groups.append(group)
    return groups


def run_plain(model: Any, groups: list[list[tuple[list[int], list[int]]]], keep: bool) -> float:
    start = time.perf_counter()
    for group in groups:
        sequences = [p + c for p, c in group]
        width = max(map(len, sequences))
        ids = torch.zeros(len(sequences), width, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = torch.tensor(seq)
            mask[row, : len(seq)] = 1
        rows = [
            (r, t) for r, (p, c) in enumerate(group) for t in range(len(p) - 1, len(p) + len(c) - 1)
        ]
        index = ([r for r, _ in rows], [t for _, t in rows])
        targets = torch.tensor([sequences[r][t + 1] for r, t in rows])
        device = next(model.parameters()).device
        ids, mask, targets = ids.to(device), mask.to(device), targets.to(device)
        with torch.inference_mode():
            if keep:
                hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
                logprobs = torch.log_softmax(model.lm_head(hidden[index]).float(), dim=-1)
            else:
                logits = model(input_ids=ids, attention_mask=mask).logits.float()
                logprobs = torch.log_softmax(logits, dim=-1)[index]
            logprobs.gather(1, targets[:, None])
            (logprobs.exp() * logprobs).sum(-1)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start


def run_referee(
    verifier: LogprobsVerifier, groups: list[list[tuple[list[int], list[int]]]]
) -> float:
    requests = [
        [Item(verifier="logprobs", response="", params={"model": "bench", "prompt_ids": p,
                                                          "continuation_ids": c}) for p, c in g]
        for g in groups
    ]  # fmt: skip

    async def all_requests() -> None:
        batches = await asyncio.gather(*(verifier.ascore(r) for r in requests))
        for result in (r for batch in batches for r in batch):
            assert result.status.value == "ok", result.error

    start = time.perf_counter()
    asyncio.run(all_requests())
    return time.perf_counter() - start


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        build_model(path, args)
        spec = ModelSpec(path=str(path), head="lm", dtype=args.dtype, device=args.device,
                         max_length=16384)  # fmt: skip
        registry = ModelRegistry(RMSettings(models={"bench": spec}, token_budget=65536,
                                            max_wait_ms=20))  # fmt: skip
        verifier = LogprobsVerifier(registry)
        registry.get("bench")
        dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[args.dtype]
        model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
        model.to(args.device)
        groups = workload(args, int(model.config.vocab_size))
        tokens = sum(len(c) for g in groups for _, c in g)
        paths: dict[str, Callable[[], float]] = {
            "plain": lambda: run_plain(model, groups, keep=False),
            "plain+keep": lambda: run_plain(model, groups, keep=True),
            "referee": lambda: run_referee(verifier, groups),
        }
        times: dict[str, list[float]] = {name: [] for name in paths}
        for run in paths.values():
            run()
        for _ in range(args.repeats):
            for name, run in paths.items():
                times[name].append(run())
        registry.close()
    rows = [{"name": n, "median_s": statistics.median(t), "runs_s": t,
             "tokens_per_s": tokens / statistics.median(t)} for n, t in times.items()]  # fmt: skip
    return {"part": "throughput", "continuation_tokens": tokens, "rows": rows}


MEMORY_CHILD = """
import sys, torch
from referee.gpu_rm.kernels import TokenHead, token_stats
way, tokens, vocab, hidden_size = sys.argv[1], *map(int, sys.argv[2:5])
torch.manual_seed(0)
hidden = torch.randn(tokens, hidden_size)
head = TokenHead(torch.ones(hidden_size), 1e-6, torch.randn(vocab, hidden_size) * 0.05)
targets = torch.randint(0, vocab, (tokens,))
rows = torch.arange(tokens)
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
base = hwm()
if way == "full":
    normed = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + 1e-6)
    logprobs = torch.log_softmax(normed @ head.lm_weight.T, dim=-1)
    picked = logprobs.gather(1, targets[:, None])
else:
    stats = token_stats(hidden, rows, targets, head)
print(hwm() - base)
"""


def peak_bytes(way: str, tokens: int, vocab: int, hidden: int) -> int | str:
    done = subprocess.run([sys.executable, "-c", MEMORY_CHILD, way, str(tokens), str(vocab),
                           str(hidden)], capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1:]}"
    return int(done.stdout.strip())


def memory(args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    for tokens in (args.tokens // 4, args.tokens // 2, args.tokens):
        for way in ("full", "referee"):
            peak = peak_bytes(way, tokens, args.memory_vocab, args.memory_hidden)
            rows.append({"way": way, "tokens": tokens, "peak_bytes": peak})
    return {"part": "memory", "vocab": args.memory_vocab, "rows": rows}


def head_part(args: argparse.Namespace) -> dict[str, Any]:
    """The output layer's statistics alone, timed against a plain matmul of its shape."""
    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    gen = torch.Generator().manual_seed(args.seed)
    tokens, size, vocab = args.head_tokens, args.hidden, args.vocab
    hidden = torch.randn(tokens, size, generator=gen).to(device, dtype)
    weight = (torch.randn(vocab, size, generator=gen) * size**-0.5).to(device, dtype)
    head = TokenHead(torch.ones(size, device=device, dtype=dtype), 1e-6, weight)
    rows = torch.arange(tokens, device=device)
    targets = torch.randint(0, vocab, (tokens,), generator=gen).to(device)

    def plain() -> None:
        normed = hidden.float() * torch.rsqrt(hidden.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        logprobs = torch.log_softmax((normed.to(dtype) @ weight.T).float(), dim=-1)
        logprobs.gather(1, targets[:, None])
        -(logprobs.exp() * logprobs).sum(-1)

    paths: dict[str, Callable[[], Any]] = {
        "matmul": lambda: hidden @ weight.T,
        "plain": plain,
        "referee": lambda: token_stats(hidden, rows, targets, head),
    }
    times: dict[str, list[float]] = {name: [] for name in paths}
    with torch.inference_mode():
        for run in paths.values():
            run()
        for _ in range(args.repeats):
            for name, run in paths.items():
                _sync(device)
                start = time.perf_counter()
                run()
                _sync(device)
                times[name].append(time.perf_counter() - start)
    flops = 2 * tokens * size * vocab
    rows_out = [
        {"name": n, "median_s": statistics.median(t), "runs_s": t,
         "tflops": flops / statistics.median(t) / 1e12}
        for n, t in times.items()
    ]  # fmt: skip
    shape = {"tokens": tokens, "hidden": size, "vocab": vocab, "dtype": args.dtype}
    return {"part": "head", **shape, "rows": rows_out}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def show(result: dict[str, Any]) -> None:
    if result["part"] == "head":
        print(f"\n### LM head: {result['tokens']} positions x vocabulary {result['vocab']}, "
              f"hidden {result['hidden']}, {result['dtype']}")  # fmt: skip
        print("| path | median s | TFLOP/s |\n| --- | ---: | ---: |")
        for r in result["rows"]:
            print(f"| {r['name']} | {r['median_s']:.4f} | {r['tflops']:.2f} |")
        by = {r["name"]: r["tflops"] for r in result["rows"]}
        print(f"referee / matmul rate: {by['referee'] / by['matmul']:.0%}; "
              f"referee / plain: {by['referee'] / by['plain']:.2f}x")  # fmt: skip
        return
    if result["part"] == "throughput":
        print(f"\n### throughput: {result['continuation_tokens']} continuation tokens")
        print("| path | median s | tokens/s |\n| --- | ---: | ---: |")
        for r in result["rows"]:
            print(f"| {r['name']} | {r['median_s']:.2f} | {r['tokens_per_s']:.0f} |")
        by = {r["name"]: r["tokens_per_s"] for r in result["rows"]}
        print(f"referee / plain: {by['referee'] / by['plain']:.2f}x; "
              f"referee / plain+keep: {by['referee'] / by['plain+keep']:.2f}x")  # fmt: skip
        return
    print(f"\n### peak memory above the inputs, vocabulary {result['vocab']}")
    print("| tokens | full logits | referee | ratio |\n| ---: | ---: | ---: | ---: |")
    by: dict[int, dict[str, Any]] = {}
    for r in result["rows"]:
        by.setdefault(r["tokens"], {})[r["way"]] = r["peak_bytes"]
    for tokens, ways in by.items():
        full, ours = ways["full"], ways["referee"]
        ratio = f"{ours / full:.3f}" if isinstance(full, int) and isinstance(ours, int) else "-"
        show_bytes = lambda v: f"{v / 2**30:.2f} GiB" if isinstance(v, int) else v  # noqa: E731
        print(f"| {tokens} | {show_bytes(full)} | {show_bytes(ours)} | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add: Callable[..., Any] = parser.add_argument
    add("--part", choices=["throughput", "memory", "head", "both"], default="both")
    add("--batch", type=int, default=32)
    add("--group", type=int, default=8)
    add("--hidden", type=int, default=256)
    add("--layers", type=int, default=4)
    add("--vocab", type=int, default=32000)
    add("--repeats", type=int, default=5)
    add("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    add("--dtype", choices=["float32", "bfloat16"], default="float32")
    add("--seed", type=int, default=0)
    add("--tokens", type=int, default=16384)
    add("--memory-vocab", type=int, default=151936)
    add("--memory-hidden", type=int, default=64)
    add("--head-tokens", type=int, default=2048)
    args = parser.parse_args()
    results = []
    if args.part in ("throughput", "both"):
        results.append(throughput(args))
        show(results[-1])
    if args.part in ("memory", "both"):
        results.append(memory(args))
        show(results[-1])
    if args.part == "head":
        results.append(head_part(args))
        show(results[-1])
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    machine = {"machine": platform.machine(), "processor": platform.processor(),
               "threads": torch.get_num_threads(), "args": vars(args)}  # fmt: skip
    (out / "logprobs.json").write_text(json.dumps({**machine, "results": results}, indent=2))


if __name__ == "__main__":
    main()
