"""A page longer than the model's budget is shown around its viewport (WebArena's current_viewport_only), with one
outline line per section above and below: scrolling moves what is shown, and every link is either shown or counted."""

from __future__ import annotations

import re

from branchwise.observation import process
from branchwise.observation.viewport import windowed_text
from branchwise.protocol import AXNode, AXValue, FrameTree, Observation, ScrollInfo

VIEWPORT = 800
SECTIONS = 20
LINKS = 10


def ax(node_id: int, role: str, name: str = "", children: tuple[int, ...] = ()) -> AXNode:
    return AXNode(nodeId=str(node_id), role=AXValue(type="role", value=role),
                  name=AXValue(type="computedString", value=name), childIds=[str(c) for c in children],
                  backendDOMNodeId=node_id)


def long_page(scroll_y: float = 0, *, laid_out: bool = True, unplaced: bool = False) -> Observation:
    """20 sections of a heading and 10 links, 340 px each (6,800 px in all). `unplaced`: section 5's links have no
    layout box of their own (they stand where their list does)."""
    nodes: list[AXNode] = []
    bounds = [1, 0, VIEWPORT]  # Chromium lays the document out as one viewport tall
    top_ids: list[int] = []
    y, next_id = 0, 2
    for section in range(SECTIONS):
        heading, group = next_id, next_id + 1
        links = list(range(group + 1, group + 1 + LINKS))
        next_id = links[-1] + 1
        nodes.append(ax(heading, "heading", f"Section {section}"))
        nodes.append(ax(group, "list", "", tuple(links)))
        bounds += [heading, y, 30, group, y + 40, LINKS * 30]
        y += 40
        for k, link in enumerate(links):
            nodes.append(ax(link, "link", f"Item {section}-{k}"))
            if not (unplaced and section == 5):
                bounds += [link, y, 20]
            y += 30
        top_ids += [heading, group]
    root = ax(1, "RootWebArea", "Catalogue", tuple(top_ids))
    frame = FrameTree(frame_id="main", url="http://shop.test/all", nodes=[root, *nodes],
                      node_bounds=bounds if laid_out else [])
    return Observation(tab_id=1, url="http://shop.test/all", title="Catalogue", frames=[frame],
                       scroll=ScrollInfo(y=scroll_y, viewport_height=VIEWPORT, viewport_width=1280,
                                         page_height=y, page_width=1280))


def shown_items(text: str) -> set[str]:
    return set(re.findall(r"link 'Item (\d+-\d+)'", text))


def counted_links(text: str) -> int:
    return sum(int(n) for n in re.findall(r"(\d+) links", text))


def test_the_top_of_a_long_page_with_an_outline_of_the_rest() -> None:
    page = process(long_page())
    text = windowed_text(page, long_page().scroll, 2000)
    assert text is not None and len(text) <= 2000 < len(page.text)
    assert text.startswith("Tab 0 (current): Catalogue\nURL: http://shop.test/all\n\n[Part of a long page: 0-")
    assert "the viewport is screen 1 of 9]" in text
    assert "0-0" in shown_items(text) and "19-9" not in shown_items(text)
    assert "Below this part of the page (scroll [down] to see it):" in text
    assert "Above this part" not in text
    assert "- heading 'Section 19'" not in text and "- and 8 more sections below" in text
    # A section cut by the window: what is hidden of it is said to be the rest of it.
    assert "link 'Item 4-0'" in text and "- the rest of heading 'Section 4': 3 links (3 lines)" in text


def test_scrolling_moves_what_is_shown_and_the_outline_covers_both_sides() -> None:
    observation = long_page(scroll_y=3400)  # section 10 starts at 3,400 px
    page = process(observation)
    text = windowed_text(page, observation.scroll, 2000)
    assert text is not None
    assert {"10-0", "10-9"} <= shown_items(text) and "0-0" not in shown_items(text)
    assert "the viewport is screen 5 of 9]" in text
    above = text.index("Above this part of the page (scroll [up] to see it):")
    below = text.index("Below this part of the page (scroll [down] to see it):")
    assert above < text.index("link 'Item 10-0'") < below
    assert "- heading 'Section 8': 10 links (11 lines)" in text[above:below]
    # The document itself and the section lists around what is shown keep their lines: indentation stays structure.
    assert "[1] RootWebArea 'Catalogue'" in text


def test_every_link_is_shown_or_counted() -> None:
    for scroll_y in (0, 1700, 3400, 6000):
        observation = long_page(scroll_y)
        text = windowed_text(process(observation), observation.scroll, 2500)
        assert text is not None
        hidden_sections = len(re.findall(r"and (\d+) more sections", text))
        if hidden_sections == 0:
            assert len(shown_items(text)) + counted_links(text) == SECTIONS * LINKS


def test_a_larger_budget_shows_more_screens_around_the_viewport() -> None:
    observation = long_page(scroll_y=3400)
    page = process(observation)
    small = windowed_text(page, observation.scroll, 1500)
    large = windowed_text(page, observation.scroll, 6000)
    assert small is not None and large is not None
    assert shown_items(small) < shown_items(large)
    assert len(large) <= 6000


def test_elements_without_a_box_stand_where_their_parent_does() -> None:
    observation = long_page(scroll_y=1700)  # section 5: its list is laid out, its links are not
    text = windowed_text(process(observation), observation.scroll, 1500)
    assert text is not None and {"5-0", "5-9"} <= shown_items(text)
    unplaced = long_page(scroll_y=1700, unplaced=True)
    text = windowed_text(process(unplaced), unplaced.scroll, 1500)
    assert text is not None and {"5-0", "5-9"} <= shown_items(text)


def test_without_layout_there_is_no_window() -> None:
    observation = long_page(laid_out=False)
    assert windowed_text(process(observation), observation.scroll, 2000) is None


def test_a_tiny_budget_still_shows_the_viewport() -> None:
    observation = long_page(scroll_y=3400)
    text = windowed_text(process(observation), observation.scroll, 100)
    assert text is not None and "10-0" in shown_items(text)
