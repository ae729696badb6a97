"""retarget and proposed: an action on an element around exactly one that can take it goes onto that one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from branchwise.actions import Action, Click, Hover, Press, SelectOption, Stop, Type, parse_response
from branchwise.core.approval import ScriptedApprover
from branchwise.safety.secrets import SecretKeeper
from branchwise.search.best_first import BestFirstConfig, BestFirstSearch
from branchwise.search.context import SearchOutcome
from branchwise.search.greedy import GreedySearch
from branchwise.search.meant import proposed, retarget
from branchwise.search.roles import RoleModel
from branchwise.search.validate import validate_action
from branchwise.search.value import ValueConfig

from fake_models import FakeModel
from fake_site import HOME_URL, ORCHARD_URL, SHELF_URL, act, by_page, search_site, verdict
from pageviews import page

# As a real 1.5B model met them: 1 a product card (article) with 2 the link to the product, 3 its price; 4 the
# search landmark around 5 a search box and 6 its button; 7 a heading around 8 a project's link; 9 a list of two
# links (10, 11); 12 a sort form around 13 a select (its options 14, 15); 16 a form with two fields (17, 18); 19 a
# card around 20 a disabled button.
PAGE = page(
    ("article", ""), ("link", "Hearthwell Premium Electric Kettle"), ("StaticText", "$66.95"),
    ("search", ""), ("searchbox", "Search GitLab"), ("button", "Search"),
    ("heading", "docs-team / Design Tokens"), ("link", "docs-team / Design Tokens"),
    ("list", "Top rated products"), ("link", "Frying Pan"), ("link", "Board Game"),
    ("form", "Sort"), ("combobox", "Sort by"), ("option", "Price"), ("option", "Name"),
    ("form", "Address"), ("textbox", "Street"), ("textbox", "City"),
    ("article", ""), ("button", "Buy", {"disabled": "true"}),
    children={1: (2, 3), 4: (5, 6), 7: (8,), 9: (10, 11), 12: (13,), 13: (14, 15), 16: (17, 18), 19: (20,)},
    inert={1, 3, 4, 7, 9, 12, 14, 15, 16, 19},
)


@pytest.mark.parametrize(("action", "meant"), [
    (Click(1), Click(2)),  # a product card: its one link
    (Click(7), Click(8)),  # a project's heading: its one link
    (Type(4, "arjun", True), Type(5, "arjun", True)),  # the search landmark: its one search box, Enter kept
    (SelectOption(12, ("Price",)), SelectOption(13, ("Price",))),  # the sort form: its one select
    (Click(19), Click(20)),  # moved, then refused as disabled, by name
])
def test_an_action_on_a_container_around_one_element_that_can_take_it_goes_onto_that_one(
        action: Action, meant: Action) -> None:
    assert retarget(action, PAGE) == meant


@pytest.mark.parametrize("action", [
    Click(9),  # two links inside: which one is a guess
    Type(16, "Elm St", False),  # two fields inside
    Click(3), Type(1, "kettle", False),  # nothing inside that could take it
    Click(2), Type(5, "x", False), SelectOption(13, ("Name",)),  # already on what can take it
    Hover(1), Press("Enter", 4),  # a hover or key goes where it was sent
    Click(42),  # not on the page
    Stop("$66.95"),
])
def test_anything_else_stays_as_proposed(action: Action) -> None:
    assert retarget(action, PAGE) is None


def test_only_an_action_validation_would_refuse_is_moved() -> None:
    """Moving never overrides a choice the page allows: whatever validate_action lets run stays as it is."""
    candidates: list[Action] = [*(Click(n) for n in PAGE.elements), *(Type(n, "x", False) for n in PAGE.elements),
                  *(SelectOption(n, ("Price",)) for n in PAGE.elements)]
    for action in candidates:
        if validate_action(action, PAGE) is None:
            assert retarget(action, PAGE) is None, action
    assert retarget(Click(1), None) is None


def test_a_moved_action_is_checked_like_any_other() -> None:
    moved = retarget(Click(19), PAGE)
    assert moved is not None
    refusal = validate_action(moved, PAGE)
    assert refusal is not None and refusal.reason == "[20] button 'Buy' is disabled"


def test_proposed_moves_counts_and_seals() -> None:
    """What a role's answer proposes, as it goes on to be checked and run: the action moved and counted, a second
    action cut off counted, a typed password masked."""
    model = RoleModel(FakeModel.always(""), "policy")
    action, thought = proposed(parse_response("The kettle's page has its price. ```click [1] click [7]```"),
                               PAGE, SecretKeeper(), model)
    assert (action, thought) == (Click(2), "The kettle's page has its price.")
    assert dict(model.mistakes) == {"retargeted": 1, "several_actions": 1}


def test_a_password_typed_into_the_form_around_its_field_is_sealed() -> None:
    form = page(("form", "Sign in"), ("textbox", "Password"), children={1: (2,)}, inert={1})
    login = replace(form, elements={**form.elements, 2: replace(form.elements[2], sensitive=True)})
    action, _ = proposed(parse_response("```type [1] [hunter22] [1]```"), login, SecretKeeper(),
                         RoleModel(FakeModel.always(""), "policy"))
    assert isinstance(action, Type) and action.element_id == 2 and action.secret
    assert "hunter22" not in action.to_text()


def test_greedy_clicks_the_link_in_the_heading_the_model_named(tmp_path: Path) -> None:
    """The run goes where the model meant, and its record, history and count say what ran: the link."""
    policy = by_page({HOME_URL: act(f"goto [{SHELF_URL}]"), SHELF_URL: act("click [1]"),
                      ORCHARD_URL: act("stop [1997]")})
    run = search_site(tmp_path, GreedySearch(), policy)
    assert run.outcome == SearchOutcome("finished", answer="1997")
    assert (SHELF_URL, "click [2]") in run.env.executed
    assert "click [2]" in [n.action_text for n in run.stored.nodes]
    assert "click [1]" not in [n.action_text for n in run.stored.nodes]
    assert "clicked link 'Orchard'" in run.policy.calls[-1].last
    assert dict(run.roles.policy.mistakes) == {"retargeted": 1}


def test_search_classifies_and_asks_about_the_button_in_the_card_the_model_named(tmp_path: Path) -> None:
    """A click on a card around a Buy button is a purchase: asked about as `click [4]` on the button, and refused."""
    policy = by_page({HOME_URL: act(f"goto [{SHELF_URL}]"), SHELF_URL: act("click [3]"),
                      ORCHARD_URL: act("stop [1997]")})
    approver = ScriptedApprover([False])
    run = search_site(tmp_path, BestFirstSearch(BestFirstConfig(candidates=3, value=ValueConfig(n=1))), policy,
                      lambda call: verdict("failure", "yes"), approver=approver)
    assert [(r.url, r.action_text) for r in approver.requests] == [(SHELF_URL, "click [4]")]
    assert not any(url == SHELF_URL for url, _ in run.env.executed)
