"""WebArena's bracket syntax: `click [12]`, `type [12] [hello] [1]`, `stop [answer]`.

Free text may itself hold brackets (`type [5] [size [L]] [0]`), so free-text arguments are read from the first '['
to the last ']' of what remains, never by the first ']'. What stays ambiguous:
- `type [5] [a] [1]` is always text "a" with Enter; text that really ends in "] [1" must be written with the flag.
- `type [5] [a] [2]` is text "a] [2" (only 0/1/true/false count as the Enter flag).
- `select_option [5] [a] [b]` is two values; a single value containing "] [" cannot be written.
`goto` and `stop` also take a bare argument (`stop 42`) as long as it holds no bracket, `tab_focus` a bare index and
`scroll` a bare direction (`scroll down`, `scroll down [1]`: 11 of the 65 policy replies that did not parse in the
real-model run's store were these, and one `tab_focus 1`).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Callable
from types import MappingProxyType

from .keys import normalize_keys
from .model import (
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

logger = logging.getLogger(__name__)

USAGE = MappingProxyType(
    {
        "click": "click [id]",
        "hover": "hover [id]",
        "type": "type [id] [text] [0|1]",
        "press": "press [key_comb]",
        "scroll": "scroll [up|down]",
        "select_option": "select_option [id] [value]",
        "goto": "goto [url]",
        "go_back": "go_back",
        "go_forward": "go_forward",
        "new_tab": "new_tab",
        "tab_focus": "tab_focus [index]",
        "close_tab": "close_tab",
        "stop": "stop [answer]",
    }
)
VALID_ACTIONS = ", ".join(USAGE.values())

_EXAMPLES = MappingProxyType(
    {
        "click": "click [12]",
        "hover": "hover [12]",
        "type": "type [12] [hello] [1]",
        "press": "press [12] [Enter]",
        "select_option": "select_option [12] [Blue]",
    }
)

_ENTER_FLAG = re.compile(r"\[\s*(?:press_enter_after\s*=\s*)?(0|1|true|false)\s*\]\s*$", re.IGNORECASE)
_TARGETED_PRESS = re.compile(r"^\[\s*(\d+)\s*\]\s*(\[.*\])$", re.DOTALL)
# `scroll down`, or `scroll down [1]` with an amount the action has no room for; never prose (`scroll down to the
# footer`), which a plan's line may hold.
_BARE_DIRECTION = re.compile(r"(up|down)((?:\s*\[[^\[\]]*\])*)", re.IGNORECASE)


def element_id(value: object, example: str = "click [12]") -> int:
    """Read an element id given as an int or a string of digits."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    digits = value.strip().strip("'\"") if isinstance(value, str) else ""
    if digits.isascii() and digits.isdigit():
        return int(digits)
    raise ActionParseError(f"element id must be a number, got '{value}', e.g. {example}")


def parse_bracket_action(name: str, rest: str) -> Action:
    """Parse an action in bracket syntax; `name` is the lower-cased action word, `rest` what follows it."""
    parser = _PARSERS.get(name)
    if parser is None:
        raise ActionParseError(unknown_action(name, list(USAGE), VALID_ACTIONS))
    return parser(rest.strip())


def unknown_action(name: str, known: list[str], valid: str) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return f"Unknown action '{name}'.{hint} Valid actions: {valid}"


def _bracketed(rest: str) -> str | None:
    """The text between the first '[' and the last ']' when `rest` is one bracketed argument."""
    if len(rest) >= 2 and rest.startswith("[") and rest.endswith("]"):
        return rest[1:-1]
    return None


def _groups(rest: str) -> list[str] | None:
    """Split `[a] [b [c]]` into balanced groups; None when `rest` is not a clean sequence of them."""
    groups: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(rest):
        if char == "[":
            if depth == 0:
                start = i + 1
            depth += 1
        elif char == "]":
            if depth == 0:
                return None
            depth -= 1
            if depth == 0:
                groups.append(rest[start:i])
        elif depth == 0 and not char.isspace():
            return None
    return groups if depth == 0 else None


def _take_id(action: str, rest: str) -> tuple[int, str]:
    """Read the leading `[id]`; return it and the remaining text."""
    example = _EXAMPLES[action]
    end = rest.find("]")
    if not rest.startswith("[") or end < 0:
        raise ActionParseError(f"{action} needs an element id in brackets, e.g. {example}")
    return element_id(rest[1:end], example), rest[end + 1 :].strip()


def _only_id(action: str, rest: str) -> int:
    eid, extra = _take_id(action, rest)
    if extra:
        # Models often append a description ("click [12] where [12] is ..."); WebArena ignores it too.
        logger.debug("ignoring text after %s [%d]: %r", action, eid, extra)
    return eid


