// After an action, wait until the tab is quiet before anyone observes it: loaded, no request it started since the
// action began still in flight, and no change to its DOM for a quiet window, at most a cap. A fixed delay saw a 300 ms
// debounced autocomplete before it had even asked for its suggestions; a busy page (a ticking clock, a stream) stops
// the wait at the cap, never hangs it.
import { currentDialog, framesOf } from "./cdp.js";
import { World } from "./worlds.js";

const POLL_MS = 50;
// Requests that never "finish" in the sense of a page settling: open sockets, beacons, media streams.
const LONG_LIVED = new Set(["websocket", "ping", "csp_report", "media"]);

const inflight = new Map(); // tabId -> Map(requestId -> start time, ms since the epoch)
const lastRequestActivity = new Map(); // tabId -> time a request last started or ended

function requestsOf(tabId) {
  let requests = inflight.get(tabId);
  if (!requests) inflight.set(tabId, (requests = new Map()));
  return requests;
}

export function trackRequests() {
  const started = (details) => {
    if (details.tabId < 0 || LONG_LIVED.has(details.type)) return;
    requestsOf(details.tabId).set(details.requestId, details.timeStamp);
    lastRequestActivity.set(details.tabId, details.timeStamp);
  };
  const ended = (details) => {
    if (details.tabId < 0 || !inflight.get(details.tabId)?.delete(details.requestId)) return;
    lastRequestActivity.set(details.tabId, details.timeStamp);
  };
  const all = { urls: ["<all_urls>"] };
  chrome.webRequest.onBeforeRequest.addListener(started, all);
  chrome.webRequest.onCompleted.addListener(ended, all);
  chrome.webRequest.onErrorOccurred.addListener(ended, all);
  chrome.tabs.onRemoved.addListener((tabId) => {
    inflight.delete(tabId);
    lastRequestActivity.delete(tabId);
    world.forget(tabId);
  });
}

// Requests started at or after `since` and still in flight (one the gate holds is among them until it is decided).
function pendingSince(tabId, since) {
  let pending = 0;
  for (const start of inflight.get(tabId)?.values() || []) if (start >= since) pending += 1;
  return pending;
}

// A MutationObserver in a world of our own (the page neither sees nor disturbs it) keeps the time of the last DOM
// change; inline style changes are left out, since script-driven animations make them on every frame.
const LAST_MUTATION = `(() => {
  if (!globalThis.branchwiseQuiet) {
    const state = { last: Date.now() };
    new MutationObserver((records) => {
      if (records.some((r) => r.type !== "attributes" || r.attributeName !== "style")) state.last = Date.now();
    }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    globalThis.branchwiseQuiet = state;
  }
  return globalThis.branchwiseQuiet.last;
})()`;

const world = new World("branchwise-settle");

async function lastMutation(tabId) {
  const root = async () => (await framesOf(tabId))[0].id;
  const last = await world.evaluate(tabId, root, LAST_MUTATION, { key: "main" });
  return typeof last === "number" ? last : Date.now(); // unreadable now (mid-navigation): counts as a change
}

// Waits until the tab is quiet (see the top of the file); `since` is when the action began. Returns how long it
// waited and whether the tab was quiet by then (false: the cap ended the wait).
export async function settle(tabId, since, { quiet_ms: quietMs, max_ms: maxMs }) {
  const begun = Date.now();
  for (;;) {
    if (currentDialog(tabId)) return { waited: Date.now() - begun, quiet: true };
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) return { waited: Date.now() - begun, quiet: true };
    const changed = Math.max(begun, await lastMutation(tabId), lastRequestActivity.get(tabId) || 0);
    const now = Date.now();
    if (tab.status === "complete" && pendingSince(tabId, since) === 0 && now - changed >= quietMs) {
      return { waited: now - begun, quiet: true };
    }
    if (now - begun >= maxMs) return { waited: now - begun, quiet: false };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
