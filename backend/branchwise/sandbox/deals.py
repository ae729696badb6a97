"""The "Deals of the moment" page's rotation: content that changes on every load, on purpose.

End-to-end tests use it to show that replaying actions on a page that changes on reload is detected. Each load shows
the next few products of one fixed order (every in-stock product, shuffled by the shop's seed), so a fresh app always
shows the same sequence while two consecutive loads never show the same featured deal. Which load comes next is kept
in memory by `DealRotation`, one per app: viewing deals never writes to the database.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping, Sequence

DEALS_PATH = "/deals"
DEALS_HEADING = "Deals of the moment"
# The featured deal's link reads "Deal of the moment: <product name>".
FEATURED_DEAL_PREFIX = "Deal of the moment: "
# Deals listed under the featured one.
MORE_DEALS_COUNT = 3


class DealRotation:
    """Counts loads of the deals page. Thread-safe: sync routes run on a thread pool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loads = 0

    def next_load(self) -> int:
        """0 for the first load since the app started, then 1, 2, ..."""
        with self._lock:
            load = self._loads
            self._loads += 1
            return load


def deal_order(stock_levels: Mapping[int, int], seed: int) -> tuple[int, ...]:
    """Product ids in the order deals come round: all products shuffled by `seed`, sold-out ones left out.

    Shuffling every product before filtering keeps the order of the others fixed when one sells out.
    """
    order = sorted(stock_levels)
    random.Random(seed).shuffle(order)
    return tuple(pid for pid in order if stock_levels[pid] > 0)


def deal_window(order: Sequence[int], load: int) -> tuple[int, ...]:
    """The ids shown on the `load`-th page: the featured deal first, then the others, wrapping round the order.

    Pages step by a whole window so each load shows new products; with too few products to fill two windows they
    step by one, so the featured deal still changes from one load to the next whenever there are two products.
    """
    if not order:
        return ()
    size = min(1 + MORE_DEALS_COUNT, len(order))
    step = size if len(order) > size else 1
    start = load * step
    return tuple(order[(start + offset) % len(order)] for offset in range(size))
