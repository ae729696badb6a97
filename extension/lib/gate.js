// The network gate: while a run works in a tab, the tab's mutating requests (POST, PUT, PATCH, DELETE) that no
// approved action covers are held with CDP Fetch, and the backend decides: `release_request {hold_id, allow}` lets one
// go (exactly once) or fails it (BlockedByClient: the server receives nothing). An approved action runs with an
// allowance naming what the user approved (`act {allow: [{method, url}]}`, allowance.js): while that command runs,
// each entry lets one matching request through and is used up; every other mutating request of the tab is held as
// usual, so a second POST the approved click makes is asked about. A 307/308 redirect of a request let through
// follows it without a second question when it stays on the same origin; one to another origin is held and asked
// about. A tab has one allowance at a time, the latest act command's: an older act the backend stopped waiting for
// (timed out) cannot lend its allowance to the next action's requests.
// - Fetch pauses the requests of the session it is enabled on only, so it is enabled on the tab and on every child
//   target (out-of-process iframes, workers), which cdp.js starts paused until this is done.
// - Every other request is continued at once; a hold nobody answers is failed after the gate's hold timeout (fail
//   safe: the backend is gone), and so is every hold a restarted worker finds on record.
// - Fetch.disable lets paused requests go, so turning the gate off fails the tab's holds first.
// - Tabs a gated tab's page opens are gated too: from chrome.tabs.onCreated a block rule (no mutating request leaves),
//   replaced by the gate once webNavigation confirms the page opened the tab. The new tab's very first request can
//   leave before either (see protocol/README.md).
// - The backend does not gate guarded tabs (their mutating requests are blocked outright, guard.js), except to hand a
//   committed speculative tab over: gate first, then lift the guard, so nothing slips out in between.
import { childSessions, ensureAttached, onCdpEvent, onChildSession, send } from "./cdp.js";
import { allowanceOf, sameOrigin, takeEntry } from "./allowance.js";
import { CommandError, newId } from "./protocol.js";

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
// Every request is paused, GETs included, and GETs are continued at once. Pausing only the resource types that can
// carry a POST (not images, scripts, stylesheets...) saved ~25 % of the added load time, within the noise
// (BENCHMARKS.md): most of the cost is Chromium routing the tab's requests through the interceptor at all, and a type
// list misses what this Chromium's filter cannot name (FedCM's POSTs, for one).
const PATTERNS = [{ urlPattern: "*", requestStage: "Request" }];
const DEFAULT_HOLD_TIMEOUT_MS = 150000;
const CHILD_TYPES = new Set(["iframe", "worker"]);
// The temporary block rule of a tab opened by a gated tab: bit 29 flipped (guard.js uses the id and bit 30).
const OPENED_BIT = 0x20000000;
const STORAGE_KEY = "gate";
const LET_THROUGH_KEPT = 200;
// Same list as guard.js: a rule without resourceTypes leaves out main_frame, so form posts would pass.
const ALL_TYPES = [
  "main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object", "xmlhttprequest", "ping",
  "csp_report", "media", "websocket", "webtransport", "webbundle", "other",
];

const gated = new Map(); // tabId -> hold timeout (ms)
const allowances = new Map(); // tabId -> the allowance of the latest act command, while it runs
const holds = new Map(); // holdId -> { tabId, sessionId, requestId, timer }
// Request id of a mutating request that went out -> { url, attribution: {hold_id} or {allowed} }: its 307/308
// redirects follow, reported with the same attribution.
const letThrough = new Map();
let emit = () => false;
let loaded = null;

export function openedRuleId(tabId) {
  return (tabId ^ OPENED_BIT) || 0x7fffffff;
}

async function persist() {
  const holdList = [...holds].map(([holdId, h]) => ({ holdId, tabId: h.tabId, sessionId: h.sessionId,
    requestId: h.requestId }));
  await chrome.storage.session.set({ [STORAGE_KEY]: { gated: [...gated], holds: holdList } });
}

// A restarted worker gets its gated tabs back; the holds it finds belong to the worker that died, whose answers
// nobody can route any more: they are failed.
export function loadGate() {
  if (!loaded) {
    loaded = chrome.storage.session.get(STORAGE_KEY).then(async ({ [STORAGE_KEY]: saved }) => {
      for (const [tabId, timeoutMs] of saved?.gated || []) gated.set(tabId, timeoutMs);
      const orphans = saved?.holds || [];
      if (!orphans.length) return;
      console.warn(`network gate: failing ${orphans.length} request(s) held before the worker restarted`);
      for (const h of orphans) await failPaused(h.tabId, h.requestId, h.sessionId || undefined);
      await persist();
    });
  }
  return loaded;
}

async function enableFetch(tabId, sessionId) {
  await send(tabId, "Fetch.enable", { patterns: PATTERNS }, sessionId);
}

