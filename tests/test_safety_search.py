"""How search uses the classifier: one inspect round trip per step, only on the live page, fail safe without it; and
the navigation class is treated exactly like safe by selection and pruning."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace

from branchwise.actions import Action, Click, Scroll, Type
from branchwise.agent.env import EnvView
from branchwise.core.classes import ActionClass, Classification
from branchwise.link import ExtensionError
from branchwise.observation import PageView
from branchwise.protocol import ElementFacts, FormFacts, LinkFacts
from branchwise.safety import SafetyClassifier
from branchwise.search.context import classify_candidates
from branchwise.search.frontier import FrontierItem, prune_frontier, select_action
from branchwise.search.frontier import SelectionConfig as Selection
from branchwise.search.tree import Node

from pageviews import page

URL = "https://shop.example/product/7"
# [1] link 'Garden', [2] button 'Add to cart', [3] searchbox 'Search products'
PRODUCT = page(("link", "Garden"), ("button", "Add to cart"), ("searchbox", "Search products"), url=URL)
FACTS = {
    1: ElementFacts(found=True, tag="a", link=LinkFacts(href="https://shop.example/category/garden",
                                                         raw_href="/category/garden"), document_url=URL),
    2: ElementFacts(found=True, tag="button", type="submit", document_url=URL,
                    form=FormFacts(method="post", action="https://shop.example/cart/add", submits=True)),
    3: ElementFacts(found=True, tag="input", type="search", document_url=URL,
                    form=FormFacts(method="get", action="https://shop.example/search", submits=True)),
}
CANDIDATES: list[Action] = [Click(1), Click(2), Type(3, "lamp", press_enter=True), Scroll("down")]


@dataclass
class Env:
    """The working tab: its last observation and every inspect call it got."""

    shown: PageView
    facts: dict[int, ElementFacts] = field(default_factory=lambda: dict(FACTS))
    fail: bool = False
    calls: list[list[int]] = field(default_factory=list)

    @property
    def last(self) -> EnvView:
        return EnvView(self.shown.text, self.shown.url, self.shown.title, tab_id=1, raw_node_count=3, page=self.shown)

    async def inspect(self, element_ids: Iterable[int]) -> dict[int, ElementFacts]:
        ids = list(element_ids)
        self.calls.append(ids)
        if self.fail:
            raise ExtensionError("tab_closed", "the tab was closed (DOM.resolveNode)")
        return {i: self.facts[i] for i in ids}


def classify(env: Env, node_page: PageView, current: int = 0) -> list[Classification]:
    node = Node(id=0, parent_id=None, depth=0, url=URL, page=node_page)
    ctx = SimpleNamespace(env=env, classifier=SafetyClassifier(), state=SimpleNamespace(current=current))
    return asyncio.run(classify_candidates(ctx, node, CANDIDATES))  # type: ignore[arg-type]


def classes(verdicts: list[Classification]) -> list[ActionClass]:
    return [v.action_class for v in verdicts]


def test_one_inspect_call_for_all_candidates_of_the_live_page() -> None:
    env = Env(PRODUCT)
    verdicts = classify(env, PRODUCT)
    assert env.calls == [[1, 2, 3]]
    assert classes(verdicts) == [ActionClass.NAVIGATION, ActionClass.DESTRUCTIVE, ActionClass.NAVIGATION,
                                 ActionClass.SAFE]
    assert verdicts[1].reasons[0] == "the button 'Add to cart' submits a POST form to /cart/add"


def test_a_fresh_capture_of_the_same_page_is_inspected_through_the_locators() -> None:
    # The tab shows the page again with other ids (an element was added first): facts come back under the node's ids.
    shown = page(("heading", "Sale"), ("link", "Garden"), ("button", "Add to cart"), ("searchbox", "Search products"),
                 url=URL)
    env = Env(shown, facts={i + 1: facts for i, facts in FACTS.items()})
    verdicts = classify(env, PRODUCT)
    assert env.calls == [[2, 3, 4]]
    assert classes(verdicts)[:3] == [ActionClass.NAVIGATION, ActionClass.DESTRUCTIVE, ActionClass.NAVIGATION]


def test_no_inspection_away_from_the_node_and_fail_safe_without_facts() -> None:
    env = Env(PRODUCT)
    away = classify(env, PRODUCT, current=5)
    assert env.calls == []
    failing = Env(PRODUCT, fail=True)
    broken = classify(failing, PRODUCT)
    assert failing.calls == [[1, 2, 3]]
    for verdicts in (away, broken):
        # Without facts: the link still navigates, the button and Enter are destructive (fail safe).
        assert classes(verdicts) == [ActionClass.NAVIGATION, ActionClass.DESTRUCTIVE, ActionClass.DESTRUCTIVE,
                                     ActionClass.SAFE]


def item(cls: ActionClass, reward: float, seq: int, text: str = "") -> FrontierItem:
    return FrontierItem(node_id=0, action=Click(seq), action_text=text or f"click [{seq}]", action_class=cls,
                        reward=reward, seq=seq)


def test_navigation_is_selected_and_pruned_like_safe() -> None:
    config = Selection()
    navigation, destructive = item(ActionClass.NAVIGATION, 0.2, 1), item(ActionClass.DESTRUCTIVE, 0.9, 2)
    chosen, rest = select_action([destructive, navigation], config=config, budget=4, terminating_count=0,
                                 destruction_count=0)
    assert chosen is navigation and rest == [destructive]
    safe_twin = dataclasses.replace(navigation, action_class=ActionClass.SAFE)
    for first in (navigation, safe_twin):
        items = [first, item(ActionClass.SAFE, 0.5, 3), item(ActionClass.DESTRUCTIVE, 0.1, 4),
                 item(ActionClass.DESTRUCTIVE, 0.3, 5), item(ActionClass.NAVIGATION, 0.4, 6)]
        kept = prune_frontier(items, budget=3, reachable=lambda _: True)
        assert [i.seq for i in kept] == [3, 5, 6], "lowest-reward free action dropped, best destructive kept"
    assert ActionClass.NAVIGATION.priority == ActionClass.SAFE.priority == 3
    assert ActionClass.NAVIGATION.runs_freely and not ActionClass.DESTRUCTIVE.runs_freely


def test_duplicate_navigation_items_merge_like_safe_ones() -> None:
    twins = [item(ActionClass.NAVIGATION, 0.2, 1, "click [9]"), item(ActionClass.NAVIGATION, 0.3, 2, "click [9]"),
             item(ActionClass.SAFE, 0.1, 3), item(ActionClass.SAFE, 0.05, 4)]
    kept = prune_frontier(twins, budget=2, reachable=lambda _: True)
    assert [(i.seq, round(i.reward, 2)) for i in kept] == [(1, 0.5), (3, 0.1)]
