"""Reward-model benchmark: an OpenRLHF-style server loop vs referee's ``rm`` path, one run.

Workload: GRPO groups of 8 responses to one prompt (prompt 256-2,048 tokens uniform,
response lengths log-normal, median 200 tokens, capped at 1,024), each group arriving as
its own request, all requests at once. Model: a randomly initialised Llama-like reward
model built from a config (hidden 256, 4 layers by default) and a word-level tokenizer,
saved to a temporary directory; the numbers measure the serving path, not the weights.

- baseline: what OpenRLHF's example reward server does: requests one at a time, each cut
  into fixed-size chunks (``--chunk``, 4) padded to the chunk's longest, plain
  ``LlamaForSequenceClassification`` forward (sdpa attention, norm + head on every token).
- referee: `RewardModelVerifier.ascore` per request, all requests concurrently: one
  dynamic batcher, packed rows with no padding, each group's prompt computed once.

Tokens/s counts the items' own tokens (prompt + response per item) over wall time, for
both. Padding waste is pad positions / positions computed. Latency: request arrival to
its results. Prints a table; writes ``bench/results/rm.json``.

    python bench/rm.py [--groups 12] [--hidden 256] [--layers 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers, processors  # noqa: E402

from gpu_rm.registry import ModelRegistry  # noqa: E402
from gpu_rm.settings import ModelSpec, RMSettings  # noqa: E402
from verifiers import Item  # noqa: E402
from verifiers.reward_model import RewardModelVerifier  # noqa: E402

WORDS = [f"w{i}" for i in range(4000)]
TEMPLATE = "{{ bos_token }}{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {{ eos_token }} {% endfor %}"  # noqa: E501


def build_model(path: Path, hidden: int, layers: int) -> None:
    """A random Llama-like reward model and a word-level tokenizer with a chat template."""
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
        vocab_size=len(vocab), hidden_size=hidden, intermediate_size=hidden * 4 // 1,
        num_hidden_layers=layers, num_attention_heads=max(hidden // 64, 1),
        num_key_value_heads=max(hidden // 128, 1), max_position_embeddings=4096,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, num_labels=1,
    )  # fmt: skip
    torch.manual_seed(0)
    transformers.LlamaForSequenceClassification(config).save_pretrained(path)


def workload(groups: int, seed: int) -> list[list[Item]]:
    """One request per group: 8 items sharing a prompt."""
    rng = random.Random(seed)
    requests = []
    for g in range(groups):
        prompt = " ".join(rng.choices(WORDS, k=rng.randint(256, 2048) - 8))
        items = []
        for _ in range(8):
            n = min(max(int(rng.lognormvariate(math.log(200), 0.8)), 1), 1024)
            response = " ".join(rng.choices(WORDS, k=n))
            items.append(Item(verifier="rm", prompt=prompt, response=response, group=f"g{g}"))
        requests.append(items)
    return requests


def run_baseline(path: Path, requests: list[list[Item]], chunk: int) -> dict[str, Any]:
    tok = transformers.PreTrainedTokenizerFast.from_pretrained(path)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        path, dtype=torch.float32, attn_implementation="sdpa"
    ).eval()
    latencies, real, computed, n_items = [], 0, 0, 0
    start = time.perf_counter()
    for request in requests:  # one request at a time, as the example server does
        texts = [
            tok.apply_chat_template(
                [{"role": "user", "content": i.prompt_text()},
                 {"role": "assistant", "content": i.response_text()}], tokenize=False,
            ) for i in request
        ]  # fmt: skip
        for lo in range(0, len(texts), chunk):
            batch = tok(texts[lo : lo + chunk], padding=True, return_tensors="pt",
                        add_special_tokens=False)  # fmt: skip
            with torch.inference_mode():
                model(**batch)
            real += int(batch["attention_mask"].sum())
            computed += batch["input_ids"].numel()
        n_items += len(request)
        latencies.append(time.perf_counter() - start)
    return summarise("baseline (OpenRLHF-style)", start, latencies, n_items, real, computed)


def run_referee(path: Path, requests: list[list[Item]], budget: int) -> dict[str, Any]:
    spec = ModelSpec(path=str(path), dtype="float32", device="cpu")
    registry = ModelRegistry(RMSettings(models={"bench": spec}, token_budget=budget))
    verifier = RewardModelVerifier(registry)
    registry.get("bench")  # load outside the timed region, as the baseline does
    latencies: list[float] = []

    async def one(request: list[Item], start: float) -> None:
        results = await verifier.ascore(request)
        assert all(r.status.value == "ok" for r in results), results[0].error
        latencies.append(time.perf_counter() - start)

    async def all_requests() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(one(r, start) for r in requests))
        return start

    start = asyncio.run(all_requests())
    stats = registry.get("bench").batcher.stats
    registry.close()
    row = summarise("referee", start, latencies, stats.items, stats.logical_tokens,
                    stats.computed_tokens, pads=0)  # fmt: skip
    row["batches"] = stats.batches
    return row


def summarise(
    name: str, start: float, latencies: list[float], items: int, real: int, computed: int,
    pads: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    wall = time.perf_counter() - start
    lat = sorted(latencies)
    pad_positions = computed - real if pads is None else pads
    return {
        "name": name, "wall_s": wall, "items": items, "item_tokens": real,
        "computed_tokens": computed, "tokens_per_s": real / wall, "items_per_s": items / wall,
        "padding_waste": pad_positions / max(computed, 1),
        "p50_s": statistics.median(lat), "p99_s": lat[min(len(lat) - 1, int(0.99 * len(lat)))],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--budget", type=int, default=16384)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    transformers.utils.logging.disable_progress_bar()
    requests = workload(args.groups, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        build_model(Path(tmp), args.hidden, args.layers)
        rows = [
            run_baseline(Path(tmp), requests, args.chunk),
            run_referee(Path(tmp), requests, args.budget),
        ]
    header = ("path", "tok/s", "items/s", "pad waste", "computed", "p50 s", "p99 s")
    print("{:28} {:>9} {:>8} {:>9} {:>9} {:>7} {:>7}".format(*header))
    for r in rows:
        cells = (r["name"], r["tokens_per_s"], r["items_per_s"], r["padding_waste"])
        tail = (r["computed_tokens"], r["p50_s"], r["p99_s"])
        print("{:28} {:9.0f} {:8.2f} {:9.1%} {:9d} {:7.2f} {:7.2f}".format(*cells, *tail))
    speedup = rows[1]["items_per_s"] / rows[0]["items_per_s"]
    print(f"referee / baseline items/s: {speedup:.2f}x")
    out = ROOT / "bench" / "results" / "rm.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    machine = {"cpu_count": os.cpu_count(), "platform": platform.platform(),
               "torch": torch.__version__, "transformers": transformers.__version__,
               "threads": torch.get_num_threads()}  # fmt: skip
    out.write_text(json.dumps({"args": vars(args), "machine": machine, "rows": rows,
                               "speedup_items_per_s": speedup}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