async function enableEverywhere(tabId) {
  await ensureAttached(tabId);
  await enableFetch(tabId);
  for (const entry of childSessions(tabId).values()) {
    await enableFetch(tabId, entry.sessionId).catch((e) => console.warn(`tab ${tabId}: frame not gated: ${e.message}`));
  }
}

// Fails a paused request: the server receives nothing. A request the page already dropped is failed enough.
function failPaused(tabId, requestId, sessionId) {
  return send(tabId, "Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }, sessionId).catch(() => {});
}

// Takes a hold off the record before anything is awaited, so whoever settles it (the backend's answer, the hold
// timeout, the gate coming off) does so exactly once. Null when it is settled already.
function takeHold(holdId) {
  const hold = holds.get(holdId);
  if (!hold) return null;
  holds.delete(holdId);
  clearTimeout(hold.timer);
  return hold;
}

function holdIdsOf(tabId) {
  return [...holds].filter(([, hold]) => hold.tabId === tabId).map(([holdId]) => holdId);
}

async function fail(holdId, why) {
  const hold = takeHold(holdId);
  if (!hold) return;
  await persist();
  console.warn(`network gate: failed held request ${holdId} of tab ${hold.tabId}: ${why}`);
  await failPaused(hold.tabId, hold.requestId, hold.sessionId);
}

async function failHoldsOf(tabId, why) {
  for (const holdId of holdIdsOf(tabId)) await fail(holdId, why);
}

// The tab's debugger session is gone, and its paused requests with it: only the record is left to drop.
async function forgetHoldsOf(tabId) {
  const ids = holdIdsOf(tabId);
  for (const holdId of ids) takeHold(holdId);
  if (ids.length) await persist();
}

export async function setGate(tabId, on, holdTimeoutMs = DEFAULT_HOLD_TIMEOUT_MS) {
  await loadGate();
  if (on) {
    gated.set(tabId, holdTimeoutMs);
    await persist();
    try {
      await enableEverywhere(tabId);
    } catch (error) {
      gated.delete(tabId);
      await persist();
      throw error;
    }
    return;
  }
  if (!gated.delete(tabId)) return;
  await persist();
  await failHoldsOf(tabId, "the gate was turned off");
  await send(tabId, "Fetch.disable").catch(() => {});
  for (const entry of childSessions(tabId).values()) {
    await send(tabId, "Fetch.disable", {}, entry.sessionId).catch(() => {});
  }
}

// The tab is gone: forget its gate, its holds and its block rule.
export async function dropGate(tabId) {
  await loadGate();
  if (gated.delete(tabId)) await persist();
  await forgetHoldsOf(tabId);
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [openedRuleId(tabId)] }).catch(() => {});
}

// Runs `fn` (an act command) with the allowance of what the user approved with it (`act {allow}`), until it returns.
// Every act replaces the tab's allowance, an empty one included: the backend sends the next act only once it stopped
// waiting for the previous one, so an allowance still running then belongs to nobody.
export async function withAllowance(tabId, allow, fn) {
  const allowance = allowanceOf(allow);
  allowances.set(tabId, allowance);
  try {
    return await fn();
  } finally {
    if (allowances.get(tabId) === allowance) allowances.delete(tabId);
  }
}

function takeAllowed(tabId, method, url) {
  const allowance = allowances.get(tabId);
  return allowance ? takeEntry(allowance, method, url) : null;
}

export async function releaseHold(holdId, allow) {
  const hold = takeHold(holdId);
  if (!hold) {
    throw new CommandError("invalid_message", `no request is held as ${holdId} (released, failed or timed out)`);
  }
  await persist();
  if (!allow) {
    await failPaused(hold.tabId, hold.requestId, hold.sessionId);
    return;
  }
  await send(hold.tabId, "Fetch.continueRequest", { requestId: hold.requestId }, hold.sessionId);
  remember(hold.requestId, { url: hold.url, attribution: { hold_id: holdId } });
  emit({ type: "request_sent", id: newId(), tab_id: hold.tabId, method: hold.method, url: hold.url, hold_id: holdId });
}

function remember(requestId, how) {
  letThrough.set(requestId, how);
  if (letThrough.size > LET_THROUGH_KEPT) letThrough.delete(letThrough.keys().next().value);
}

function header(headers, name) {
  const key = Object.keys(headers || {}).find((k) => k.toLowerCase() === name);
  return key ? headers[key] : undefined;
}

function bodyBytes(request) {
  if (request.postDataEntries) {
    return request.postDataEntries.reduce((n, e) => {
      const b = e.bytes || "";
      return n + Math.floor((b.length * 3) / 4) - (b.endsWith("==") ? 2 : b.endsWith("=") ? 1 : 0);
    }, 0);
  }
  return request.postData ? new TextEncoder().encode(request.postData).length : 0;
}

