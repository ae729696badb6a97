// Key combinations ("Control+a", "Shift+Tab", "Enter") to CDP Input.dispatchKeyEvent parameters.
import { CommandError } from "./protocol.js";

const MODIFIERS = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };
// Playwright's ControlOrMeta: the Command key on a Mac, Control elsewhere (select all, copy, find).
const PLATFORM = globalThis.navigator?.userAgentData?.platform ?? globalThis.navigator?.platform ?? "";
const CONTROL_OR_META = /mac/i.test(PLATFORM) ? "Meta" : "Control";
const MODIFIER_ALIASES = { ctrl: "Control", control: "Control", alt: "Alt", option: "Alt", meta: "Meta", cmd: "Meta",
  command: "Meta", shift: "Shift", controlormeta: CONTROL_OR_META };

const NAMED = {
  Enter: { code: "Enter", keyCode: 13, text: "\r" },
  Tab: { code: "Tab", keyCode: 9 },
  Escape: { code: "Escape", keyCode: 27 },
  Backspace: { code: "Backspace", keyCode: 8 },
  Delete: { code: "Delete", keyCode: 46 },
  Space: { key: " ", code: "Space", keyCode: 32, text: " " },
  ArrowUp: { code: "ArrowUp", keyCode: 38 },
  ArrowDown: { code: "ArrowDown", keyCode: 40 },
  ArrowLeft: { code: "ArrowLeft", keyCode: 37 },
  ArrowRight: { code: "ArrowRight", keyCode: 39 },
  Home: { code: "Home", keyCode: 36 },
  End: { code: "End", keyCode: 35 },
  PageUp: { code: "PageUp", keyCode: 33 },
  PageDown: { code: "PageDown", keyCode: 34 },
  Insert: { code: "Insert", keyCode: 45 },
  Control: { code: "ControlLeft", keyCode: 17 },
  Shift: { code: "ShiftLeft", keyCode: 16 },
  Alt: { code: "AltLeft", keyCode: 18 },
  Meta: { code: "MetaLeft", keyCode: 91 },
};
const NAMED_ALIASES = { return: "Enter", esc: "Escape", del: "Delete", up: "ArrowUp", down: "ArrowDown",
  left: "ArrowLeft", right: "ArrowRight", pagedown: "PageDown", pageup: "PageUp", space: "Space" };

// The US layout's printable keys other than letters and digits: character -> [code, Windows key code]. A shifted
// character shares its key with the unshifted one ("!" is Digit1), as Playwright's layout has it.
const PUNCTUATION = {
  " ": ["Space", 32], "-": ["Minus", 189], "_": ["Minus", 189], "=": ["Equal", 187], "+": ["Equal", 187],
  "[": ["BracketLeft", 219], "{": ["BracketLeft", 219], "]": ["BracketRight", 221], "}": ["BracketRight", 221],
  "\\": ["Backslash", 220], "|": ["Backslash", 220], ";": ["Semicolon", 186], ":": ["Semicolon", 186],
  "'": ["Quote", 222], '"': ["Quote", 222], ",": ["Comma", 188], "<": ["Comma", 188], ".": ["Period", 190],
  ">": ["Period", 190], "/": ["Slash", 191], "?": ["Slash", 191], "`": ["Backquote", 192], "~": ["Backquote", 192],
  "!": ["Digit1", 49], "@": ["Digit2", 50], "#": ["Digit3", 51], "$": ["Digit4", 52], "%": ["Digit5", 53],
  "^": ["Digit6", 54], "&": ["Digit7", 55], "*": ["Digit8", 56], "(": ["Digit9", 57], ")": ["Digit0", 48],
};

// The key that types `char` on a US keyboard, or null when no key does (accented letters, emoji, CJK, control
// characters).
function layoutKey(char) {
  if (/^[a-zA-Z]$/.test(char)) {
    const upper = char.toUpperCase();
    return { key: char, code: `Key${upper}`, keyCode: upper.charCodeAt(0), text: char };
  }
  if (/^[0-9]$/.test(char)) return { key: char, code: `Digit${char}`, keyCode: char.charCodeAt(0), text: char };
  const punctuation = PUNCTUATION[char];
  return punctuation ? { key: char, code: punctuation[0], keyCode: punctuation[1], text: char } : null;
}

