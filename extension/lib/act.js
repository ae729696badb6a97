// Act on a handed-over tab with trusted CDP input (the page sees isTrusted=true), then wait for it to settle.
import { childSessions, currentDialog, ensureAttached, send, sessionFor } from "./cdp.js";
import { pressCombo, typeKeys } from "./keys.js";
import { CommandError } from "./protocol.js";
import { settle } from "./settle.js";
import { loadSiteLists, openRefusal } from "./sites.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A failed action is an ordinary answer (ok: false) the agent can learn from, not a protocol error.
class ActionFailed extends Error {}

function describeMissing(error) {
  if (/No node with given id|Could not find node|Node with given id does not belong/i.test(error.message)) {
    return new ActionFailed("the element is no longer on the page (it changed); observe the page again");
  }
  return error;
}

async function callOn(tabId, ref, functionDeclaration, args = []) {
  const sessionId = sessionFor(tabId, ref.target);
  let object;
  try {
    ({ object } = await send(tabId, "DOM.resolveNode", { backendNodeId: ref.backend_node_id }, sessionId));
  } catch (error) {
    throw describeMissing(error);
  }
  try {
    const { result, exceptionDetails } = await send(tabId, "Runtime.callFunctionOn", {
      objectId: object.objectId,
      functionDeclaration,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
      awaitPromise: true,
    }, sessionId);
    if (exceptionDetails) {
      const text = exceptionDetails.exception?.description || exceptionDetails.text;
      throw new ActionFailed(text.replace(/^Error: /, "").split("\n")[0]);
    }
    return result.value;
  } finally {
    send(tabId, "Runtime.releaseObject", { objectId: object.objectId }, sessionId).catch(() => {});
  }
}

// Offset of an out-of-process frame's viewport inside the tab's viewport (input goes to the tab's own target).
async function frameOffset(tabId, targetKey) {
  let x = 0;
  let y = 0;
  const sessions = childSessions(tabId);
  let entry = targetKey ? sessions.get(targetKey) : null;
  while (entry) {
    const { backendNodeId } = await send(tabId, "DOM.getFrameOwner", { frameId: entry.frameId }, entry.parentSessionId);
    const { model } = await send(tabId, "DOM.getBoxModel", { backendNodeId }, entry.parentSessionId);
    x += model.content[0];
    y += model.content[1];
    entry = [...sessions.values()].find((e) => e.sessionId === entry.parentSessionId) || null;
  }
  return { x, y };
}

const HIT_TEST = `function(x, y) {
  if (window !== window.top) return "";
  const root = this.getRootNode();
  const hit = (root.elementFromPoint ? root : document).elementFromPoint(x, y);
  if (!hit || hit === this || this.contains(hit) || hit.contains(this)) return "";
  const label = (hit.innerText || hit.getAttribute("aria-label") || "").trim().slice(0, 60);
  return hit.tagName.toLowerCase() + (label ? " '" + label + "'" : "");
}`;

async function elementPoint(tabId, ref) {
  const sessionId = sessionFor(tabId, ref.target);
  const params = { backendNodeId: ref.backend_node_id };
  let quads;
  try {
    await send(tabId, "DOM.scrollIntoViewIfNeeded", params, sessionId).catch(() => {});
    ({ quads } = await send(tabId, "DOM.getContentQuads", params, sessionId));
  } catch (error) {
    throw describeMissing(error);
  }
  if (!quads || quads.length === 0) throw new ActionFailed("the element is not visible (it takes no space on screen)");
  const q = quads[0];
  const local = { x: (q[0] + q[2] + q[4] + q[6]) / 4, y: (q[1] + q[3] + q[5] + q[7]) / 4 };
  const covering = await callOn(tabId, ref, HIT_TEST, [local.x, local.y]);
  if (covering) throw new ActionFailed(`another element (${covering}) covers it; close or scroll past it first`);
  const offset = await frameOffset(tabId, ref.target);
  return { x: local.x + offset.x, y: local.y + offset.y };
}

function mouse(tabId, type, point, extra = {}) {
  return send(tabId, "Input.dispatchMouseEvent", { type, x: point.x, y: point.y, ...extra });
}

async function click(tabId, ref) {
  const point = await elementPoint(tabId, ref);
  await mouse(tabId, "mouseMoved", point);
  await mouse(tabId, "mousePressed", point, { button: "left", buttons: 1, clickCount: 1 });
  await mouse(tabId, "mouseReleased", point, { button: "left", buttons: 0, clickCount: 1 });
}

