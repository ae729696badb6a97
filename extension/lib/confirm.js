// Confirmation cards, worker side. A confirm_request is kept in chrome.storage.session ("confirms"), so the side panel
// shows it even when opened later or after the worker slept; the element is highlighted on the page while the card is
// up. The user's click goes back as confirm_answer with the request's nonce; confirm_closed removes the card.
import { ensureAttached, send, sessionFor } from "./cdp.js";
import { STORAGE } from "./constants.js";
import { newId } from "./protocol.js";
import { isHanded, isLoaded, loadTabState } from "./tabstate.js";

const PANEL_URL = chrome.runtime.getURL("sidepanel.html");
const HIGHLIGHT = {
  showInfo: true,
  contentColor: { r: 220, g: 38, b: 38, a: 0.25 },
  paddingColor: { r: 220, g: 38, b: 38, a: 0.15 },
  borderColor: { r: 185, g: 28, b: 28, a: 0.9 },
  marginColor: { r: 220, g: 38, b: 38, a: 0.1 },
};

// Storage round-trips interleave; fold changes one at a time so none is lost.
let chain = Promise.resolve();

function update(change) {
  chain = chain.then(async () => {
    const next = change(await pendingConfirms());
    await chrome.storage.session.set({ [STORAGE.confirms]: next });
    return next;
  }).catch((error) => {
    console.warn("confirmation state lost", error);
    return [];
  });
  return chain;
}

export async function pendingConfirms() {
  const { [STORAGE.confirms]: confirms = [] } = await chrome.storage.session.get(STORAGE.confirms);
  return confirms;
}

async function panelIsOpen() {
  try {
    const contexts = await chrome.runtime.getContexts({ documentUrls: [PANEL_URL] });
    return contexts.length > 0;
  } catch {
    return false;
  }
}

// A side panel cannot be opened without a user gesture: the badge says something is waiting instead.
async function flagIfPanelClosed() {
  if (await panelIsOpen()) return;
  await chrome.action.setBadgeBackgroundColor({ color: "#b91c1c" }).catch(() => {});
  await chrome.action.setBadgeText({ text: "!" }).catch(() => {});
}

async function highlight(tabId, element) {
  // Only in a tab the user handed over: the backend's word is not enough to attach to any other.
  if (!isLoaded()) await loadTabState();
  if (!isHanded(tabId)) throw new Error(`tab ${tabId} was not handed over to Branchwise`);
  await ensureAttached(tabId);
  const sessionId = sessionFor(tabId, element.target);
  const node = { backendNodeId: element.backend_node_id };
  // Overlay needs the DOM domain; both stay on for the tab's session (enabling them again is harmless).
  await send(tabId, "DOM.enable", {}, sessionId);
  await send(tabId, "Overlay.enable", {}, sessionId);
  await send(tabId, "DOM.scrollIntoViewIfNeeded", node, sessionId).catch(() => {});
  await send(tabId, "Overlay.highlightNode", { ...node, highlightConfig: HIGHLIGHT }, sessionId);
}

async function unhighlight(tabId, element) {
  let sessionId;
  try {
    sessionId = sessionFor(tabId, element.target);
  } catch {
    return; // the frame is gone, and its highlight with it
  }
  await send(tabId, "Overlay.hideHighlight", {}, sessionId).catch(() => {});
}

export async function showConfirm(message) {
  const entry = {
    approval_id: message.approval_id, nonce: message.nonce, run_id: message.run_id, kind: message.kind || "action",
    tab_id: message.tab_id ?? null, action_text: message.action_text || "", url: message.url || "",
    element_label: message.element_label || "", element: message.element || null, reasons: message.reasons || [],
    request_method: message.request_method || "", request_url: message.request_url || "", sends: message.sends || [],
    received_at: Date.now(), deadline: Date.now() + message.timeout_s * 1000,
    highlighted: false, highlight_error: "", answered: "",
  };
  await update((confirms) => [...confirms.filter((c) => c.approval_id !== entry.approval_id), entry]);
  await flagIfPanelClosed();
  if (!entry.element || entry.tab_id == null) return;
  // A highlight that fails (element gone, frame closed) must not keep the card from being answered.
  let highlighted = false;
  let error = "";
  try {
    await highlight(entry.tab_id, entry.element);
    highlighted = true;
  } catch (e) {
    error = e.message || String(e);
    console.warn("could not highlight the element of confirmation", entry.approval_id, error);
  }
  const after = await update((confirms) => confirms.map((c) => (c.approval_id === entry.approval_id
    ? { ...c, highlighted, highlight_error: error } : c)));
  // Closed while the highlight was being drawn: take it down again.
  const stillOpen = after.some((c) => c.approval_id === entry.approval_id);
  if (highlighted && !stillOpen) await unhighlight(entry.tab_id, entry.element);
}

export async function closeConfirm(approvalId) {
  let closed = null;
  const left = await update((confirms) => {
    closed = confirms.find((c) => c.approval_id === approvalId) || null;
    return confirms.filter((c) => c.approval_id !== approvalId);
  });
  if (closed?.element && closed.tab_id != null) await unhighlight(closed.tab_id, closed.element);
  if (!left.length) await chrome.action.setBadgeText({ text: "" }).catch(() => {});
}

// After a reconnect the backend has already denied whatever it asked on the old connection.
export async function dropConfirmsBefore(time) {
  const stale = (await pendingConfirms()).filter((c) => c.received_at < time);
  for (const c of stale) await closeConfirm(c.approval_id);
}

// The user clicked Approve or Deny: answer once, echoing the nonce the backend sent with the request. Checked, sent
// and marked answered in one step of the update chain, so a second click (Approve, then Deny) cannot send a second
// answer or show one the backend ignored.
export async function answerConfirm(connection, approvalId, approved) {
  let result = { error: "This confirmation is already closed." };
  await update((confirms) => {
    const entry = confirms.find((c) => c.approval_id === approvalId);
    if (!entry) return confirms;
    if (entry.answered) {
      result = { error: "This confirmation was already answered." };
      return confirms;
    }
    const sent = connection.send({ type: "confirm_answer", id: newId(), approval_id: entry.approval_id,
      nonce: entry.nonce, approved: Boolean(approved) });
    if (!sent) {
      result = { error: "Not connected to the backend: the answer could not be sent." };
      return confirms;
    }
    result = { ok: true };
    return confirms.map((c) => (c === entry ? { ...c, answered: approved ? "approved" : "denied" } : c));
  });
  return result;
}
