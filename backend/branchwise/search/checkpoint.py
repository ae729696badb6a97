"""Checkpoints: states that backtracking can reach by URL alone (WebOperator, Appendix D).

Jumping to a checkpoint's URL rebuilds it only if the page does not depend on earlier UI interactions (its
observation survives a reload) and the URL actually names it (it differs from the parent's, so the navigation is
what produced this state). Backtracking then replays only the UI actions taken since the nearest checkpoint.
"""

from __future__ import annotations

from ..observation import PageView
from .snapshot import same_page, without_fragment


def is_checkpoint(*, url: str, parent_url: str | None, before: PageView, after_reload: PageView) -> bool:
    """Whether the node at `url` is a checkpoint, given its page before and after a reload.

    The fragment is ignored: `#section` moves within a page and does not make a new navigation point. The root has no
    parent, so only its stability counts.
    """
    if not same_page(before, after_reload):
        return False
    return parent_url is None or without_fragment(url) != without_fragment(parent_url)