// Focuses the element typing goes to and says how to type: "keys" (a text field or editor, its text selected when
// clearing), "widget" (a focusable element whose script reads the keys: a console, a custom spinbutton; nothing to
// select), "field" (a field inside a date or time input: click it, then keys), or "set" (done: a value in a date or
// time input's own format, 2024-03-15 or 09:30, is set as its picker would set it, since its fields take keys in the
// locale's order).
const PREPARE_TYPING = `function(clear, text) {
  const host = this.getRootNode().host;
  const field = !!host && host.tagName === "INPUT";
  const el = field ? host : this;
  const tag = el.tagName;
  const role = el.getAttribute("role") || tag.toLowerCase();
  const refuse = (why) => { throw new Error(why); };
  if (tag === "INPUT" && ["checkbox","radio","submit","button","image","reset","file","range","color"].includes(el.type)) {
    refuse("the element is not a text field (it is a " + el.type + "); click it instead");
  }
  if (el.disabled) refuse("the text field is disabled");
  if (el.readOnly) refuse("the text field is read-only");
  const textual = tag === "INPUT" || tag === "TEXTAREA";
  if (tag === "INPUT" && ["date","time","datetime-local","month","week"].includes(el.type)) {
    if (clear && !field) {
      el.value = text;
      if (text && el.value === text) {
        el.dispatchEvent(new Event("input", { bubbles: true }));
        el.dispatchEvent(new Event("change", { bubbles: true }));
        return "set";
      }
      el.value = "";
    }
    el.focus();
    return field ? "field" : "keys";
  }
  if (!textual && !el.isContentEditable) {
    // Keys on a button, link or option activate it (Space, Enter): never a place to type into.
    const activates = ["A","BUTTON","SELECT","OPTION","SUMMARY","DETAILS"].includes(tag) || ["button","link",
      "checkbox","radio","switch","tab","menuitem","menuitemcheckbox","menuitemradio","option","treeitem"].includes(role);
    if (activates || el.tabIndex < 0) refuse("the element is not a text field (it is a " + role + ")");
    el.focus();
    if (el.getRootNode().activeElement !== el) refuse("the " + role + " does not take the keyboard focus");
    return "widget";
  }
  el.focus();
  if (!clear) return "keys";
  if (textual) {
    el.select();
  } else {
    const range = document.createRange();
    range.selectNodeContents(el);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  return "keys";
}`;

async function typeText(tabId, ref, text, pressEnter, clear) {
  const sessionId = sessionFor(tabId, ref.target);
  await send(tabId, "DOM.scrollIntoViewIfNeeded", { backendNodeId: ref.backend_node_id }, sessionId).catch(() => {});
  const how = await callOn(tabId, ref, PREPARE_TYPING, [clear, text]);
  const dispatch = (params) => send(tabId, "Input.dispatchKeyEvent", params);
  if (how === "field") {
    await click(tabId, ref);
    if (clear) await pressCombo(dispatch, "Backspace");
  }
  if (how !== "set") {
    if (text) {
      await typeKeys(dispatch, (chars) => send(tabId, "Input.insertText", { text: chars }), text);
    } else if (clear && how === "keys") {
      await pressCombo(dispatch, "Backspace");
    }
  }
  if (pressEnter) await pressCombo(dispatch, "Enter");
}

const SELECT_OPTIONS = `function(values) {
  if (this.tagName !== "SELECT") {
    throw new Error("the element is not a drop-down list (<select>); click it and pick the option instead");
  }
  if (this.disabled) throw new Error("the drop-down list is disabled");
  const options = [...this.options];
  const norm = (s) => s.replace(/\\s+/g, " ").trim().toLowerCase();
  const chosen = values.map((v) => {
    const o = options.find((o) => o.label.trim() === v.trim() || o.value === v) ||
      options.find((o) => norm(o.label) === norm(v));
    if (!o) {
      throw new Error('no option "' + v + '"; the options are: ' + options.map((o) => '"' + o.label.trim() + '"').join(", "));
    }
    if (o.disabled) throw new Error('the option "' + v + '" is disabled');
    return o;
  });
  if (!this.multiple && chosen.length > 1) throw new Error("this list takes only one option");
  for (const o of options) o.selected = chosen.includes(o);
  this.dispatchEvent(new Event("input", { bubbles: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
  return chosen.map((o) => o.label.trim());
}`;

// What a wheel at the viewport's centre scrolls, by script: the innermost scrollable element there with room to move
// that way, else the page. For a tab not on screen: Chromium hands a wheel event to the page only with a rendered
// frame, and a hidden tab renders none, so the wheel's Input.dispatchMouseEvent never returned (measured: a replay's
// throw-away tab, opened in the background, timed out on every `scroll`).
const SCROLL_BY_SCRIPT = `(dy) => {
  const scrollable = (el) => /(auto|scroll|overlay)/.test(getComputedStyle(el).overflowY)
    && (dy > 0 ? el.scrollHeight - el.clientHeight - el.scrollTop >= 1 : el.scrollTop > 0);
  const isPage = (el) => !el || el === document.body || el === document.documentElement;
  let el = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
  while (!isPage(el) && !scrollable(el)) el = el.parentElement;
  (isPage(el) ? document.scrollingElement || document.documentElement : el).scrollBy({ top: dy, behavior: "instant" });
}`;

