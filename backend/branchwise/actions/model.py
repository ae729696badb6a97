"""The typed actions the agent can take, each with its canonical WebArena text form.

Extensions to WebArena's syntax, chosen so that every action round-trips through `to_text` and `parse_action`:
- `select_option [12] [Blue] [Red]`: one bracket group per selected value (WebArena only ever selects one).
- `press [12] [Enter]`: focus element 12 first, then press (BrowserGym's `press(bid, key)`); plain `press [Enter]`
  presses on whatever has focus.
- `new_tab [https://x]`: open a tab at a URL; bare `new_tab` opens an empty one.
A `type` of a secret shows `[••••••]` for its text, so that one form does not parse back to the same text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias, get_args

# How a typed secret (a password, a card number) is written wherever an action is shown, logged or stored.
SECRET_MASK = "••••••"


class ActionParseError(ValueError):
    """The action text could not be understood. The message says what was wrong and the valid syntax, so it can be
    fed back to the model verbatim."""


class _Untargeted:
    """Mixin for actions that do not act on a page element."""

    __slots__ = ()

    @property
    def element_id(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Click:
    element_id: int

    def to_text(self) -> str:
        return f"click [{self.element_id}]"


@dataclass(frozen=True, slots=True)
class Hover:
    element_id: int

    def to_text(self) -> str:
        return f"hover [{self.element_id}]"


@dataclass(frozen=True, slots=True)
class Type:
    element_id: int
    text: str
    # No default: Enter often submits a form, which the safety heuristics treat as destructive.
    press_enter: bool
    # The text is a password or card number (safety/secrets.py decides): `to_text()` and repr() mask it, so every
    # history, log line, progress message and stored row shows `type [12] [••••••] [1]`; only the command sent to the
    # extension carries `text`. Not part of equality: the same keystrokes are the same action.
    secret: bool = field(default=False, compare=False)

    def to_text(self) -> str:
        text = SECRET_MASK if self.secret else self.text
        return f"type [{self.element_id}] [{text}] [{int(self.press_enter)}]"

    def __repr__(self) -> str:
        text = SECRET_MASK if self.secret else self.text
        return (f"Type(element_id={self.element_id}, text={text!r}, press_enter={self.press_enter}, "
                f"secret={self.secret})")


@dataclass(frozen=True, slots=True)
class Press:
    keys: str
    element_id: int | None = None

    def to_text(self) -> str:
        target = "" if self.element_id is None else f"[{self.element_id}] "
        return f"press {target}[{self.keys}]"


@dataclass(frozen=True, slots=True)
class Scroll(_Untargeted):
    direction: Literal["up", "down"]

    def __post_init__(self) -> None:
        if self.direction not in ("up", "down"):
            raise ValueError(f"scroll direction must be 'up' or 'down', got {self.direction!r}")

    def to_text(self) -> str:
        return f"scroll [{self.direction}]"


@dataclass(frozen=True, slots=True)
class SelectOption:
    element_id: int
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        # Accept a list for convenience but store a tuple so the action stays hashable.
        object.__setattr__(self, "values", tuple(self.values))
        if not self.values:
            raise ValueError("select_option needs at least one value")

    def to_text(self) -> str:
        return f"select_option [{self.element_id}] " + " ".join(f"[{v}]" for v in self.values)


@dataclass(frozen=True, slots=True)
class Goto(_Untargeted):
    url: str

    def to_text(self) -> str:
        return f"goto [{self.url}]"


@dataclass(frozen=True, slots=True)
class GoBack(_Untargeted):
    def to_text(self) -> str:
        return "go_back"


@dataclass(frozen=True, slots=True)
class GoForward(_Untargeted):
    def to_text(self) -> str:
        return "go_forward"


@dataclass(frozen=True, slots=True)
class NewTab(_Untargeted):
    url: str | None = None

    def to_text(self) -> str:
        return "new_tab" if self.url is None else f"new_tab [{self.url}]"


@dataclass(frozen=True, slots=True)
class TabFocus(_Untargeted):
    index: int

    def to_text(self) -> str:
        return f"tab_focus [{self.index}]"


@dataclass(frozen=True, slots=True)
class CloseTab(_Untargeted):
    def to_text(self) -> str:
        return "close_tab"


@dataclass(frozen=True, slots=True)
class Stop(_Untargeted):
    # "N/A" means the task is not achievable, as in WebArena.
    answer: str = ""

    def to_text(self) -> str:
        return f"stop [{self.answer}]"


Action: TypeAlias = (
    Click | Hover | Type | Press | Scroll | SelectOption | Goto | GoBack | GoForward | NewTab | TabFocus | CloseTab
    | Stop
)
ACTION_TYPES: tuple[type, ...] = get_args(Action)

INFEASIBLE_ANSWER = "N/A"
