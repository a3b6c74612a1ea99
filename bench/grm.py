"""Generative and process reward-model benchmark: referee's ``grm`` and ``prm`` paths
against a straightforward padded Transformers loop, in one run.

Model: a randomly initialised Llama-like causal LM built from a config (``--hidden``,
``--layers``, ``--vocab``: the vocabulary matters, since a plain forward computes a logit
for every vocabulary row at every position) and a word-level tokenizer, saved to a
temporary directory: the numbers measure serving, not the weights.

Workload: ``--batch`` items (default 32) in GRPO groups of ``--group`` (8) sharing a
prompt of 256-1,024 tokens; responses log-normal, median 200 tokens, capped at 1,024.
For ``prm`` a response is 2-12 steps separated by blank lines, each tagged with a step
token.

Paths, each the median of ``--repeats`` timed runs after a warm-up, on the same encoded
token ids (encoding is timed in every path):

- padded: the plain ``*ForCausalLM`` forward on one right-padded batch, full logits
  ``[batch x width x vocab]``, the verdict tokens read at the scored positions (what a
  training loop that calls the model does);
- padded+keep: the same forward with only the needed positions' logits computed
  (``logits_to_keep=1`` for ``grm``; the hidden states gathered at the steps, then the
  output layer, for ``prm``): the strongest plain baseline;
- referee: `GenerativeRMVerifier` / `ProcessRMVerifier` ``ascore`` per group, all
  concurrently: the dynamic batcher, packed rows, each group's prompt computed once, the
  output layer restricted to the verdict tokens at the scored positions.

Prints items/s and item tokens/s per path, referee's ratio to each baseline, and the
fraction of the measured matmul rate (``--device``/``--dtype``, measured in the same run)
each path reaches on the transformer body's FLOPs over the tokens it computes (padding
included for the padded paths, each group's prompt once for referee) plus attention over
the query-key pairs it computes; the output layer is left out of the count, since the
paths differ in how much of it they need. Writes ``bench/results/grm-<task>.json``.

    python bench/grm.py                      # both tasks, CPU defaults
    python bench/grm.py --device cuda --dtype bfloat16 --hidden 896 --layers 24 --vocab 151936
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

from bench.rm import matmul_rate, model_flops, packed_pairs  # noqa: E402
from referee.gpu_rm.encoding import Encoded  # noqa: E402
from referee.gpu_rm.registry import ModelRegistry  # noqa: E402
from referee.gpu_rm.settings import ModelSpec, RMSettings, StepSpec  # noqa: E402
from referee.verifiers import Item  # noqa: E402
from referee.verifiers.batched_model import BatchedModelVerifier  # noqa: E402
from referee.verifiers.generative_rm import GenerativeRMVerifier  # noqa: E402
from referee.verifiers.process_rm import ProcessRMVerifier  # noqa: E402

TEMPLATE = "{{ bos_token }}{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {{ eos_token }} {% endfor %}{% if add_generation_prompt %}assistant : {% endif %}"  # noqa: E501
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
KEYWORDS = ["user", "assistant", ":", "Yes", "No", "+", "-", "<step>"]
TEMPLATE_WORDS = "Judge the response to the question. Question: Response: Is correct? Answer or"
STEPS = StepSpec(tag=" <step>", joiner="\n\n")


def build_model(path: Path, args: argparse.Namespace) -> None:
    """A random Llama-like causal LM and a word-level tokenizer of ``--vocab`` words."""
    words = [*KEYWORDS, *TEMPLATE_WORDS.split()]
    words += [f"w{i}" for i in range(args.vocab - len(SPECIALS) - len(words))]
    vocab = {token: i for i, token in enumerate(SPECIALS + list(dict.fromkeys(words)))}
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
        vocab_size=len(vocab), hidden_size=args.hidden, intermediate_size=args.hidden * 4,
        num_hidden_layers=args.layers, num_attention_heads=max(args.hidden // 64, 1),
        num_key_value_heads=max(args.hidden // 128, 1), max_position_embeddings=16384,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(path)


def workload(task: str, args: argparse.Namespace) -> list[list[Item]]:
    """One request per group of ``--group`` items sharing a prompt."""
    rng = random.Random(args.seed)
    words = [f"w{i}" for i in range(1000)]
    requests = []
    for g in range(args.batch // args.group):
        prompt = " ".join(rng.choices(words, k=rng.randint(256, 1024)))
        items = []
        for _ in range(args.group):
            n = min(max(int(rng.lognormvariate(math.log(200), 0.8)), 4), 1024)
            text = rng.choices(words, k=n)
            if task == "prm":
                cuts = sorted(rng.sample(range(1, n), min(rng.randint(1, 11), n - 1)))
                parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
                response = "\n\n".join(" ".join(part) for part in parts)
            else:
                response = " ".join(text)
            params = {"model": "bench"}
            items.append(Item(verifier=task, prompt=prompt, response=response, params=params,
                              group=f"g{g}"))  # fmt: skip
        requests.append(items)
    return requests


class Plain:
    """The unmodified Transformers causal LM, for both baselines."""

    def __init__(self, path: Path, device: str, dtype: torch.dtype) -> None:
        self.model = transformers.AutoModelForCausalLM.from_pretrained(
            path, dtype=dtype, attn_implementation="sdpa"
        ).to(device)
        self.device = device

    def read(self, encoded: list[Encoded], keep: bool) -> list[list[float]]:
        """Padded forward of ``encoded``; the candidates' softmax at each scored position."""
        width = max(len(e.ids) for e in encoded)
        ids = torch.zeros(len(encoded), width, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = torch.tensor(e.ids)
            mask[row, : len(e.ids)] = 1
        rows = [(r, o) for r, e in enumerate(encoded) for o in (e.scored or (len(e.ids) - 1,))]
        ids, mask = ids.to(self.device), mask.to(self.device)
        with torch.inference_mode():
            if not keep:
                logits = self.model(input_ids=ids, attention_mask=mask).logits
                picked = logits[[r for r, _ in rows], [o for _, o in rows]]
            else:
                hidden = self.model.model(input_ids=ids, attention_mask=mask).last_hidden_state
                picked = self.model.lm_head(hidden[[r for r, _ in rows], [o for _, o in rows]])
        cands = [encoded[r].candidates for r, _ in rows]
        return [torch.softmax(picked[i, list(c)].float(), -1).tolist() for i, c in enumerate(cands)]


def run_plain(plain: Plain, verifier: BatchedModelVerifier, served: Any,
              requests: list[list[Item]], keep: bool) -> float:  # fmt: skip
    """Seconds to encode every item and read it in one padded forward."""
    start = time.perf_counter()
    items = [i for request in requests for i in request]
    encoded = [
        enc
        for i in items
        for _, enc in verifier.submissions(served, i, verifier.Params.model_validate(i.params))
    ]
    plain.read(encoded, keep)
    _sync()
    return time.perf_counter() - start


def run_referee(verifier: BatchedModelVerifier, requests: list[list[Item]]) -> float:
    async def all_requests() -> None:
        batches = await asyncio.gather(*(verifier.ascore(r) for r in requests))
        for result in (r for batch in batches for r in batch):
            assert result.status.value == "ok", result.error

    start = time.perf_counter()
    asyncio.run(all_requests())
    return time.perf_counter() - start


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def sequences(verifier: BatchedModelVerifier, served: Any, requests: list[list[Item]]) -> Any:
    """Per request, the token ids of every sequence its items submit."""
    return [
        [enc.ids for i in r
         for _, enc in verifier.submissions(served, i, verifier.Params.model_validate(i.params))]
        for r in requests
    ]  # fmt: skip


def work(plain: Plain, ids: list[list[list[int]]], computed: float) -> dict[str, Any]:
    """Item tokens, and per path the tokens and query-key pairs it computes."""
    flat = [seq for request in ids for seq in request]
    width = max(len(seq) for seq in flat)
    body = sum(p.numel() for n, p in plain.model.model.named_parameters() if "embed" not in n)
    padded = (len(flat) * width, len(flat) * width * (width + 1) // 2)
    return {
        "item_tokens": sum(len(seq) for seq in flat),
        "body_params": body,
        "computed": {"padded": padded, "padded+keep": padded,
                     "referee": (computed, packed_pairs(ids))},
    }  # fmt: skip


def bench(task: str, args: argparse.Namespace, path: Path) -> dict[str, Any]:
    spec = ModelSpec(path=str(path), head="lm", dtype=args.dtype, device=args.device,
                     steps=STEPS, max_length=16384)  # fmt: skip
    registry = ModelRegistry(RMSettings(models={"bench": spec}, token_budget=args.budget,
                                        max_wait_ms=20))  # fmt: skip
    verifier = GenerativeRMVerifier(registry) if task == "grm" else ProcessRMVerifier(registry)
    served = registry.get("bench")
    requests = workload(task, args)
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[args.dtype]
    plain = Plain(path, args.device, dtype)
    paths: dict[str, Callable[[], float]] = {
        "padded": lambda: run_plain(plain, verifier, served, requests, keep=False),
        "padded+keep": lambda: run_plain(plain, verifier, served, requests, keep=True),
        "referee": lambda: run_referee(verifier, requests),
    }
    times: dict[str, list[float]] = {name: [] for name in paths}
    for run in paths.values():
        run()  # warm-up
    before = served.batcher.stats.computed_tokens
    for _ in range(args.repeats):  # interleaved, so drift hits every path alike
        for name, run in paths.items():
            times[name].append(run())
    computed = (served.batcher.stats.computed_tokens - before) / args.repeats
    measured = work(plain, sequences(verifier, served, requests), computed)
    registry.close()
    rate = matmul_rate(args.device, dtype)
    items = sum(len(r) for r in requests)
    rows = []
    for name, t in times.items():
        tokens, pairs = measured["computed"][name]
        flops = model_flops(measured["body_params"], args.layers, args.hidden, tokens, pairs)
        rows.append({"name": name, "median_s": statistics.median(t), "runs_s": t,
                     "items_per_s": items / statistics.median(t),
                     "item_tokens_per_s": measured["item_tokens"] / statistics.median(t),
                     "computed_tokens": tokens,
                     "matmul_fraction": flops / statistics.median(t) / rate})  # fmt: skip
    return {"task": task, "items": items, "item_tokens": measured["item_tokens"],
            "matmul_tflops": rate / 1e12, "rows": rows}  # fmt: skip


def show(result: dict[str, Any]) -> None:
    print(f"\n### {result['task']}: {result['items']} items, {result['item_tokens']} item "
          f"tokens (measured matmul rate {result['matmul_tflops']:.1f} TFLOP/s)")  # fmt: skip
    print("| path | median s | items/s | item tok/s | computed tokens | matmul rate |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in result["rows"]:
        print(f"| {r['name']} | {r['median_s']:.2f} | {r['items_per_s']:.1f} | "
              f"{r['item_tokens_per_s']:.0f} | {r['computed_tokens']:.0f} | "
              f"{r['matmul_fraction']:.0%} |")  # fmt: skip
    by = {r["name"]: r["items_per_s"] for r in result["rows"]}
    print(f"referee / padded: {by['referee'] / by['padded']:.2f}x; "
          f"referee / padded+keep: {by['referee'] / by['padded+keep']:.2f}x")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add: Callable[..., Any] = parser.add_argument
    add("--task", choices=["grm", "prm", "both"], default="both")
    add("--batch", type=int, default=32)
    add("--group", type=int, default=8)
    add("--hidden", type=int, default=256)
    add("--layers", type=int, default=4)
    add("--vocab", type=int, default=32000)
    add("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    add("--dtype", choices=["float32", "bfloat16"], default="float32")
    add("--budget", type=int, default=65536, help="referee's batch token budget")
    add("--repeats", type=int, default=5)
    add("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(max(torch.get_num_threads(), 1))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        build_model(Path(tmp), args)
        for task in ["grm", "prm"] if args.task == "both" else [args.task]:
            results.append(bench(task, args, Path(tmp)))
            show(results[-1])
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    machine = {"machine": platform.machine(), "processor": platform.processor(),
               "threads": torch.get_num_threads(), "args": vars(args)}  # fmt: skip
    for result in results:
        (out / f"grm-{result['task']}.json").write_text(json.dumps({**machine, **result},
                                                                   indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
