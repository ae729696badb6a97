"""tab_focus indices during speculative replay in tabs appended after the open ones."""

from __future__ import annotations

import pytest

from branchwise.actions import Click, CloseTab, Goto, NewTab, Scroll, TabFocus
from branchwise.search.tabremap import TabRemap


def test_recorded_tabs_follow_the_existing_ones() -> None:
    remap = TabRemap.from_tabs(existing=3, recorded=2)
    assert remap == TabRemap(offset=3, recorded_count=2)
    assert [remap.live_index(i) for i in range(2)] == [3, 4]
    assert remap.remap(TabFocus(0)) == TabFocus(3)
    assert remap.remap(TabFocus(1)) == TabFocus(4)


def test_other_actions_are_unchanged() -> None:
    remap = TabRemap.from_tabs(existing=2, recorded=2)
    for action in (Click(5), Scroll("down"), Goto("http://x/"), NewTab("http://y/"), CloseTab()):
        assert remap.remap(action) is action


@pytest.mark.parametrize("index", [2, 5, -1])
def test_index_outside_the_recorded_tabs(index: int) -> None:
    remap = TabRemap.from_tabs(existing=4, recorded=2)
    with pytest.raises(ValueError, match=rf"tab_focus \[{index}\] is outside the 2 recorded tab"):
        remap.remap(TabFocus(index))
    with pytest.raises(ValueError):
        remap.live_index(index)


def test_no_open_tabs_leaves_indices_as_recorded() -> None:
    assert TabRemap.from_tabs(existing=0, recorded=3).remap(TabFocus(2)) == TabFocus(2)


def test_negative_counts_are_rejected() -> None:
    with pytest.raises(ValueError):
        TabRemap.from_tabs(existing=-1, recorded=1)
