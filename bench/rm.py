"""Reward-model serving benchmark: referee's ``rm`` path against two baselines, one run.

Model: a randomly initialised Llama-like reward model built from a config (``--hidden``,
``--layers``, ``--heads``, ``--kv-heads``, ``--mlp``) and a word-level tokenizer, saved to
a temporary directory: the numbers measure serving, not the weights. ``--preset 1b`` is
the issue's ~1B model (hidden 2048, 16 layers, 32/8 heads, MLP 8192).

Workloads (``--workload grpo|long|both``), all requests at once, one request per group:
- grpo: ``--groups`` (64) GRPO groups of 8; prompts 256-2,048 tokens, responses
  log-normal, median 200, capped at 1,024;
- long: 16 groups of 8; prompts 1,024-4,096, responses median 1,500, capped at 8,192.

Paths, each timed separately after a warm-up:
- openrlhf: OpenRLHF's example server loop: one request at a time, chunks of 4 padded to
  their longest, the plain ``*ForSequenceClassification`` forward (sdpa);
- sorted: every item sorted by length into padded batches of at most ``--budget`` tokens
  (width x rows), the plain forward;
- referee: `RewardModelVerifier.ascore` per request, all concurrently: the dynamic
  batcher, packed rows, each group's prompt computed once, the model's attention mode.

Prints items/s, item tokens/s, computed tokens, p50/p99 latency, and the fraction of the
measured matmul rate (``--device``/``--dtype``, measured here) reached on computed tokens
(model FLOPs: 2 x non-embedding parameters per token plus attention over real pairs).
Writes ``bench/results/rm-<workload>.json``.

    python bench/rm.py --device cuda --dtype bfloat16 --preset 1b --workload both
    python bench/rm.py --groups 12        # a quick CPU run (hidden 256, 4 layers)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import random
import statistics
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
from tokenizers import Tokenizer, models, pre_tokenizers, processors  # noqa: E402

from referee.gpu_rm.packing import TokenSequence, pack  # noqa: E402
from referee.gpu_rm.registry import ModelRegistry  # noqa: E402
from referee.gpu_rm.settings import ModelSpec, RMSettings  # noqa: E402
from referee.verifiers import Item  # noqa: E402
from referee.verifiers.reward_model import RewardModelVerifier  # noqa: E402

WORDS = [f"w{i}" for i in range(4000)]
TEMPLATE = "{{ bos_token }}{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {{ eos_token }} {% endfor %}"  # noqa: E501
PRESETS = {"1b": {"hidden": 2048, "layers": 16, "heads": 32, "kv_heads": 8, "mlp": 8192}}
WORKLOADS = {  # groups, prompt range, response median, response cap
    "grpo": (64, (256, 2048), 200, 1024),
    "long": (16, (1024, 4096), 1500, 8192),
}
Requests = list[list[Item]]


def build_model(path: Path, args: argparse.Namespace) -> int:
    """A random Llama-like reward model and a tokenizer at ``path``; returns the number of
    non-embedding parameters."""
    vocab = {
        t: i for i, t in enumerate(["<pad>", "<s>", "</s>", "<unk>", "user", "assistant", ":"])
    }
    vocab.update({w: len(vocab) + i for i, w in enumerate(WORDS)})
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing("<s> $A", special_tokens=[("<s>", 1)])
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
        unk_token="<unk>",
    )  # fmt: skip
    tok.chat_template = TEMPLATE
    tok.save_pretrained(path)
    config = transformers.LlamaConfig(
        vocab_size=len(vocab), hidden_size=args.hidden, intermediate_size=args.mlp,
        num_hidden_layers=args.layers, num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads, max_position_embeddings=16384,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, num_labels=1,
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.LlamaForSequenceClassification(config)
    model.save_pretrained(path)
    embed = model.model.embed_tokens.weight.numel() + model.score.weight.numel()
    return sum(p.numel() for p in model.parameters()) - embed


def workload(name: str, groups: int | None, seed: int) -> Requests:
    """One request per group: 8 items sharing a prompt."""
    count, (lo, hi), median, cap = WORKLOADS[name]
    rng = random.Random(seed)
    requests = []
    for g in range(groups or count):
        prompt = " ".join(rng.choices(WORDS, k=rng.randint(lo, hi) - 8))
        items = []
        for _ in range(8):
            n = min(max(int(rng.lognormvariate(math.log(median), 0.8)), 1), cap)
            response = " ".join(rng.choices(WORDS, k=n))
            items.append(Item(verifier="rm", prompt=prompt, response=response, group=f"g{g}"))
        requests.append(items)
    return requests


def token_ids(tok: Any, requests: Requests) -> list[list[list[int]]]:
    """Every item's ids (prompt + response through the chat template), per request."""
    out = []
    for request in requests:
        texts = [
            tok.apply_chat_template(
                [{"role": "user", "content": i.prompt_text()},
                 {"role": "assistant", "content": i.response_text()}], tokenize=False,
            )
            for i in request
        ]  # fmt: skip
        out.append([tok(t, add_special_tokens=False)["input_ids"] for t in texts])
    return out