async function scroll(tabId, direction) {
  const { cssVisualViewport: vp } = await send(tabId, "Page.getLayoutMetrics");
  const point = { x: vp.clientWidth / 2, y: vp.clientHeight / 2 };
  const deltaY = (direction === "down" ? 1 : -1) * vp.clientHeight * 0.8;
  const evaluate = async (expression) =>
    (await send(tabId, "Runtime.evaluate", { expression, returnByValue: true })).result.value;
  if (await evaluate("document.visibilityState") === "hidden") {
    await evaluate(`(${SCROLL_BY_SCRIPT})(${deltaY})`);
    return;
  }
  const readY = () => evaluate("scrollY");
  const before = await readY();
  await mouse(tabId, "mouseWheel", point, { deltaX: 0, deltaY });
  // Wheel scrolling may animate: wait until the position stops moving.
  let last = before;
  for (let i = 0; i < 20; i++) {
    await sleep(50);
    const now = await readY();
    if (now === last && (now !== before || i > 4)) break;
    last = now;
  }
}

async function navigate(tabId, url) {
  const refusal = openRefusal(url, await loadSiteLists());
  if (refusal) throw new ActionFailed(`cannot open ${url}: ${refusal}`);
  const { errorText } = await send(tabId, "Page.navigate", { url });
  if (errorText) throw new ActionFailed(`the page could not be opened: ${errorText}`);
}

async function history(tabId, step) {
  const { currentIndex, entries } = await send(tabId, "Page.getNavigationHistory");
  const target = currentIndex + step;
  if (target < 0) throw new ActionFailed("there is no earlier page to go back to");
  if (target >= entries.length) throw new ActionFailed("there is no later page to go forward to");
  // The history holds pages the run may not open (a blocked site the user visited in the tab before, a browser page,
  // a local file): going there is opening them, under goto's rules (an empty tab's about:blank aside).
  const { url } = entries[target];
  const refusal = url === "about:blank" ? "" : openRefusal(url, await loadSiteLists());
  if (refusal) throw new ActionFailed(`cannot go to ${url}: ${refusal}`);
  await send(tabId, "Page.navigateToHistoryEntry", { entryId: entries[target].id });
}

async function run(tabId, action) {
  const ref = action.element;
  switch (action.kind) {
    case "click":
      return click(tabId, ref);
    case "hover":
      return mouse(tabId, "mouseMoved", await elementPoint(tabId, ref));
    case "type":
      return typeText(tabId, ref, action.text, action.press_enter, action.clear);
    case "press":
      return pressCombo((params) => send(tabId, "Input.dispatchKeyEvent", params), action.keys);
    case "scroll":
      return scroll(tabId, action.direction);
    case "select":
      return callOn(tabId, ref, SELECT_OPTIONS, [action.values]);
    case "goto":
      return navigate(tabId, action.url);
    case "go_back":
      return history(tabId, -1);
    case "go_forward":
      return history(tabId, 1);
    case "dialog":
      if (!currentDialog(tabId)) throw new ActionFailed("no dialog is open");
      return send(tabId, "Page.handleJavaScriptDialog", {
        accept: action.accept,
        ...(action.prompt_text != null ? { promptText: action.prompt_text } : {}),
      });
    default:
      throw new CommandError("unknown_command", `unknown action kind "${action.kind}"`);
  }
}

// Resolves when the action's promise does, or as soon as the page opens a JS dialog (which blocks the input call).
async function untilDoneOrDialog(tabId, promise) {
  let settled = false;
  const done = promise.finally(() => {
    settled = true;
  });
  while (!settled) {
    if (currentDialog(tabId)) return;
    await Promise.race([done, sleep(30)]);
  }
  await done;
}

// How long to wait for quiet when the backend does not say (an older backend): what it sends by default.
const DEFAULT_SETTLE = { quiet_ms: 200, max_ms: 3000 };

export async function act(tabId, action, settleSpec = DEFAULT_SETTLE) {
  await ensureAttached(tabId);
  let error = "";
  let settled = { waited: 0, quiet: true };
  if (currentDialog(tabId) && action.kind !== "dialog") {
    error = "a JavaScript dialog is open on the page: accept or dismiss it first";
  } else {
    const since = Date.now();
    try {
      await untilDoneOrDialog(tabId, run(tabId, action));
      settled = await settle(tabId, since, settleSpec);
    } catch (e) {
      if (!(e instanceof ActionFailed)) throw e;
      error = e.message;
    }
  }
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  return {
    type: "act_result", ok: !error, error, url: tab?.url || "", dialog: currentDialog(tabId),
    settle_ms: Math.round(settled.waited), settled: settled.quiet,
  };
}
