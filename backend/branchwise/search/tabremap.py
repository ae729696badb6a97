"""Tab indices during speculative replay (WebOperator, Appendix D).

Replay happens in new tabs appended after the N tabs already open, so the recorded `tab_focus [i]` must become
`tab_focus [N + i]` in the live browser; otherwise replay would switch to one of the user's real tabs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..actions import Action, TabFocus


@dataclass(frozen=True, slots=True)
class TabRemap:
    """Recorded tab i lives at `offset + i`; only the `recorded_count` tabs of the recording can be addressed."""

    offset: int
    recorded_count: int

    def __post_init__(self) -> None:
        if self.offset < 0 or self.recorded_count < 0:
            raise ValueError(f"tab counts must not be negative: offset {self.offset}, recorded {self.recorded_count}")

    @classmethod
    def from_tabs(cls, existing: int, recorded: int) -> TabRemap:
        """`existing` tabs were open before replay started; the recording used `recorded` tabs."""
        return cls(offset=existing, recorded_count=recorded)

    def live_index(self, recorded_index: int) -> int:
        """Where recorded tab `recorded_index` is in the live browser."""
        if not 0 <= recorded_index < self.recorded_count:
            raise ValueError(
                f"tab_focus [{recorded_index}] is outside the {self.recorded_count} recorded tab(s); "
                "refusing to switch to a tab the replay did not open"
            )
        return self.offset + recorded_index

    def remap(self, action: Action) -> Action:
        """`action` with a tab_focus index moved to the replay's tabs; every other action unchanged."""
        if isinstance(action, TabFocus):
            return TabFocus(self.live_index(action.index))
        return action