class Plain:
    """The unmodified Transformers model, for both baselines."""

    def __init__(self, path: Path, device: str, dtype: torch.dtype) -> None:
        self.model = (
            transformers.AutoModelForSequenceClassification.from_pretrained(
                path, dtype=dtype, attn_implementation="sdpa"
            )
            .to(device)
            .eval()
        )
        self.device = device

    def forward(self, batch: list[list[int]]) -> tuple[int, int]:
        """One padded forward; returns the positions and causal query-key pairs computed."""
        width = max(len(s) for s in batch)
        ids = torch.zeros(len(batch), width, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, seq in enumerate(batch):
            ids[row, : len(seq)] = torch.tensor(seq)
            mask[row, : len(seq)] = 1
        with torch.inference_mode():
            self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device))
        return ids.numel(), len(batch) * width * (width + 1) // 2


def run_openrlhf(plain: Plain, ids: list[list[list[int]]], chunk: int) -> dict[str, Any]:
    latencies, computed, pairs = [], 0, 0
    start = time.perf_counter()
    for request in ids:  # one request at a time, as the example server does
        for lo in range(0, len(request), chunk):
            positions, attended = plain.forward(request[lo : lo + chunk])
            computed, pairs = computed + positions, pairs + attended
        _sync()
        latencies.append(time.perf_counter() - start)
    return _row("openrlhf (chunks of 4)", start, latencies, ids, computed, pairs)


def run_sorted(plain: Plain, ids: list[list[list[int]]], budget: int) -> dict[str, Any]:
    items = sorted((seq for request in ids for seq in request), key=len)
    computed, pairs, batches, batch = 0, 0, [], []
    for seq in items:
        if batch and len(seq) * (len(batch) + 1) > budget:
            batches.append(batch)
            batch = []
        batch.append(seq)
    batches.append(batch)
    start = time.perf_counter()
    for batch in batches:
        positions, attended = plain.forward(batch)
        computed, pairs = computed + positions, pairs + attended
    _sync()
    wall = time.perf_counter() - start
    name = f"sorted padded (<= {budget} tokens)"
    return _row(name, start, [wall] * len(ids), ids, computed, pairs)


def run_referee(path: Path, requests: Requests, args: argparse.Namespace) -> dict[str, Any]:
    spec = ModelSpec(path=str(path), dtype=args.dtype, device=args.device, attention=args.attention)
    registry = ModelRegistry(RMSettings(models={"bench": spec}, token_budget=args.budget))
    verifier = RewardModelVerifier(registry)
    served = registry.get("bench")  # load and warm up outside the timed region
    latencies: list[float] = []

    async def one(request: list[Item], start: float) -> None:
        results = await verifier.ascore(request)
        assert all(r.status.value == "ok" for r in results), results[0].error
        latencies.append(time.perf_counter() - start)

    async def all_requests(batch: Requests) -> float:
        start = time.perf_counter()
        await asyncio.gather(*(one(r, start) for r in batch))
        return start

    asyncio.run(all_requests(requests[:2]))  # warm-up: compile what compiles
    latencies.clear()
    before = _snapshot(served.batcher.stats)
    start = asyncio.run(all_requests(requests))
    stats = _delta(served.batcher.stats, before)
    mode = served.model.mode
    registry.close()
    pairs = packed_pairs(token_ids(
        transformers.PreTrainedTokenizerFast.from_pretrained(path), requests
    ))  # fmt: skip
    row = _row(f"referee ({mode})", start, latencies, None, stats["computed_tokens"], pairs)
    row.update(items=stats["items"], item_tokens=stats["logical_tokens"], batches=stats["batches"])
    row["forward_s"] = stats["forward_s"]
    row["items_per_s"] = row["items"] / row["wall_s"]
    row["item_tokens_per_s"] = row["item_tokens"] / row["wall_s"]
    return row


def _snapshot(stats: Any) -> dict[str, float]:
    return {k: float(getattr(stats, k)) for k in ("items", "batches", "computed_tokens",
                                                    "logical_tokens", "forward_s")}  # fmt: skip


def _delta(stats: Any, before: dict[str, float]) -> dict[str, float]:
    return {k: float(getattr(stats, k)) - v for k, v in before.items()}


