"""Planned HTTP failures, so retry logic can be exercised against a real server."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable


class FailureQueue:
    """Each queued status answers exactly one upcoming request, in order."""

    def __init__(self, statuses: Iterable[int] = ()) -> None:
        self._lock = threading.Lock()
        self._pending: deque[int] = deque(statuses)

    def extend(self, statuses: Iterable[int]) -> None:
        with self._lock:
            self._pending.extend(statuses)

    def take(self) -> int | None:
        with self._lock:
            return self._pending.popleft() if self._pending else None

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)
