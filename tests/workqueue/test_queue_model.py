"""Queue against a reference model of client-go's semantics, driven by hypothesis."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kgen_runtime.workqueue import Queue

KEYS = st.sampled_from("abcde")


class QueueModel(RuleBasedStateMachine):
    """The model: a FIFO list of waiting keys, a dirty set, a processing set."""

    def __init__(self) -> None:
        super().__init__()
        self.queue: Queue[str] = Queue()
        self.waiting: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.shut = False

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.queue.add(key)
        if self.shut or key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.waiting.append(key)

    @precondition(lambda self: self.waiting)
    @rule()
    def get(self) -> None:
        key = self.waiting.pop(0)
        assert self.queue.get(timeout=0) == (key, False)
        self.dirty.discard(key)
        self.processing.add(key)

    @precondition(lambda self: not self.waiting and self.shut)
    @rule()
    def get_after_shutdown(self) -> None:
        assert self.queue.get() == (None, True)

    @precondition(lambda self: self.processing)
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(key)
        self.processing.discard(key)
        if key in self.dirty:
            self.waiting.append(key)

    @rule()
    def shut_down(self) -> None:
        self.queue.shut_down()
        self.shut = True

    @invariant()
    def same_length(self) -> None:
        assert len(self.queue) == len(self.waiting)
        assert self.queue.shutting_down() == self.shut


QueueModel.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_queue_matches_model = QueueModel.TestCase