async function paused(tabId, params, sessionId) {
  const { requestId, request } = params;
  const method = (request.method || "").toUpperCase();
  await loadGate();
  if (MUTATING.has(method) && !gated.has(tabId)) {
    // Paused just as the gate came off (Fetch.disable would let it go): nobody asked for it, so it fails.
    await failPaused(tabId, requestId, sessionId);
    console.warn(`network gate: failed ${method} ${request.url} of tab ${tabId}: paused while the gate came off`);
    return;
  }
  if (!MUTATING.has(method)) {
    await send(tabId, "Fetch.continueRequest", { requestId }, sessionId).catch(() => {}); // dropped meanwhile: fine
    return;
  }
  // A same-origin redirect keeps what let the original through (once: the record is taken); else an entry of the
  // running approval, used up here even if the page drops the request before it goes (fail safe: a retry is asked
  // about). A redirect to another origin names a server nobody approved: it is held like any other request.
  const from = letThrough.get(params.redirectedRequestId);
  if (from) letThrough.delete(params.redirectedRequestId);
  const redirected = from && sameOrigin(from.url, request.url) ? from : null;
  const allowed = redirected ? null : takeAllowed(tabId, method, request.url);
  if (redirected || allowed) {
    try {
      await send(tabId, "Fetch.continueRequest", { requestId }, sessionId);
    } catch (error) {
      return; // the page dropped it meanwhile (navigated, closed)
    }
    const attribution = redirected ? redirected.attribution : { allowed };
    remember(requestId, { url: request.url, attribution });
    emit({ type: "request_sent", id: newId(), tab_id: tabId, method, url: request.url, ...attribution,
      ...(redirected ? { redirected_from: redirected.url } : {}) });
    return;
  }
  const holdId = newId();
  const timeoutMs = gated.get(tabId) || DEFAULT_HOLD_TIMEOUT_MS;
  const timer = setTimeout(() => fail(holdId, `no answer from the backend within ${timeoutMs / 1000} s`), timeoutMs);
  holds.set(holdId, { tabId, sessionId, requestId, method, url: request.url, timer });
  await persist();
  const initiator = header(request.headers, "referer") || header(request.headers, "origin");
  const told = emit({
    type: "request_held", id: newId(), tab_id: tabId, hold_id: holdId, method, url: request.url,
    resource_type: params.resourceType || "", body_bytes: bodyBytes(request),
    ...(initiator ? { initiator_url: initiator } : {}),
  });
  if (!told) await fail(holdId, "the backend is not connected, so nobody can approve it");
}

// A tab a gated tab's page opened (target=_blank, window.open): block its mutating requests from the earliest event
// that names it; webNavigation.onCreatedNavigationTarget (gateIfOpenedByGated) then puts the gate on instead.
// Returns whether it did.
export async function blockIfOpenedByGated(tab) {
  await loadGate();
  if (tab.openerTabId === undefined || !gated.has(tab.openerTabId)) return false;
  const id = openedRuleId(tab.id);
  await chrome.declarativeNetRequest.updateSessionRules({
    removeRuleIds: [id],
    addRules: [{ id, priority: 1, action: { type: "block" }, condition: { tabIds: [tab.id],
      requestMethods: ["post", "put", "patch", "delete"], resourceTypes: ALL_TYPES } }],
  }).catch((e) => console.warn(`tab ${tab.id}: no block rule: ${e.message}`));
  return true;
}

export async function gateIfOpenedByGated(sourceTabId, tabId) {
  await loadGate();
  if (!gated.has(sourceTabId)) return;
  try {
    await setGate(tabId, true, gated.get(sourceTabId));
  } catch (error) {
    console.warn(`tab ${tabId}, opened by gated tab ${sourceTabId}, not gated (its block rule stays):`, error.message);
    return;
  }
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [openedRuleId(tabId)] }).catch(() => {});
}

// Opened from a gated tab but not by its page (the user's own tab): the block rule goes.
export async function unblockOpened(tabId) {
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [openedRuleId(tabId)] }).catch(() => {});
}

export function startGate(emitter) {
  emit = emitter;
  loadGate();
  onCdpEvent((tabId, method, params, sessionId) => {
    if (method === "Fetch.requestPaused") {
      paused(tabId, params, sessionId).catch((e) => console.warn(`network gate, tab ${tabId}:`, e));
    }
  });
  onChildSession(async (tabId, sessionId, info) => {
    if (gated.has(tabId) && CHILD_TYPES.has(info.type)) await enableFetch(tabId, sessionId);
  });
  // The browser ended the tab's debugger session (the user cancelled the "debugging this browser" bar): its holds
  // went with it, and the gate is put back.
  chrome.debugger.onDetach.addListener((source, reason) => {
    const tabId = source.tabId;
    if (tabId === undefined || !gated.has(tabId)) return;
    forgetHoldsOf(tabId).catch((e) => console.warn(`network gate, tab ${tabId}:`, e));
    if (reason === "target_closed") return;
    console.warn(`tab ${tabId}: debugger detached (${reason}); putting the network gate back`);
    enableEverywhere(tabId).catch((e) => console.warn(`tab ${tabId}: network gate not put back: ${e.message}`));
  });
}