function keyDefinition(name) {
  const lower = name.toLowerCase();
  const named = NAMED[name] || NAMED[NAMED_ALIASES[lower]] ||
    Object.entries(NAMED).find(([k]) => k.toLowerCase() === lower)?.[1];
  if (named) {
    const key = named.key || Object.keys(NAMED).find((k) => NAMED[k] === named);
    return { key, ...named };
  }
  const fn = /^f([1-9]|1[0-2])$/i.exec(name);
  if (fn) return { key: `F${fn[1]}`, code: `F${fn[1]}`, keyCode: 111 + Number(fn[1]) };
  if (name.length === 1) return layoutKey(name) || { key: name, code: "", keyCode: 0, text: name };
  throw new CommandError("invalid_message", `unknown key "${name}"`);
}

// "Control+Shift+t" -> { modifiers: [...], bits, key }
export function parseCombo(combo) {
  const parts = combo.split("+").map((p) => p.trim());
  // "Control++" means the plus key.
  if (combo.endsWith("++")) parts.splice(parts.length - 2, 2, "+");
  const mods = [];
  let bits = 0;
  for (const part of parts.slice(0, -1)) {
    const mod = MODIFIERS[part] ? part : MODIFIER_ALIASES[part.toLowerCase()];
    if (!mod) throw new CommandError("invalid_message", `"${part}" is not a modifier key in "${combo}"`);
    mods.push(mod);
    bits |= MODIFIERS[mod];
  }
  const last = parts[parts.length - 1];
  if (!last) throw new CommandError("invalid_message", `no key in "${combo}"`);
  const def = keyDefinition(last);
  if (def.text && def.key.length === 1 && bits & MODIFIERS.Shift) {
    def.key = def.key.toUpperCase();
    def.text = def.text.toUpperCase();
  }
  // With Ctrl/Alt/Meta held, the key is a shortcut and types no text.
  if (bits & (MODIFIERS.Control | MODIFIERS.Alt | MODIFIERS.Meta)) delete def.text;
  return { mods, bits, def };
}

function keyParams(type, def, modifiers) {
  const params = { type, modifiers, key: def.key, code: def.code, windowsVirtualKeyCode: def.keyCode };
  if (def.text && type === "keyDown") {
    params.text = def.text;
    params.unmodifiedText = def.text;
  }
  return params;
}

export async function pressCombo(dispatch, combo) {
  const { mods, bits, def } = parseCombo(combo);
  let held = 0;
  for (const mod of mods) {
    held |= MODIFIERS[mod];
    await dispatch(keyParams("rawKeyDown", keyDefinition(mod), held));
  }
  await dispatch(keyParams(def.text ? "keyDown" : "rawKeyDown", def, bits));
  await dispatch(keyParams("keyUp", def, bits));
  for (const mod of mods.reverse()) {
    held &= ~MODIFIERS[mod];
    await dispatch(keyParams("keyUp", keyDefinition(mod), held));
  }
}

// Types `text` as a keyboard does (Playwright's keyboard.type): a trusted keyDown (with the text) and keyUp per
// character, so keydown-driven widgets, masked fields and a date input's fields get every key. What no US key types
// goes through `insert` (CDP Input.insertText, as an IME would commit it), a run of such characters at once. Newline
// and tab are inserted, never pressed: Enter would submit a form and Tab move the focus, which typing must not do.
export async function typeKeys(dispatch, insert, text) {
  let pending = "";
  for (const char of text) {
    const def = layoutKey(char);
    if (!def) {
      pending += char;
      continue;
    }
    if (pending) await insert(pending);
    pending = "";
    await dispatch(keyParams("keyDown", def, 0));
    await dispatch(keyParams("keyUp", def, 0));
  }
  if (pending) await insert(pending);
}
