"""A learning budget in tokens, the same for every optimizer: which tools each one learns when it cannot learn all.

On a handful of tools every optimizer can afford all of its work. On a pool of a thousand it cannot (EasyTool would
make two editor calls a tool, Play2Prompt plays with each), so comparing them means giving each the same number of
tokens and letting its own method decide what to spend them on. A :class:`TokenBudget` counts what a compile has
spent since it started, over every LM it calls (agent, editor, exploration); an optimizer asks
:meth:`TokenBudget.exhausted` before it starts a piece of learning work (an iteration, a tool, an editor call), so work
already started finishes and the budget is overshot by at most what runs at once.

Spent tokens are paid plus cache-served where the LMs are metered (:class:`otbench.llm.metering.MeteredLM`): a budget
must stop a run at the same point whatever an earlier run left in the cache. A plain ``dspy.LM`` reports paid tokens
only, so a library user's budget counts those.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from otbench.optimizers.results import TokenMarks


class TokenBudget:
    """Tokens a compile may spend learning; ``limit`` None is no budget (never exhausted).

    ``lms`` are the compile's LMs by role, as :meth:`otbench.optimizers.base.DocOptimizer._lms` lists them;
    ``spent_before``, what the run spent before it was resumed.
    """

    def __init__(self, limit: int | None, lms: Mapping[str, Any], *, spent_before: int = 0) -> None:
        self.limit = limit
        self.spent_before = spent_before
        self._ledgers = list({id(lm.ledger): lm.ledger for lm in lms.values() if hasattr(lm, "ledger")}.values())
        self._start = self._ledger_total()
        self._marks = TokenMarks({role: lm for role, lm in lms.items() if not hasattr(lm, "ledger")})
        self._lock = threading.Lock()
        self._stopped = False

    def _ledger_total(self) -> int:
        total = 0
        for ledger in self._ledgers:
            row = ledger.snapshot()["all"]
            total += int(row["total_tokens"] + row.get("cached_tokens", 0))
        return total

    def spent(self) -> int:
        """Tokens spent since the budget was set: metered LMs' paid and cache-served, other LMs' paid."""
        plain = sum(count.total_tokens for count in self._marks.counts().values())
        return self.spent_before + self._ledger_total() - self._start + plain

    def exhausted(self) -> bool:
        """Whether no new learning work may start; once true it stays true (work is not resumed half way)."""
        return self.limit is not None and self._reached(self.spent())

    def _reached(self, spent: int) -> bool:
        assert self.limit is not None
        with self._lock:
            self._stopped = self._stopped or spent >= self.limit
            return self._stopped

    def metrics(self) -> dict[str, float]:
        """What an iteration logs of the budget, from one reading of the tokens spent (nothing without one)."""
        if self.limit is None:
            return {}
        spent = self.spent()
        return {"budget_tokens": float(self.limit), "budget_spent": float(spent),
                "budget_exhausted": float(self._reached(spent))}
