"""What a run's search knows at any moment: the tree, the node the working tab shows, and the actions waiting to run.

The run owns it; strategies and the step change it; the trace only reads it to record and draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .frontier import FrontierItem
from .tree import SearchTree


@dataclass
class SearchState:
    tree: SearchTree = field(default_factory=SearchTree)
    # The node whose page the working tab shows; None before the first observation.
    current: int | None = None
    # The proposals not run yet, as the live views show them.
    frontier: list[FrontierItem] = field(default_factory=list)
