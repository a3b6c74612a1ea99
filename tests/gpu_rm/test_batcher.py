"""The dynamic batcher's policy: caps, shared batches, drops before the forward, overload.

The scorer here records the layouts it is given and scores each sequence by the sum of its
token ids, so the tests can see exactly what each forward pass received.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError

import pytest

from referee.gpu_rm.batcher import Batcher, DeadlineExpired
from referee.gpu_rm.encoding import Encoded
from referee.gpu_rm.errors import BatchFailed, OutOfMemory, Overloaded
from referee.gpu_rm.packing import PackedLayout


class RecordingScorer:
    def __init__(self, gate: threading.Event | None = None, poison: int | None = None) -> None:
        self.layouts: list[PackedLayout] = []
        self.gate = gate
        self.poison = poison

    def score_layout(self, layout: PackedLayout) -> list[list[float]]:
        if self.gate is not None:
            self.gate.wait(5)
        if self.poison is not None and self.poison in layout.input_ids:
            raise RuntimeError("poisoned token")
        self.layouts.append(layout)
        return [[float(layout.input_ids[end - 1])] for end in layout.ends]  # the last token


def enc(ids: list[int], key: str = "") -> Encoded:
    return Encoded(ids=ids, share_key=key or str(ids))


def test_concurrent_submissions_share_one_length_sorted_batch() -> None:
    scorer = RecordingScorer()
    batcher = Batcher(scorer, max_wait_s=0.2)
    a = batcher.submit([enc([1, 2])])
    b = batcher.submit([enc([3, 4, 5, 6]), enc([7])])  # another "request"
    assert [f.result(5).scores for f in a + b] == [[2.0], [6.0], [7.0]]
    assert len(scorer.layouts) == 1
    assert scorer.layouts[0].input_ids == [3, 4, 5, 6, 1, 2, 7]  # longest first
    assert a[0].result().batch_items == 3
    batcher.close()


def test_item_cap_and_token_budget_split_batches() -> None:
    scorer = RecordingScorer(gate=threading.Event())
    batcher = Batcher(scorer, token_budget=6, max_items=2, max_wait_s=0.05)
    futures = batcher.submit([enc([i] * 3) for i in range(1, 6)])
    scorer.gate.set()  # type: ignore[union-attr]
    for f in futures:
        f.result(5)
    sizes = [len(layout.ends) for layout in scorer.layouts]
    assert sum(sizes) == 5 and max(sizes) <= 2
    assert all(layout.computed_tokens <= 6 for layout in scorer.layouts)
    batcher.close()


def test_shared_prompt_counts_once_against_the_budget() -> None:
    scorer = RecordingScorer()
    batcher = Batcher(scorer, token_budget=12, max_wait_s=0.05)
    prompt = [9] * 8
    futures = batcher.submit([enc([*prompt, i], key="p") for i in (1, 2, 3, 4)])
    assert [f.result(5).shared_prefix_tokens for f in futures] == [8] * 4
    assert len(scorer.layouts) == 1 and scorer.layouts[0].computed_tokens == 12
    batcher.close()


def test_cancelled_and_expired_items_are_dropped_before_the_forward() -> None:
    gate = threading.Event()
    scorer = RecordingScorer(gate=gate)
    batcher = Batcher(scorer, max_items=1, max_wait_s=0.0)
    first = batcher.submit([enc([1])])  # occupies the owner thread at the gate
    time.sleep(0.05)
    cancelled = batcher.submit([enc([2])])
    expired = batcher.submit([enc([3])], deadline=time.monotonic() + 0.01)
    kept = batcher.submit([enc([4])])
    assert cancelled[0].cancel()
    time.sleep(0.05)
    gate.set()
    assert first[0].result(5).scores == [1.0] and kept[0].result(5).scores == [4.0]
    with pytest.raises(CancelledError):
        cancelled[0].result(5)
    with pytest.raises(DeadlineExpired):
        expired[0].result(5)
    assert [layout.input_ids for layout in scorer.layouts] == [[1], [4]]
    assert batcher.stats.dropped == 2
    batcher.close()


def test_full_queue_raises_overloaded() -> None:
    gate = threading.Event()
    batcher = Batcher(RecordingScorer(gate=gate), max_items=1, max_wait_s=0.0, max_queue=2)
    batcher.submit([enc([1])])
    time.sleep(0.05)  # the owner took it; the queue is empty again
    batcher.submit([enc([2]), enc([3])])
    with pytest.raises(Overloaded, match="queue is full"):
        batcher.submit([enc([4])])
    gate.set()
    batcher.close()


def test_a_failing_item_does_not_fail_its_batch_mates() -> None:
    batcher = Batcher(RecordingScorer(poison=13), max_wait_s=0.1)
    futures = batcher.submit([enc([1, 2]), enc([13]), enc([5])])
    assert futures[0].result(5).scores == [2.0]
    assert futures[2].result(5).scores == [5.0]
    with pytest.raises(BatchFailed, match="poisoned"):
        futures[1].result(5)
    batcher.close()


class OutOfMemoryError(RuntimeError):
    """Named as torch's is: the batcher recognises it by name."""


