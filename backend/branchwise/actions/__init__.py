"""Typed browser actions, their canonical WebArena text, and a tolerant parser for model output.

`parse_response` splits a chain-of-thought reply into thought and action; `parse_action` reads one action in WebArena
bracket syntax (`type [12] [hello] [1]`) or BrowserGym call syntax (`fill('12', 'hello')`). Every action's
`to_text()` parses back to an equal action.
"""

from .brackets import VALID_ACTIONS
from .calls import VALID_CALLS
from .keys import normalize_keys
from .model import (
    ACTION_TYPES,
    INFEASIBLE_ANSWER,
    SECRET_MASK,
    Action,
    ActionParseError,
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
from .parse import ParsedResponse, parse_action, parse_response

__all__ = [
    "ACTION_TYPES",
    "INFEASIBLE_ANSWER",
    "SECRET_MASK",
    "VALID_ACTIONS",
    "VALID_CALLS",
    "Action",
    "ActionParseError",
    "Click",
    "CloseTab",
    "GoBack",
    "GoForward",
    "Goto",
    "Hover",
    "NewTab",
    "ParsedResponse",
    "Press",
    "Scroll",
    "SelectOption",
    "Stop",
    "TabFocus",
    "Type",
    "normalize_keys",
    "parse_action",
    "parse_response",
]
