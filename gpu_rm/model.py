"""A loaded model: a local Hugging Face directory with a sequence-classification,
token-classification or causal-LM head (`ModelSpec.head`).

Loading swaps the backbone's final norm for an identity, so the backbone returns hidden
states *before* the final norm; the norm and the head (`gpu_rm.heads`) then run only on
the scored positions: each sequence's last token, or the positions it names. The
backbone runs with `gpu_rm.attention`, so a `PackedLayout` row is one forward pass with
no padding; a model whose attention packing cannot reproduce is scored on plain padded
batches instead (`gpu_rm.support`). Files come only from disk (``local_files_only``):
nothing is downloaded at run time.

Loading ends with a small forward (`WARMUP`), so kernels that must compile for this
device compile then: a failure there makes the model unavailable with the reason, never
a ``forward_failed`` on every item later.

Not thread-safe: one thread (the batcher's owner) runs `score_layout` at a time.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer, PreTrainedTokenizerFast
from transformers.utils import logging as hf_logging

from referee.gpu_rm.attention import PackedRow, packed_row, register_packed_attention, to_device
from referee.gpu_rm.encoding import ChatEncoder
from referee.gpu_rm.errors import ModelMisconfigured, ModelUnavailable
from referee.gpu_rm.heads import AUTO_CLASSES, Reading, head_of, reading_of
from referee.gpu_rm.judging import JudgeEncoder
from referee.gpu_rm.likelihood import LikelihoodEncoder
from referee.gpu_rm.packing import PackedLayout, TokenSequence, pack
from referee.gpu_rm.settings import ModelSpec
from referee.gpu_rm.steps import StepEncoder
from referee.gpu_rm.support import PADDED, choose

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
WARMUP = ([1, 5, 6, 7, 8], [1, 5, 6, 9])
"""Two short sequences sharing a prefix: every path of a packed forward, in a moment (an
``lm`` head reads both ways there: candidate tokens, and whole-vocabulary statistics)."""


@dataclass(frozen=True)
class Placement:
    """Where and in what precision a model runs."""

    device: torch.device
    dtype: torch.dtype


def resolve_placement(spec: ModelSpec) -> Placement:
    """``auto`` means CUDA + bfloat16 when a GPU is present, else CPU + float32."""
    cuda = torch.cuda.is_available()
    device = torch.device(("cuda" if cuda else "cpu") if spec.device == "auto" else spec.device)
    if spec.dtype == "auto":
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    else:
        dtype = _DTYPES[spec.dtype]
    return Placement(device, dtype)


class RewardModel:
    """Scores packed rows. ``labels`` names the K outputs of a classifier head (none for an
    ``lm`` head); ``objective`` indexes a sequence classifier's reward."""

    def __init__(self, name: str, spec: ModelSpec, model: Any, tokenizer: Any) -> None:
        self.name = name
        self.spec = spec
        self.tokenizer = tokenizer
        self._backbone = getattr(model, model.base_model_prefix)
        self.head = head_of(model, spec.head)
        # The backbone now returns pre-norm states; the norm runs on scored rows only.
        self._backbone.norm = torch.nn.Identity()
        self.device = next(model.parameters()).device
        config = model.config
        id2label = getattr(config, "id2label", None) or {}
        count = 0 if spec.head == "lm" else config.num_labels
        self.labels = [str(id2label.get(i, f"output_{i}")) for i in range(count)]
        self.objective = _objective_index(spec.objective, self.labels) if count else 0
        self.positive = 0
        if spec.head == "token" and count > 1:
            self.positive = _objective_index(spec.steps.positive_label, self.labels)
        limit = getattr(config, "max_position_embeddings", None) or 4096
        self.encoder = ChatEncoder(tokenizer, min(spec.max_length or limit, limit))
        self.judge = JudgeEncoder(self.encoder, spec.judge) if spec.head == "lm" else None
        vocab = int(model.get_output_embeddings().weight.shape[0]) if spec.head == "lm" else 0
        self.likelihood = LikelihoodEncoder(self.encoder, vocab) if spec.head == "lm" else None
        self.steps = StepEncoder(self.encoder, spec.steps, spec.head)
        self.mode, self.note = choose(spec.attention, model, self.device)
        self.pad_id = int(getattr(config, "pad_token_id", None) or 0)
        self._copies = CopyStream(self.device)

    @classmethod
    def load(cls, name: str, spec: ModelSpec) -> RewardModel:
        """Load from ``spec.path`` only; raise `ModelMisconfigured` when the path holds no
        model and `ModelUnavailable` with the reason on any other failure."""
        problem = spec.path_problem()
        if problem is not None:
            raise ModelMisconfigured(f"model {name!r}: {problem} (REFEREE_RM_MODELS)")
        placement = resolve_placement(spec)
        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # a server's logs are not a terminal
        try:
            tokenizer = _load_tokenizer(spec.path)
            model = AUTO_CLASSES[spec.head].from_pretrained(
                spec.path, dtype=placement.dtype, local_files_only=True
            )
            model.to(placement.device).eval()
            loaded = cls(name, spec, model, tokenizer)
            model.set_attn_implementation(
                "sdpa" if loaded.mode == PADDED else register_packed_attention()
            )
        except Exception as exc:  # noqa: BLE001 - any load failure makes the model unavailable
            raise ModelUnavailable(
                f"model {name!r} failed to load from {spec.path}: {type(exc).__name__}: {exc}"
            ) from None
        loaded.warm_up()
        return loaded

    def warm_up(self) -> None:
        """Run `WARMUP` through the model: compiles what this device compiles, and raises
        `ModelUnavailable` with the reason when that fails."""
        try:
            lm = self.spec.head == "lm"  # both readings: candidates, and statistics
            first, second = WARMUP
            self.score_layout(pack([
                TokenSequence(first, "warmup", (), (1, 2) if lm else ()),
                TokenSequence(second, "warmup", (2, 3) if lm else (), (),
                              (second[3], 1) if lm else (), 1 if lm else 0),
            ]))  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - a compile error can be of any type
            raise ModelUnavailable(
                f"model {self.name!r} loaded but its first forward failed ({self.mode} "
                f"attention; a kernel that does not compile here?): {type(exc).__name__}: {exc}"
            ) from None

    def score_layout(self, layout: PackedLayout) -> list[list[float]]:
        """A list of floats per scored position of ``layout`` (`PackedLayout.scored_rows`
        order): what the head reads there (`gpu_rm.heads`)."""
        return self._scores(self.prepare(layout))

    def score_tensor(self, layout: PackedLayout) -> torch.Tensor:
        """`score_layout` as a (P, K) float32 tensor (rows of one width: a classifier, or
        candidate sets of one size)."""
        return torch.tensor(self.score_layout(layout), dtype=torch.float32)

    def score_prepared(self, prepared: Any) -> list[list[float]]:
        """`score_layout` for what `prepare` returned (the batcher's runner thread)."""
        return self._scores(prepared)

    def prepare(self, layout: PackedLayout) -> Ready | PackedLayout:
        """The host side of a forward, done ahead on another thread: the row's tensors,
        copied to the device on a stream of their own (the forward waits for it)."""
        if self.mode == PADDED:
            return layout
        with self._copies.context():
            row = packed_row(layout, self.device, self.mode, self.spec.row_bucket)  # type: ignore[arg-type]
            ids = torch.full((1, row.length), self.pad_id, dtype=torch.long)
            ids[0, : layout.computed_tokens] = torch.tensor(layout.input_ids, dtype=torch.long)
            reading = reading_of(layout, self.spec.head).to(self.device)
            ready = Ready(row, to_device(ids, self.device), reading)
            ready.copied = self._copies.record()
        return ready

    @torch.inference_mode()
    def _scores(self, prepared: Ready | PackedLayout) -> list[list[float]]:
        try:
            if isinstance(prepared, PackedLayout):
                return self._score_padded(prepared)
            self._copies.wait(prepared.copied, prepared.tensors())
            row = prepared.row
            out = self._backbone(
                input_ids=prepared.ids, position_ids=row.position[None, :], packed=row,
                use_cache=False,
            )  # fmt: skip
            return self.head.read(out.last_hidden_state[0], prepared.reading)
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()  # give the smaller retries the cached blocks back
            raise

    def _score_padded(self, layout: PackedLayout) -> list[list[float]]:
        """The plain forward on one right-padded batch of the layout's sequences."""
        sequences = unpacked(layout)
        width = max(len(seq) for seq in sequences)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for index, seq in enumerate(sequences):
            ids[index, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[index, : len(seq)] = 1
        out = self._backbone(
            input_ids=ids.to(self.device), attention_mask=mask.to(self.device), use_cache=False
        )
        hidden = out.last_hidden_state.reshape(-1, out.last_hidden_state.shape[-1])
        reading = reading_of(layout, self.spec.head)
        reading.rows = torch.tensor(
            [index * width + offset for index, offsets in enumerate(layout.offsets)
             for offset in offsets],
        )  # fmt: skip
        return self.head.read(hidden, reading.to(self.device))

    def reward(self, scores: list[float]) -> tuple[float, dict[str, float]]:
        """The reward (the objective's score after the activation) and every raw output."""
        raw = scores[self.objective]
        if self.spec.activation == "sigmoid":
            value = 1.0 / (1.0 + math.exp(-raw)) if raw >= -700 else 0.0
        elif self.spec.activation == "tanh":
            value = math.tanh(raw)
        else:
            value = raw
        return value, dict(zip(self.labels, scores, strict=True))


@dataclass
class Ready:
    """A layout prepared for the forward: its row and tensors on the device, and the event
    their copies complete at (CUDA; None elsewhere)."""

    row: PackedRow
    ids: torch.Tensor
    reading: Reading
    copied: Any = None

    def tensors(self) -> list[torch.Tensor]:
        row = self.row
        return [self.ids, row.unit, row.segment, row.in_prefix, row.position,
                *self.reading.tensors()]  # fmt: skip


class CopyStream:
    """A CUDA stream for host-to-device copies made off the forward's thread (a no-op on
    other devices)."""

    def __init__(self, device: torch.device) -> None:
        self.stream = torch.cuda.Stream(device) if device.type == "cuda" else None  # type: ignore[no-untyped-call]

    def context(self) -> Any:
        """Make the copy stream current (for the preparing thread)."""
        return torch.cuda.stream(self.stream) if self.stream is not None else nullcontext()

    def record(self) -> Any:
        """An event marking the copies queued so far on the copy stream."""
        return self.stream.record_event() if self.stream is not None else None

    def wait(self, event: Any, tensors: list[torch.Tensor]) -> None:
        """Make the current stream wait for ``event`` and own ``tensors`` from now on (so
        the allocator does not reuse their memory while the forward still reads them)."""
        if event is None:
            return
        current = torch.cuda.current_stream(self.stream.device if self.stream else None)
        current.wait_event(event)
        for tensor in tensors:
            tensor.record_stream(current)


def unpacked(layout: PackedLayout) -> list[list[int]]:
    """The layout's sequences as the model would see them alone, in input order."""
    found: dict[int, list[int]] = {}
    for unit in layout.units:
        prefix = layout.input_ids[unit.prefix[0] : unit.prefix[1]]
        for s0, s1 in unit.suffixes:
            found[s1] = prefix + layout.input_ids[s0:s1]
    return [found[end] for end in layout.ends]


def _load_tokenizer(path: str) -> Any:
    """The tokenizer exactly as ``tokenizer.json`` defines it when there is one.

    Transformers 5's AutoTokenizer may rebuild a model-family tokenizer class from the
    vocabulary instead (seen with a Qwen2 config over a word-level tokenizer), which can
    silently change the ids; the reward model was trained on what the file says.
    """
    if (Path(path) / "tokenizer.json").is_file():
        return PreTrainedTokenizerFast.from_pretrained(path, local_files_only=True)
    return AutoTokenizer.from_pretrained(path, local_files_only=True)


def _objective_index(objective: str | int, labels: list[str]) -> int:
    if isinstance(objective, int):
        if not 0 <= objective < len(labels):
            raise ModelUnavailable(f"objective {objective} out of range for {len(labels)} outputs")
        return objective
    if objective not in labels:
        raise ModelUnavailable(f"objective {objective!r} is not one of {labels}")
    return labels.index(objective)