class SmallDevice(RecordingScorer):
    """Runs out of memory on batches of more than ``fits`` items, and always on
    ``hog``'s token."""

    def __init__(self, fits: int, hog: int | None = None) -> None:
        super().__init__()
        self.fits, self.hog = fits, hog
        self.sizes: list[int] = []

    def score_layout(self, layout: PackedLayout) -> list[list[float]]:
        self.sizes.append(len(layout.ends))
        if len(layout.ends) > self.fits or (self.hog is not None and self.hog in layout.input_ids):
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return super().score_layout(layout)


def test_out_of_memory_splits_the_batch_in_halves() -> None:
    scorer = SmallDevice(fits=2)
    batcher = Batcher(scorer, max_wait_s=0.1)
    futures = batcher.submit([enc([i]) for i in range(1, 9)])
    assert sorted(f.result(5).scores[0] for f in futures) == [float(i) for i in range(1, 9)]
    assert scorer.sizes[:3] == [8, 4, 2]  # halves, not item by item
    assert batcher.stats.splits == 3
    batcher.close()


def test_an_item_too_big_alone_fails_alone_as_rm_oom() -> None:
    batcher = Batcher(SmallDevice(fits=8, hog=13), max_wait_s=0.1)
    futures = batcher.submit([enc([1]), enc([13]), enc([2]), enc([3])])
    with pytest.raises(OutOfMemory) as failed:
        futures[1].result(5)
    assert failed.value.code == "rm_oom"
    assert [futures[i].result(5).scores for i in (0, 2, 3)] == [[1.0], [2.0], [3.0]]
    batcher.close()


class Pipelined(RecordingScorer):
    """The first forward cannot finish until the next batch has been prepared: without
    host work overlapping the forward, the batcher deadlocks (and the test times out)."""

    def __init__(self) -> None:
        super().__init__()
        self.prepared: list[threading.Event] = []
        self.overlapped = False

    def prepare(self, layout: PackedLayout) -> PackedLayout:
        self.prepared.append(threading.Event())
        self.prepared[-1].set()
        return layout

    def score_prepared(self, layout: PackedLayout) -> list[list[float]]:
        if len(self.layouts) == 0:  # the first forward waits for the second preparation
            self.overlapped = _wait_until(lambda: len(self.prepared) >= 2)
        return self.score_layout(layout)


def _wait_until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_the_next_batch_is_prepared_while_the_forward_runs() -> None:
    scorer = Pipelined()
    batcher = Batcher(scorer, max_items=1, max_wait_s=0.0)
    futures = batcher.submit([enc([1]), enc([2]), enc([3])])
    assert [f.result(10).scores for f in futures] == [[1.0], [2.0], [3.0]]
    assert scorer.overlapped
    batcher.close()
