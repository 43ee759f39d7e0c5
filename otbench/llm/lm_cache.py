"""DSPy's LM cache made safe to read: its entries are data, and one that cannot be read is a miss.

DSPy keeps LM replies on disk as pickles and, by default, loads any pickle: a planted entry runs
code at the next cache hit, and a corrupt one fails every later run with an error that never
names the cache. Here the cache is read with DSPy's restricted unpickler (only litellm's and
OpenAI's response records, and plain data, can come back), and any entry that fails to read is
logged as a warning, dropped, and treated as a miss, so the call is simply made again.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

logger = logging.getLogger(__name__)


class _MissOnFailedRead:
    """A DSPy disk cache whose failed reads are logged misses (the entry is deleted)."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache

    def get(self, key: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._cache.get(key, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - whatever an entry holds, reading it must not end the run
            logger.warning("LM cache entry %s could not be read (%s: %s); it is dropped and the call is made again",
                           key, type(exc).__name__, str(exc)[:200])
            with contextlib.suppress(Exception):
                self._cache.delete(key)
            return None

    def __contains__(self, key: str) -> bool:
        return key in self._cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)


def guard_lm_cache() -> None:
    """Read DSPy's disk cache (where it is on) with the restricted unpickler, failed reads being misses.

    Keeps the cache's place and which tiers are on; calling it again changes nothing.
    """
    import dspy

    current = dspy.cache
    if not current.enable_disk_cache or isinstance(current.disk_cache, _MissOnFailedRead):
        return
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=current.enable_memory_cache,
                         disk_cache_dir=current.disk_cache_dir, restrict_pickle=True)
    dspy.cache.disk_cache = _MissOnFailedRead(dspy.cache.disk_cache)
