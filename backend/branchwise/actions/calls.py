"""BrowserGym's Python-call syntax: `click('12')`, `fill('12', 'hello')`, `scroll(0, 200)`, `send_msg_to_user('x')`.

The call is read with `ast` and its arguments with `ast.literal_eval`; nothing is ever evaluated.
Mapping choices: `dblclick` and `click` both give Click (button and modifiers are dropped); `fill` gives Type without
Enter unless `press_enter=True`; `press(bid, key)` gives a Press that keeps its target; `report_infeasible` gives
Stop("N/A"). `noop()` is rejected: waiting explores nothing, so the model is asked for a real action instead.
A few WebArena names are accepted as calls too (`type(...)`, `stop(...)`, `close_tab()`), since models mix the two.
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .brackets import element_id, unknown_action
from .keys import normalize_keys
from .model import (
    INFEASIBLE_ANSWER,
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

Args = Mapping[str, object]

_JSON_CONSTANTS = MappingProxyType({"true": True, "false": False, "null": None, "none": None})


@dataclass(frozen=True)
class _Signature:
    params: tuple[str, ...]
    required: int
    build: Callable[[Args], Action]
    usage: str | None  # None: accepted but not advertised

    def bind(self, name: str, args: list[object], kwargs: dict[str, object]) -> dict[str, object]:
        example = self.usage or f"{name}({', '.join(self.params)})"
        if len(args) > len(self.params):
            raise ActionParseError(
                f"{name}() takes at most {len(self.params)} arguments, got {len(args)}; e.g. {example}"
            )
        bound = dict(zip(self.params, args, strict=False))  # fewer args than params is fine
        for key, value in kwargs.items():
            if key not in self.params:
                raise ActionParseError(
                    f"{name}() got an unexpected argument '{key}'; its arguments are ({', '.join(self.params)})"
                )
            if key in bound:
                raise ActionParseError(f"{name}() got argument '{key}' twice; e.g. {example}")
            bound[key] = value
        missing = [p for p in self.params[: self.required] if p not in bound]
        if missing:
            raise ActionParseError(f"{name}() is missing its '{missing[0]}' argument; e.g. {example}")
        return bound


def parse_call(text: str) -> Action:
    """Parse one BrowserGym-style call such as `fill('12', 'hello')`."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ActionParseError(
            f"could not read '{text.strip()}' as a function call ({exc.msg}); quote text arguments, "
            "e.g. fill('12', 'hello')"
        ) from None
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise ActionParseError(f"expected a single call such as click('12'), got '{text.strip()}'")
    name = call.func.id.lower()
    if name == "noop":
        raise ActionParseError(
            "noop() is not supported: choose an action that changes the page, or send_msg_to_user('answer') to finish"
        )
    signature = _SIGNATURES.get(name)
    if signature is None:
        raise ActionParseError(unknown_action(name, [n for n, s in _SIGNATURES.items() if s.usage], VALID_CALLS))
    args = [_literal(name, arg) for arg in call.args]
    kwargs: dict[str, object] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise ActionParseError(f"{name}() arguments must be written out, not unpacked with **")
        kwargs[keyword.arg] = _literal(name, keyword.value)
    return signature.build(signature.bind(name, args, kwargs))


