"""The extension's keyboard (extension/lib/keys.js), run in Node: what `type` and `press` send to CDP's
Input.dispatchKeyEvent and Input.insertText, event by event."""

from __future__ import annotations

import json

from extension_js import run_js

RUNNER = """
import(process.argv[1]).then(async (m) => {
  const sent = [];
  const dispatch = async (p) => sent.push(["key", p.type, p.key, p.code, p.windowsVirtualKeyCode, p.text ?? null]);
  const insert = async (text) => sent.push(["insert", text]);
  const how = process.argv[2];
  const input = JSON.parse(process.argv[3]);
  if (how === "type") await m.typeKeys(dispatch, insert, input);
  else await m.pressCombo(dispatch, input);
  process.stdout.write(JSON.stringify(sent));
});
"""


def typed(text: str) -> list[list[object]]:
    sent: list[list[object]] = run_js("keys.js", RUNNER, "type", json.dumps(text))
    return sent


def pressed(combo: str) -> list[list[object]]:
    sent: list[list[object]] = run_js("keys.js", RUNNER, "press", json.dumps(combo))
    return sent


def test_each_character_is_a_key_down_with_its_text_and_a_key_up() -> None:
    assert typed("a1") == [
        ["key", "keyDown", "a", "KeyA", 65, "a"], ["key", "keyUp", "a", "KeyA", 65, None],
        ["key", "keyDown", "1", "Digit1", 49, "1"], ["key", "keyUp", "1", "Digit1", 49, None],
    ]


def test_capitals_and_punctuation_use_their_key_on_a_us_keyboard() -> None:
    downs = [event[2:5] for event in typed("B (x)-/") if event[1] == "keyDown"]
    assert downs == [["B", "KeyB", 66], [" ", "Space", 32], ["(", "Digit9", 57], ["x", "KeyX", 88],
                     [")", "Digit0", 48], ["-", "Minus", 189], ["/", "Slash", 191]]


def test_what_no_key_types_is_inserted_in_runs_and_newline_and_tab_are_never_pressed() -> None:
    sent = typed("ok 🍵 naïve\n\tend")
    inserted = [event[1] for event in sent if event[0] == "insert"]
    assert inserted == ["🍵", "ï", "\n\t"]
    keys = "".join(str(event[2]) for event in sent if event[1] == "keyDown")
    assert keys == "ok  naveend"
    assert not any(event[0] == "key" and event[2] in ("Enter", "Tab") for event in sent)


def test_the_order_of_keys_and_inserted_text_is_the_text_order() -> None:
    sent = typed("a€b")
    assert [(event[0], event[2] if event[0] == "key" else event[1]) for event in sent] == [
        ("key", "a"), ("key", "a"), ("insert", "€"), ("key", "b"), ("key", "b")]


def test_pressing_punctuation_names_its_key() -> None:
    assert pressed(",")[0][2:5] == [",", "Comma", 188]
    assert pressed("Shift+1")[0][1:4] == ["rawKeyDown", "Shift", "ShiftLeft"]


def test_control_or_meta_is_control_off_a_mac() -> None:
    # Node has no navigator.platform of a Mac here; in Chrome on a Mac the same combination holds Meta.
    assert [event[2] for event in pressed("ControlOrMeta+a") if event[1] in ("rawKeyDown", "keyDown")] == [
        "Control", "a"]
