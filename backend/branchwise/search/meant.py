"""What the model plainly meant: an action on an element that cannot take it, around exactly one that can.

A real 1.5B model types into the `search` landmark around a search box, clicks a product's card or a project's heading
instead of the one link in it, and proposes the same again, word for word, after being told where to type or click
(BENCHMARKS: "A refused `type` names where to type"). Such an action is moved onto that one element before anything
else sees it, so it is classified, asked about, run, recorded and shown as what it is: a click on that link, typing
into that field. Only an action validation refuses on its page (a click on a line that cannot react, typing into what
is not a text field) is ever moved, and only where the choice is not a guess: two fields or two links inside, and it
is refused as before, naming them.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ..actions import Action, Click, ParsedResponse, SelectOption, Type
from ..observation import PageView
from ..safety.secrets import SecretKeeper
from .roles import RoleModel
from .validate import SELECT_ROLES, TEXT_ROLES, controls_inside, line_of, text_fields_inside

log = logging.getLogger(__name__)


def retarget(action: Action, page: PageView | None) -> Action | None:
    """`action` moved onto the one element inside its target that can take it, or None (it stays as proposed): a
    `type` into something not a text field holding one, a click on a line that cannot react holding one control, a
    `select_option` on something not a list of options holding one."""
    element_id = action.element_id
    element = page.elements.get(element_id) if page is not None and element_id is not None else None
    if page is None or element is None:
        return None
    match action:
        case Type() if element.role not in TEXT_ROLES:
            inside = text_fields_inside(page, element)
        case Click() if not element.reacts:
            inside = controls_inside(page, element, limit=2)
        case SelectOption() if element.role not in SELECT_ROLES:
            inside = [e for e in page.descendants(element) if e.role in SELECT_ROLES]
        case _:
            return None
    if len(inside) != 1:
        return None
    moved = replace(action, element_id=inside[0].id)
    log.info("`%s` is on %s; taken as `%s`, on the one %s inside it", action.to_text(), line_of(element),
             moved.to_text(), line_of(inside[0]))
    return moved


def proposed(parsed: ParsedResponse, page: PageView | None, secrets: SecretKeeper,
             model: RoleModel) -> tuple[Action, str]:
    """The action and thought a parsed answer proposes on `page`, as they go on: moved onto what the model meant
    (`retarget`), a typed password or card number sealed (shown as [••••••] from here on), and what the answer did
    wrong counted for `model`'s role (a second action cut off, an action moved)."""
    if parsed.dropped:
        model.noted("several_actions")
    action = parsed.action
    moved = retarget(action, page)
    if moved is not None:
        model.noted("retargeted")
        action = moved
    return secrets.seal(action, parsed.thought.strip(), page)
