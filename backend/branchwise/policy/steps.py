"""How a policy prompt's history writes a step already taken: in words, with the element it acted on and no element id.

The next page numbers its elements anew, so an earlier step's id is never one to use again; yet a small model copies
what its history shows. On 16 real pages where an earlier step's id was gone, Qwen2.5-Coder-1.5B answered with such an
id in 62-71 % of its replies when the history showed the actions as written (`click [88]`), 54 % in WebArena's own
form (`click [88] where [88] is link 'Forums'`), 4 % with the element in place of the id in the action syntax (`click
link 'Forums'`, but then 44 % of its replies copied that form and did not parse), and never in the past tense, where
65 % of its replies named an element of the page, against 17 % (`make bench-history-ids`, BENCHMARKS.md).
"""

from __future__ import annotations

import re

from ..actions import (
    Action,
    Click,
    CloseTab,
    GoBack,
    GoForward,
    Goto,
    Hover,
    NewTab,
    Press,
    Scroll,
    SelectOption,
    Stop,
    TabFocus,
    Type,
)
from ..actions.model import SECRET_MASK
from ..observation.render import quote

# An element id as the model writes one in its reasoning ("I will click [1454]").
_ELEMENT_ID = re.compile(r"\s?\[\d+\]")


def element_words(role: str, name: str) -> str:
    """An element as a step names it: `link 'Forums'`."""
    return f"{role} {quote(name)}" if name else f"a {role}"


def step_words(action: Action, element: str = "") -> str:
    """`action` in the past tense, naming `element` (see `element_words`; "" when unknown) instead of its id."""
    target = element or "an element"
    match action:
        case Click():
            return f"clicked {target}"
        case Hover():
            return f"hovered over {target}"
        case Type(text=text, press_enter=enter, secret=secret):
            typed = f"typed {quote(SECRET_MASK if secret else text)} into {target}"
            return typed + (" and pressed Enter" if enter else "")
        case Press(keys=keys, element_id=element_id):
            return f"pressed {keys}" + ("" if element_id is None else f" on {target}")
        case SelectOption(values=values):
            return f"selected {', '.join(quote(v) for v in values)} in {target}"
        case Scroll(direction=direction):
            return f"scrolled {direction}"
        case Goto(url=url):
            return f"went to {url}"
        case GoBack():
            return "went back"
        case GoForward():
            return "went forward"
        case NewTab(url=url):
            return "opened a new tab" + (f" at {url}" if url else "")
        case TabFocus(index=index):
            return f"switched to tab {index}"
        case CloseTab():
            return "closed the tab"
        case Stop(answer=answer):
            return f"answered {quote(answer)}"


def without_element_ids(text: str) -> str:
    """A step's reasoning without the element ids it mentions, which were its page's."""
    return _ELEMENT_ID.sub("", text)
