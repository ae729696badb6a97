"""Locators (find the same element in another capture) and ids across CDP targets."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from branchwise.observation import Locator, LocatorStep, PageView, process
from branchwise.observation.ids import assign_ids, remap_stride
from branchwise.protocol import AXNode, AXValue, ElementRef, FrameTree, Observation

FIXTURES = Path(__file__).parent / "fixtures" / "axtree"
SMALL = ("shop_home", "form", "form_second", "iframe_same_origin", "iframe_cross_origin", "shadow_dom", "hidden",
         "repeated_text")


def load(name: str) -> Observation:
    path = FIXTURES / f"{name}.json"
    if path.exists():
        return Observation.model_validate_json(path.read_bytes())
    return Observation.model_validate_json(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))


def element_id(view: PageView, role: str, name: str, nth: int = 0) -> int:
    return [e.id for e in view.elements.values() if e.role == role and e.name == name][nth]


def renumber(observation: Observation, new: Callable[[int], int]) -> Observation:
    """The same page with every DOM node id changed, as after a reload in a fresh renderer."""
    obs = observation.model_copy(deep=True)

    def node_key(key: str) -> str:
        return key if key.startswith("-") else str(new(int(key)))

    for frame in obs.frames:
        if frame.owner_node_id is not None:
            frame.owner_node_id = new(frame.owner_node_id)
        for node in frame.nodes:
            node.nodeId = node_key(node.nodeId)
            node.childIds = [node_key(child) for child in node.childIds]
            node.parentId = node_key(node.parentId) if node.parentId else None
            if node.backendDOMNodeId is not None:
                node.backendDOMNodeId = new(node.backendDOMNodeId)
    return obs


def ax(node_id: int, role: str, name: str = "", children: tuple[int, ...] = (), parent: int | None = None) -> AXNode:
    return AXNode(
        nodeId=str(node_id), role=AXValue(type="role", value=role), name=AXValue(type="computedString", value=name),
        childIds=[str(c) for c in children], parentId=str(parent) if parent is not None else None,
        backendDOMNodeId=node_id,
    )


def find_node(nodes: list[AXNode], node_id: str) -> AXNode:
    return next(node for node in nodes if node.nodeId == node_id)


# ---------------------------------------------------------------------------------------------------------------------
# Locators


@pytest.mark.parametrize("name", [*SMALL, "large"])
def test_every_locator_finds_its_own_element(name: str) -> None:
    view = process(load(name))
    assert view.elements
    for element_id_, element in view.elements.items():
        assert view.find(element.locator) == element_id_


def test_locator_contents() -> None:
    view = process(load("shop_home"))
    third_button = view.elements[element_id(view, "button", "Add to Cart", 2)].locator
    assert third_button == Locator(
        role="button", name="Add to Cart", occurrence=2, ancestors=(LocatorStep("main", ""),),
        heading="Featured products",
    )
    home = view.elements[element_id(view, "link", "Home")].locator
    assert home.ancestors == (LocatorStep("banner", ""), LocatorStep("navigation", "Main"))
    assert home.heading is None


def test_locator_survives_json() -> None:
    view = process(load("iframe_same_origin"))
    locator = view.elements[element_id(view, "button", "Send")].locator
    adapter = TypeAdapter(Locator)
    assert adapter.validate_json(adapter.dump_json(locator)) == locator


def _assert_same_page(first: PageView, second: PageView) -> None:
    """Every element of `first` is found in `second` at the same place in document order, with the same content."""
    order = {element_id_: position for position, element_id_ in enumerate(second.elements)}
    for position, element in enumerate(first.elements.values()):
        found = second.find(element.locator)
        assert found is not None, element.locator
        twin = second.elements[found]
        assert order[found] == position
        assert (twin.role, twin.name, twin.value, dict(twin.props)) == (
            element.role, element.name, element.value, dict(element.props))


def test_second_capture_of_the_form() -> None:
    first, second = process(load("form")), process(load("form_second"))
    shared = set(first.elements) & set(second.elements)
    assert len(shared) < len(first.elements) / 2, "the second capture was meant to renumber the DOM"
    assert len(first.elements) == len(second.elements)
    _assert_same_page(first, second)


def test_renumbered_tree() -> None:
    obs = load("form")
    first = process(obs)
    second = process(renumber(obs, lambda old: 50_000 - 3 * old))
    assert not set(first.elements) & set(second.elements)
    _assert_same_page(first, second)
    password = first.elements[element_id(first, "textbox", "Password")]
    assert second.find(password.locator) == 50_000 - 3 * password.id


def test_renamed_landmark_falls_back_to_unique_role_and_name() -> None:
    obs = load("shop_home")
    before = process(obs)
    changed = obs.model_copy(deep=True)
    nav = next(n for n in changed.frames[0].nodes if n.role and n.role.value == "navigation")
    nav.name = AXValue(type="computedString", value="Primary")
    after = process(changed)
    home = before.elements[element_id(before, "link", "Home")].locator
    assert after.elements[element_id(after, "link", "Home")].locator != home
    assert after.find(home) == element_id(after, "link", "Home")


def test_changed_counter_in_a_name_is_tolerated() -> None:
    obs = load("shop_home")
    before = process(obs)
    changed = obs.model_copy(deep=True)
    cart = next(n for n in changed.frames[0].nodes if n.name and n.name.value == "Cart (2)")
    cart.name = AXValue(type="computedString", value="Cart (3)")
    after = process(changed)
    assert after.find(before.elements[element_id(before, "link", "Cart (2)")].locator) == cart.backendDOMNodeId


def test_missing_or_ambiguous_elements_give_none() -> None:
    obs = load("shop_home")
    before = process(obs)
    changed = obs.model_copy(deep=True)
    nodes = changed.frames[0].nodes
    listing = next(n for n in nodes if n.role and n.role.value == "list")
    listing.childIds = listing.childIds[1:]  # the first product is gone
    nav = next(n for n in nodes if n.role and n.role.value == "navigation")
    nav.childIds = [c for c in nav.childIds if find_node(nodes, c).name is None
                    or find_node(nodes, c).name.value != "Deals"]  # type: ignore[union-attr]
    after = process(changed)
    assert after.find(before.elements[element_id(before, "link", "Deals")].locator) is None
    # Two "Add to Cart" buttons are left with the same context: which one was the third is unknowable.
    assert after.find(before.elements[element_id(before, "button", "Add to Cart", 2)].locator) is None
    assert after.find(before.elements[element_id(before, "link", "Blue Teapot")].locator) == \
        element_id(after, "link", "Blue Teapot")
    assert after.find(before.elements[element_id(before, "StaticText", "$8.00")].locator) == \
        element_id(after, "StaticText", "$8.00")


def test_heading_tells_repeated_buttons_apart_after_a_removal() -> None:
    obs = load("large")
    before = process(obs)
    changed = renumber(obs, lambda old: old + 100_000)
    main = next(n for n in changed.frames[0].nodes if n.role and n.role.value == "main")
    grid = find_node(changed.frames[0].nodes, main.childIds[-1])
    first_card = grid.childIds.pop(0)
    assert find_node(changed.frames[0].nodes, first_card).role.value == "article"  # type: ignore[union-attr]
    after = process(changed)
    button = before.elements[element_id(before, "button", "Add to Cart", 5)]
    assert button.locator.heading == "Product number 5"
    found = after.find(button.locator)
    assert found == button.id + 100_000
    assert after.elements[found].locator.occurrence == 4


# ---------------------------------------------------------------------------------------------------------------------
# Ids across targets


def _page(oopif_ids: dict[str, tuple[int, ...]], tab_ids: tuple[int, ...] = (1, 2, 3, 4, 5)) -> Observation:
    """A tab whose last node is an iframe (raw id tab_ids[-1]) hosting each out-of-process target in turn."""
    root, *rest = tab_ids
    frames = [FrameTree(frame_id="main", target=None, nodes=[
        ax(root, "RootWebArea", "Host", tuple(rest)),
        *(ax(i, "Iframe" if i == rest[-1] else "button", f"tab {i}", parent=root) for i in rest),
    ])]
    for number, (target, ids) in enumerate(oopif_ids.items()):
        doc, *buttons = ids
        frames.append(FrameTree(
            frame_id=target, target=target, parent_frame_id="main", owner_node_id=rest[-1], nodes=[
                ax(doc, "RootWebArea", f"Frame {number}", tuple(buttons)),
                *(ax(i, "button", f"{target} {i}", parent=doc) for i in buttons),
            ]))
    return Observation(tab_id=1, url="http://host/", title="Host", frames=frames)


def test_remap_stride() -> None:
    assert remap_stride(7) == 1000
    assert remap_stride(999) == 1000
    assert remap_stride(1000) == 10_000
    assert remap_stride(123_456) == 1_000_000


def test_colliding_ids_are_remapped_deterministically() -> None:
    obs = _page({"T1": (1, 2, 7), "T2": (1, 9)})
    view = process(obs)
    assert [line.strip() for line in view.text.split("\n")[3:]] == [
        "[1] RootWebArea 'Host'",
        "[2] button 'tab 2'",
        "[3] button 'tab 3'",
        "[4] button 'tab 4'",
        "[5] Iframe 'tab 5'",
        "[1002] button 'T1 2'",  # 2 is taken by the tab
        "[7] button 'T1 7'",  # free: kept
        "[9] button 'T2 9'",
    ]
    ids = assign_ids(obs.frames)
    assert ids.id_of("T1", 1) == 1001 and ids.id_of("T2", 1) == 2001  # T2's document: 1 and 1001 taken
    assert view.ref(1002) == ElementRef(backend_node_id=2, target="T1")
    assert view.ref(2) == ElementRef(backend_node_id=2, target=None)
    assert process(obs).text == view.text


def test_tab_ids_are_never_remapped_even_when_a_frame_comes_first() -> None:
    obs = _page({"T1": (1, 2)})
    obs.frames.reverse()
    view = process(obs)
    assert view.ref(2) == ElementRef(backend_node_id=2, target=None)
    assert view.ref(1002) == ElementRef(backend_node_id=2, target="T1")


def test_nested_out_of_process_frame_is_spliced_in_its_own_target() -> None:
    """The owner id of a frame inside an out-of-process frame is in that frame's numbering, not the tab's."""
    obs = _page({"T1": (1, 3)})
    inner_frame = obs.frames[1]
    inner_frame.nodes[0].childIds.append("4")
    inner_frame.nodes.append(ax(4, "Iframe", "inner", parent=1))
    obs.frames.append(FrameTree(frame_id="T2", target="T2", parent_frame_id="T1", owner_node_id=4, nodes=[
        ax(1, "RootWebArea", "Inner doc", (6,)), ax(6, "button", "Deep", parent=1),
    ]))
    lines = process(obs).text.split("\n")[3:]
    deep = lines.index("\t\t\t[6] button 'Deep'")  # 6 is free everywhere: kept
    assert lines[deep - 1] == "\t\t[1004] Iframe 'inner'"  # T1's raw 4 collides with the tab's 4
