// chrome.debugger plumbing: one attachment per handed-over tab, child sessions for out-of-process iframes (OOPIFs),
// and the JavaScript dialog each tab currently shows, kept in the tab's record (tabstate.js, `debugger`).
import { CommandError } from "./protocol.js";
import { tabState, update } from "./tabstate.js";

const PROTOCOL = "1.3";

const eventListeners = new Set();
const childHooks = new Set();
// Child targets start paused (waitForDebuggerOnStart) so hooks can set them up before their first request.
const AUTO_ATTACH = { autoAttach: true, waitForDebuggerOnStart: true, flatten: true };

export function onCdpEvent(listener) {
  eventListeners.add(listener);
}

// hook(tabId, sessionId, targetInfo) runs for every target auto-attached to a tab (out-of-process iframes, workers)
// before the target runs, e.g. to enable Fetch on it (lib/gate.js); it may be async.
export function onChildSession(hook) {
  childHooks.add(hook);
}

async function startChild(tabId, params) {
  for (const hook of childHooks) {
    try {
      await hook(tabId, params.sessionId, params.targetInfo);
    } catch (error) {
      console.warn(`tab ${tabId}: setting up ${params.targetInfo.type} ${params.targetInfo.targetId} failed:`, error);
    }
  }
  if (params.waitingForDebugger) {
    await chrome.debugger.sendCommand({ tabId, sessionId: params.sessionId }, "Runtime.runIfWaitingForDebugger")
      .catch(() => {});
  }
}

function cdpError(method, error) {
  const text = error?.message || String(error);
  if (/No tab with given id|Cannot access a closed tab|No target with given id/i.test(text)) {
    return new CommandError("tab_closed", `the tab was closed (${method})`);
  }
  return new CommandError("cdp_error", `${method}: ${text}`);
}

export async function send(tabId, method, params = {}, sessionId = undefined) {
  const target = sessionId ? { tabId, sessionId } : { tabId };
  try {
    return await chrome.debugger.sendCommand(target, method, params);
  } catch (error) {
    throw cdpError(method, error);
  }
}

async function attachOnce(tabId) {
  try {
    await chrome.debugger.attach({ tabId }, PROTOCOL);
  } catch (error) {
    // After the worker restarts, our own earlier attachment is still there: reuse it. getTargets does not say whose
    // an attachment is, but only our own session answers our commands.
    if (!/already attached/i.test(error?.message || "")) throw cdpError("attach", error);
    const ours = await chrome.debugger.sendCommand({ tabId }, "Runtime.evaluate", { expression: "0" }).then(
      () => true,
      () => false,
    );
    if (!ours) throw new CommandError("cdp_error", "another debugger is attached to this tab (close DevTools on it)");
  }
  await send(tabId, "Page.enable");
  await send(tabId, "Target.setAutoAttach", AUTO_ATTACH);
}

export async function ensureAttached(tabId) {
  const { attached } = tabState(tabId).debugger;
  if (attached) return attached;
  const attaching = attachOnce(tabId).catch((error) => {
    update(tabId, { type: "attach_failed", attached: attaching });
    throw error;
  });
  update(tabId, { type: "attaching", attached: attaching });
  return attaching;
}

export function forgetTab(tabId) {
  update(tabId, { type: "debugger_gone" });
}

export async function detach(tabId) {
  forgetTab(tabId);
  try {
    await chrome.debugger.detach({ tabId });
  } catch {
    // already gone
  }
}

export function currentDialog(tabId) {
  return tabState(tabId).debugger.dialog;
}

// Out-of-process iframe sessions of a tab, keyed by the iframe's frame id (the `target` of an ElementRef). Read only.
// The frames one target renders (the tab itself, or an out-of-process iframe), its root first, each with the loader
// of the document it shows.
export async function framesOf(tabId, sessionId = undefined) {
  const { frameTree } = await send(tabId, "Page.getFrameTree", {}, sessionId);
  const frames = [];
  const walk = (node) => {
    frames.push(node.frame);
    for (const child of node.childFrames || []) walk(child);
  };
  walk(frameTree);
  return frames;
}

export function childSessions(tabId) {
  return tabState(tabId).debugger.sessions;
}

export function sessionFor(tabId, targetKey) {
  if (!targetKey) return undefined;
  const entry = childSessions(tabId).get(targetKey);
  if (!entry) throw new CommandError("cdp_error", `the frame ${targetKey} is gone; observe the page again`);
  return entry.sessionId;
}

chrome.debugger.onEvent.addListener((source, method, params) => {
  const tabId = source.tabId;
  if (tabId === undefined) return;
  if (method === "Target.attachedToTarget" && params.targetInfo.type === "iframe") {
    const childSession = params.sessionId;
    const frameId = params.targetInfo.targetId;
    update(tabId, { type: "child_session", key: frameId,
      session: { sessionId: childSession, parentSessionId: source.sessionId, frameId } });
    // Nested out-of-process frames attach through their parent's session.
    chrome.debugger.sendCommand({ tabId, sessionId: childSession }, "Target.setAutoAttach", AUTO_ATTACH)
      .catch(() => {});
  }
  if (method === "Target.attachedToTarget") {
    startChild(tabId, params);
  } else if (method === "Target.detachedFromTarget") {
    update(tabId, { type: "child_gone", sessionId: params.sessionId });
  } else if (method === "Page.javascriptDialogOpening" && !source.sessionId) {
    update(tabId, { type: "dialog", dialog: {
      dialog_type: params.type,
      message: params.message || "",
      default_prompt: params.defaultPrompt || "",
      url: params.url || "",
    } });
  } else if (method === "Page.javascriptDialogClosed" && !source.sessionId) {
    update(tabId, { type: "dialog", dialog: null });
  }
  for (const listener of eventListeners) listener(tabId, method, params, source.sessionId);
});

chrome.debugger.onDetach.addListener((source, reason) => {
  if (source.tabId !== undefined) {
    console.info(`debugger detached from tab ${source.tabId}: ${reason}`);
    forgetTab(source.tabId);
  }
});