def _no_arguments(action: str, result: Action) -> Callable[[str], Action]:
    def parse(rest: str) -> Action:
        if rest not in ("", "[]"):
            raise ActionParseError(f"{action} takes no arguments, got '{rest}'; write just {action}")
        return result

    return parse


def _type(rest: str) -> Type:
    eid, rest = _take_id("type", rest)
    press_enter = True  # WebArena's default when the flag is omitted
    flag = _ENTER_FLAG.search(rest)
    if flag and rest[: flag.start()].rstrip().endswith("]"):
        press_enter = flag.group(1).lower() in ("1", "true")
        rest = rest[: flag.start()].rstrip()
    text = _bracketed(rest)
    if text is None:
        raise ActionParseError(
            "type needs the text in brackets after the element id, then 1 to press Enter or 0 not to, "
            "e.g. type [12] [hello] [1]"
        )
    return Type(eid, text, press_enter)


def _press(rest: str) -> Press:
    targeted = _TARGETED_PRESS.match(rest)
    target = int(targeted.group(1)) if targeted else None
    keys = _bracketed(targeted.group(2) if targeted else rest)
    if keys is None:
        raise ActionParseError("press needs a key combination in brackets, e.g. press [Enter] or press [Control+a]")
    return Press(normalize_keys(keys), target)


def _scroll(rest: str) -> Scroll:
    groups = _groups(rest)
    inner = groups[0] if groups and len(groups) > 1 else _bracketed(rest)  # `scroll [down] [1]`: the amount goes
    bare = _BARE_DIRECTION.fullmatch(rest) if inner is None else None
    if bare is not None:
        if bare.group(2):
            logger.debug("ignoring %r after scroll %s", bare.group(2).strip(), bare.group(1))
        return Scroll("up" if bare.group(1).lower() == "up" else "down")
    if inner is None:
        raise ActionParseError("scroll needs a direction in brackets: scroll [down] or scroll [up]")
    direction = re.sub(r"^direction\s*=\s*", "", inner.strip(), flags=re.IGNORECASE).strip("'\" ").lower()
    if direction not in ("up", "down"):
        raise ActionParseError(f"scroll direction must be up or down, got '{inner.strip()}'; e.g. scroll [down]")
    return Scroll("up" if direction == "up" else "down")


def _select_option(rest: str) -> SelectOption:
    eid, rest = _take_id("select_option", rest)
    groups = _groups(rest)
    if groups is None:
        single = _bracketed(rest)
        groups = [] if single is None else [single]
    values = tuple(v.strip() for v in groups if v.strip())
    if not values:
        raise ActionParseError(
            "select_option needs the option text in brackets after the element id, e.g. select_option [12] [Blue]"
        )
    return SelectOption(eid, values)


def _free_text(rest: str) -> str | None:
    """A bracketed argument, or a bare one when it holds no brackets at all (a stray ']' means a misread line)."""
    inner = _bracketed(rest)
    if inner is None and "[" not in rest and "]" not in rest:
        return rest
    return inner


def _goto(rest: str) -> Goto:
    url = (_free_text(rest) or "").strip()
    if not url:
        raise ActionParseError("goto needs a URL in brackets, e.g. goto [https://example.com]")
    return Goto(url)


def _new_tab(rest: str) -> NewTab:
    if rest in ("", "[]"):
        return NewTab()
    url = _bracketed(rest)
    if url is None or not url.strip():
        raise ActionParseError(f"new_tab takes nothing or a URL in brackets, got '{rest}'; e.g. new_tab")
    return NewTab(url.strip())


def _tab_focus(rest: str) -> TabFocus:
    inner = _free_text(rest)
    if not inner:
        raise ActionParseError("tab_focus needs a tab index in brackets, e.g. tab_focus [0]")
    if not (inner.strip().isascii() and inner.strip().isdigit()):
        raise ActionParseError(f"tab index must be a number, got '{inner.strip()}', e.g. tab_focus [0]")
    return TabFocus(int(inner))


def _stop(rest: str) -> Stop:
    # A bare `stop 42` is unambiguous, so take it rather than spend a retry on the brackets.
    answer = _free_text(rest)
    if answer is None:
        raise ActionParseError("stop needs the answer in brackets, e.g. stop [42], or stop [] for no answer")
    return Stop(answer.strip())


_PARSERS: MappingProxyType[str, Callable[[str], Action]] = MappingProxyType(
    {
        "click": lambda rest: Click(_only_id("click", rest)),
        "hover": lambda rest: Hover(_only_id("hover", rest)),
        "type": _type,
        "press": _press,
        "scroll": _scroll,
        "select_option": _select_option,
        "goto": _goto,
        "go_back": _no_arguments("go_back", GoBack()),
        "go_forward": _no_arguments("go_forward", GoForward()),
        "new_tab": _new_tab,
        "tab_focus": _tab_focus,
        "close_tab": _no_arguments("close_tab", CloseTab()),
        "stop": _stop,
    }
)