class _JsonConstants(ast.NodeTransformer):
    """Auto-correction from WebOperator: models write JSON's true/false/null inside Python calls."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id.lower() in _JSON_CONSTANTS:
            logger.debug("auto-correcting %r to a Python constant", node.id)
            return ast.copy_location(ast.Constant(_JSON_CONSTANTS[node.id.lower()]), node)
        return node


def _literal(name: str, node: ast.expr) -> object:
    if isinstance(node, ast.Starred):
        raise ActionParseError(f"{name}() arguments must be written out, not unpacked with *")
    try:
        return ast.literal_eval(_JsonConstants().visit(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ActionParseError(
            f"argument {ast.unparse(node)} of {name}() must be a literal: a quoted string, a number, True or False"
        ) from None


def _text(name: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ActionParseError(f"{name}() expects a quoted string, got {value!r}")
    return str(value)


def _flag(name: str, value: object) -> bool:
    if value in (0, 1):  # True/False compare equal to 1/0
        return bool(value)
    raise ActionParseError(f"{name}() expects True or False, got {value!r}")


def _bid(args: Args) -> int:
    return element_id(args["bid"], "click('12')")


def _fill(args: Args) -> Type:
    return Type(_bid(args), _text("fill", args["value"]), _flag("fill", args.get("press_enter", False)))


def _type(args: Args) -> Type:
    return Type(_bid(args), _text("type", args["text"]), _flag("type", args.get("press_enter_after", True)))


def _select_option(args: Args) -> SelectOption:
    options = args["options"]
    values = tuple(options) if isinstance(options, (list, tuple)) else (options,)
    texts = tuple(_text("select_option", v).strip() for v in values)
    if not texts or not all(texts):
        raise ActionParseError("select_option() needs the option text, e.g. select_option('12', 'Blue')")
    return SelectOption(_bid(args), texts)


def _press(args: Args) -> Press:
    if "key_comb" not in args:  # press('Enter'): the model dropped the element
        return Press(normalize_keys(_text("press", args["bid"])))
    return Press(normalize_keys(_text("press", args["key_comb"])), _bid(args))


def _scroll(args: Args) -> Scroll:
    dx, dy = args["delta_x"], args.get("delta_y")
    if dy is None and isinstance(dx, str) and dx.strip().lower() in ("up", "down"):
        return Scroll("up" if dx.strip().lower() == "up" else "down")
    if isinstance(dy, bool) or not isinstance(dy, (int, float)) or dy == 0:
        raise ActionParseError(
            "scroll() needs a non-zero vertical amount: scroll(0, 200) scrolls down, scroll(0, -200) scrolls up"
        )
    return Scroll("down" if dy > 0 else "up")


def _tab_index(args: Args) -> TabFocus:
    index = args["index"]
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ActionParseError(f"tab_focus() needs a tab index (0, 1, ...), got {index!r}")
    return TabFocus(index)


def _new_tab(args: Args) -> NewTab:
    url = args.get("url")
    return NewTab(None if url is None else _text("new_tab", url))


def _url(args: Args) -> Goto:
    url = _text("goto", args["url"]).strip()
    if not url:
        raise ActionParseError("goto() needs a URL, e.g. goto('https://example.com')")
    return Goto(url)


def _infeasible(args: Args) -> Stop:
    logger.info("model reported the task infeasible: %s", args["reason"])
    return Stop(INFEASIBLE_ANSWER)


_CLICK_PARAMS = ("bid", "button", "modifiers")

_SIGNATURES: MappingProxyType[str, _Signature] = MappingProxyType(
    {
        "click": _Signature(_CLICK_PARAMS, 1, lambda a: Click(_bid(a)), "click('id')"),
        "dblclick": _Signature(_CLICK_PARAMS, 1, lambda a: Click(_bid(a)), "dblclick('id')"),
        "hover": _Signature(("bid",), 1, lambda a: Hover(_bid(a)), "hover('id')"),
        "fill": _Signature(
            ("bid", "value", "press_enter", "enable_autocomplete_menu"), 2, _fill, "fill('id', 'text')"
        ),
        "select_option": _Signature(("bid", "options"), 2, _select_option, "select_option('id', 'value')"),
        "press": _Signature(("bid", "key_comb"), 1, _press, "press('id', 'key_comb')"),
        "keyboard_press": _Signature(
            ("key",), 1, lambda a: Press(normalize_keys(_text("keyboard_press", a["key"]))), "keyboard_press('key')"
        ),
        "scroll": _Signature(("delta_x", "delta_y"), 1, _scroll, "scroll(0, 200)"),
        "goto": _Signature(("url",), 1, _url, "goto('url')"),
        "go_back": _Signature((), 0, lambda a: GoBack(), "go_back()"),
        "go_forward": _Signature((), 0, lambda a: GoForward(), "go_forward()"),
        "new_tab": _Signature(("url",), 0, _new_tab, "new_tab()"),
        "tab_focus": _Signature(("index",), 1, _tab_index, "tab_focus(index)"),
        "tab_close": _Signature((), 0, lambda a: CloseTab(), "tab_close()"),
        "send_msg_to_user": _Signature(
            ("text",), 1, lambda a: Stop(_text("send_msg_to_user", a["text"]).strip()), "send_msg_to_user('answer')"
        ),
        "report_infeasible": _Signature(("reason",), 1, _infeasible, "report_infeasible('reason')"),
        "type": _Signature(("bid", "text", "press_enter_after"), 2, _type, None),
        "close_tab": _Signature((), 0, lambda a: CloseTab(), None),
        "stop": _Signature(("answer",), 0, lambda a: Stop(_text("stop", a.get("answer", "")).strip()), None),
    }
)
VALID_CALLS = ", ".join(s.usage for s in _SIGNATURES.values() if s.usage)
