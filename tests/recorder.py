"""An in-memory iteration tracker for optimizer tests (MLflow tracking is tested apart)."""

from __future__ import annotations

from otbench.optimizers.base import IterationRecord


class Recorder:
    """Keeps every logged iteration; ``stop_after`` simulates a Ctrl-C after that step is logged."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.records: list[IterationRecord] = []
        self.stop_after = stop_after

    def log_iteration(self, record: IterationRecord) -> None:
        self.records.append(record)
        if self.stop_after is not None and record.step >= self.stop_after:
            raise KeyboardInterrupt