def _row(
    name: str, start: float, latencies: list[float], ids: Any, computed: float, pairs: int
) -> dict[str, Any]:
    wall = time.perf_counter() - start
    lat = sorted(latencies)
    row: dict[str, Any] = {
        "name": name,
        "wall_s": wall,
        "computed_tokens": int(computed),
        "attended_pairs": pairs,
    }
    if ids is not None:
        items = sum(len(r) for r in ids)
        tokens = sum(len(s) for r in ids for s in r)
        row.update(items=items, item_tokens=tokens, items_per_s=items / wall,
                   item_tokens_per_s=tokens / wall)  # fmt: skip
    row.update(p50_s=statistics.median(lat), p99_s=lat[min(len(lat) - 1, int(0.99 * len(lat)))])
    return row


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def matmul_rate(device: str, dtype: torch.dtype) -> float:
    """Measured dense matmul FLOP/s on ``device`` in ``dtype`` (median of 5)."""
    n = 8192 if device == "cuda" else 1024
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    times = []
    for _ in range(6):
        _sync()
        t = time.perf_counter()
        a @ b
        _sync()
        times.append(time.perf_counter() - t)
    return 2 * n**3 / statistics.median(times[1:])


def model_flops(params: int, layers: int, hidden: int, computed: int, pairs: int) -> float:
    """Forward FLOPs: the matmuls of every computed token plus attention over ``pairs``."""
    return 2.0 * params * computed + 4.0 * layers * hidden * pairs


def packed_pairs(ids: list[list[list[int]]]) -> int:
    """Query-key pairs a packed row computes: a shared prompt's causal pairs once, and
    each suffix's pairs with its prompt and, causally, itself."""
    total = 0
    for request in ids:
        layout = pack([TokenSequence(seq, "group") for seq in request])
        for unit in layout.units:
            p = unit.prefix[1] - unit.prefix[0]
            total += p * (p + 1) // 2
            total += sum((e - b) * p + (e - b) * (e - b + 1) // 2 for b, e in unit.suffixes)
    return total


def bench(name: str, args: argparse.Namespace, path: Path, params: int) -> dict[str, Any]:
    requests = workload(name, args.groups if name == "grpo" else None, args.seed)
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(path)
    ids = token_ids(tok, requests)
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[args.dtype]
    plain = Plain(path, args.device, dtype)
    plain.forward(ids[0][:2])  # warm-up
    rows = [run_openrlhf(plain, ids, args.chunk), run_sorted(plain, ids, args.budget)]
    del plain
    rows.append(run_referee(path, requests, args))
    rate = matmul_rate(args.device, dtype)
    for row in rows:
        flops = model_flops(
            params, args.layers, args.hidden, row["computed_tokens"], row["attended_pairs"]
        )
        row["matmul_fraction"] = flops / row["wall_s"] / rate
    return {"workload": name, "matmul_tflops": rate / 1e12, "rows": rows}


def show(result: dict[str, Any]) -> None:
    rate = result["matmul_tflops"]
    print(f"\n### {result['workload']} (measured matmul rate {rate:.1f} TFLOP/s)")
    print("| path | items/s | item tok/s | computed tokens | p50 s | p99 s | matmul rate |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in result["rows"]:
        print(f"| {r['name']} | {r['items_per_s']:.1f} | {r['item_tokens_per_s']:.0f} | "
              f"{r['computed_tokens']} | {r['p50_s']:.2f} | {r['p99_s']:.2f} | "
              f"{r['matmul_fraction']:.0%} |")  # fmt: skip
    base = {r["name"].split(" ")[0]: r["items_per_s"] for r in result["rows"]}
    ours = result["rows"][-1]
    print(f"referee / sorted: {ours['items_per_s'] / base['sorted']:.2f}x; "
          f"referee / openrlhf: {ours['items_per_s'] / base['openrlhf']:.2f}x; "
          f"wall / forward sum: {ours['wall_s'] / max(ours['forward_s'], 1e-9):.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add: Callable[..., Any] = parser.add_argument
    add("--workload", choices=["grpo", "long", "both"], default="grpo")
    add("--groups", type=int, default=None, help="grpo groups (default 64)")
    add("--preset", choices=sorted(PRESETS), default=None)
    add("--hidden", type=int, default=256)
    add("--layers", type=int, default=4)
    add("--heads", type=int, default=4)
    add("--kv-heads", type=int, default=2)
    add("--mlp", type=int, default=1024)
    add("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    add("--dtype", choices=["float32", "bfloat16"], default=None)
    add("--attention", choices=["auto", "flex", "segments", "padded"], default="auto")
    add("--chunk", type=int, default=4)
    add("--budget", type=int, default=16384)
    add("--seed", type=int, default=0)
    args = parser.parse_args()
    for key, value in PRESETS.get(args.preset or "", {}).items():
        setattr(args, key, value)
    args.dtype = args.dtype or ("bfloat16" if args.device == "cuda" else "float32")
    transformers.utils.logging.disable_progress_bar()
    names = ["grpo", "long"] if args.workload == "both" else [args.workload]
    machine = {"platform": platform.platform(), "torch": torch.__version__,
               "transformers": transformers.__version__,
               "device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
               "threads": torch.get_num_threads()}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        params = build_model(Path(tmp), args)
        for name in names:
            result = bench(name, args, Path(tmp), params)
            show(result)
            out = ROOT / "bench" / "results" / f"rm-{name}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"args": vars(args), "machine": machine, **result}, indent=2))


if __name__ == "__main__":
    main()
