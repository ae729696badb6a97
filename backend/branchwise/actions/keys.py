"""Normalising key combinations such as `ctrl+A` or `cmd + shift + t` to `Control+A` / `Meta+Shift+T`."""

from __future__ import annotations

import re
from types import MappingProxyType

from .model import ActionParseError

_MODIFIERS = MappingProxyType(
    {
        "ctrl": "Control",
        "control": "Control",
        "cmd": "Meta",
        "command": "Meta",
        "meta": "Meta",
        "alt": "Alt",
        "option": "Alt",
        "opt": "Alt",
        "shift": "Shift",
        "controlormeta": "ControlOrMeta",
    }
)

# DOM `key` names (what Playwright and CDP understand); models often write them in other cases or short forms.
_NAMED_KEYS = MappingProxyType(
    {
        "enter": "Enter",
        "return": "Enter",
        "esc": "Escape",
        "escape": "Escape",
        "tab": "Tab",
        "backspace": "Backspace",
        "delete": "Delete",
        "del": "Delete",
        "space": "Space",
        "insert": "Insert",
        "home": "Home",
        "end": "End",
        "pageup": "PageUp",
        "pgup": "PageUp",
        "pagedown": "PageDown",
        "pgdn": "PageDown",
        "arrowup": "ArrowUp",
        "up": "ArrowUp",
        "arrowdown": "ArrowDown",
        "down": "ArrowDown",
        "arrowleft": "ArrowLeft",
        "left": "ArrowLeft",
        "arrowright": "ArrowRight",
        "right": "ArrowRight",
        **{f"f{n}": f"F{n}" for n in range(1, 13)},
    }
)

_USAGE = "e.g. press [Enter] or press [Control+a]"
# DOM `code` names of letter and digit keys (Playwright takes them): the key they type on a US layout.
_CODE = re.compile(r"^(?:key([a-z])|digit([0-9]))$", re.IGNORECASE)


def normalize_keys(combo: str) -> str:
    """Return the canonical form of a key combination; keys keep their order, single characters keep their case."""
    combo = combo.strip()
    if not combo:
        raise ActionParseError(f"press needs a key combination in brackets, {_USAGE}")
    keys = [_normalize_key(part, combo) for part in _split(combo)]
    for key in keys[:-1]:
        if key not in _MODIFIERS.values():
            raise ActionParseError(f"'{key}' is not a modifier key in '{combo}': only Control, Shift, Alt and Meta "
                                   f"combine with a key, {_USAGE}")
    return "+".join(keys)


def _split(combo: str) -> list[str]:
    # "+" is itself a key: "Control++" is Control and "+".
    if combo == "+":
        return ["+"]
    if combo.endswith("++"):
        return [*combo[:-2].split("+"), "+"]
    return combo.split("+")


def _normalize_key(part: str, combo: str) -> str:
    key = part.strip()
    if not key:
        raise ActionParseError(f"key combination '{combo}' has an empty key between '+' signs, {_USAGE}")
    if len(key) == 1:
        return key
    lowered = key.lower()
    known = _MODIFIERS.get(lowered) or _NAMED_KEYS.get(lowered)
    if known:
        return known
    code = _CODE.match(key)
    if code:
        return code.group(1).lower() if code.group(1) else code.group(2)
    hint = f"; to use element [{key}], click [{key}] or type [{key}] [text]" if key.isdigit() else ""
    raise ActionParseError(f"unknown key '{key}' in press [{combo}]: press takes a key such as Enter, Tab, Escape, "
                           f"ArrowDown, PageDown or F5, or a combination such as Control+a{hint}")
