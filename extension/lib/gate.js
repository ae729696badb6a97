// The network gate: while a run works in a tab, the tab's mutating requests (any method but GET, HEAD and OPTIONS:
// POST, DELETE, WebDAV's MOVE, a custom verb) that no approved action covers are held with CDP Fetch, and the backend decides: `release_request {hold_id, allow}` lets one
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
// - A gated tab bypasses service workers (swbypass.js): a worker would send the tab's requests on from its own target,
//   which this gate does not see. While an act runs, the tab's new WebSocket and WebTransport connections are refused
//   (withAllowance): what an open connection sends cannot be held.
// - The backend does not gate guarded tabs (their mutating requests are blocked outright, guard.js), except to hand a
//   committed speculative tab over: gate first, then lift the guard, so nothing slips out in between.
// - The gate, the holds and the allowance are in the tab's record (tabstate.js), which persists the gate and the holds;
//   the holds' timers, and the requests let through (for their redirects), are this worker's own.
import { childSessions, ensureAttached, onCdpEvent, onChildSession, send } from "./cdp.js";
import { allowanceOf, findEntry, sameOrigin } from "./allowance.js";
import { CHANNEL_RULE_BIT, DEFAULT_HOLD_TIMEOUT_MS, OPENED_RULE_BIT, isMutating } from "./constants.js";
import { CommandError, newId } from "./protocol.js";
import { blockChannelsRule, blockMutatingRule, flippedRuleId } from "./rules.js";
import { syncServiceWorkerBypass } from "./swbypass.js";
import { findHold, loadTabState, tabState, tabStates, update } from "./tabstate.js";

// Every request is paused, GETs included, and GETs are continued at once. Pausing only the resource types that can
// carry a POST (not images, scripts, stylesheets...) saved ~25 % of the added load time, within the noise
// (BENCHMARKS.md): most of the cost is Chromium routing the tab's requests through the interceptor at all, and a type
// list misses what this Chromium's filter cannot name (FedCM's POSTs, for one).
const PATTERNS = [{ urlPattern: "*", requestStage: "Request" }];
const CHILD_TYPES = new Set(["iframe", "worker"]);
const LET_THROUGH_KEPT = 200;

const timers = new Map(); // holdId -> the hold's timeout
// Holds taken off the record whose answer is on its way to the browser (holdId -> the hold, with its tabId): a
// debugger session ending meanwhile lets them go as well.
const settling = new Map();
// Request id of a mutating request that went out -> { url, attribution: {hold_id} or {allowed} }: its 307/308
// redirects follow, reported with the same attribution.
const letThrough = new Map();
let emit = () => false;
let loaded = null;

// The temporary block rule of a tab opened by a gated tab: bit 29 flipped (guard.js uses the id and bit 30).
export function openedRuleId(tabId) {
  return flippedRuleId(tabId, OPENED_RULE_BIT);
}

// The rule refusing new WebSocket and WebTransport connections while an act runs in a gated tab: bit 28 flipped.
export function channelRuleId(tabId) {
  return flippedRuleId(tabId, CHANNEL_RULE_BIT);
}

function gateOf(tabId) {
  return tabState(tabId).gate;
}

// A restarted worker gets its gated tabs back with the tab state; the holds it finds belong to the worker that died,
// whose answers nobody can route any more: they are failed.
export function loadGate() {
  if (!loaded) {
    loaded = loadTabState().then(async () => {
      const orphans = tabStates().flatMap(([tabId, record]) =>
        [...record.holds].map(([holdId, h]) => ({ tabId, holdId, ...h })));
      if (!orphans.length) return;
      console.warn(`network gate: failing ${orphans.length} request(s) held before the worker restarted`);
      for (const h of orphans) await failPaused(h.tabId, h.requestId, h.sessionId || undefined);
      await Promise.all(orphans.map((h) => update(h.tabId, { type: "unhold", holdId: h.holdId })));
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

function stopTimer(holdId) {
  clearTimeout(timers.get(holdId));
  timers.delete(holdId);
}

// Takes a hold off the record before anything is awaited, so whoever settles it (the backend's answer, the hold
// timeout, the gate coming off) does so exactly once; resolves once that is stored. Null when it is settled already.
async function takeHold(holdId) {
  const hold = findHold(holdId);
  if (!hold) return null;
  settling.set(holdId, hold);
  const saved = update(hold.tabId, { type: "unhold", holdId });
  stopTimer(holdId);
  await saved;
  return hold;
}

// The answer to a taken hold reached the browser, or could not: true when the session ended first and the hold was
// reported let go (forgetHoldsOf).
function settled(holdId) {
  return !settling.delete(holdId);
}

function holdIdsOf(tabId) {
  return [...tabState(tabId).holds.keys()];
}

async function fail(holdId, why) {
  const hold = await takeHold(holdId);
  if (!hold) return;
  console.warn(`network gate: failed held request ${holdId} of tab ${hold.tabId}: ${why}`);
  await failPaused(hold.tabId, hold.requestId, hold.sessionId);
  settled(holdId);
}

async function failHoldsOf(tabId, why) {
  for (const holdId of holdIdsOf(tabId)) await fail(holdId, why);
}

// The socket to the backend closed: the answers to what is held now would come from a backend that is gone, so each
// hold fails at once instead of waiting out its timeout (fail safe; a backend back soon asks again about nothing
// that went out).
export async function failAllHolds(why) {
  await loadGate();
  for (const [tabId] of tabStates()) await failHoldsOf(tabId, why);
}

// The tab's debugger session is gone, and its paused requests with it: Chromium lets them go (measured when the
// extension detaches; a block rule set while they are held does not stop them: docs/platform.md). Unless the tab
// itself closed, each one went out undecided, and the backend hears so: the question is withdrawn and the audit log
// says it went out. Then the record is dropped.
async function forgetHoldsOf(tabId, reason) {
  const answering = [...settling].filter(([, hold]) => hold.tabId === tabId);
  for (const [holdId, hold] of [...tabState(tabId).holds, ...answering]) {
    stopTimer(holdId);
    settling.delete(holdId);
    if (reason === "target_closed") continue;
    emit({ type: "request_sent", id: newId(), tab_id: tabId, method: hold.method, url: hold.url, hold_id: holdId,
      detached: reason });
  }
  await update(tabId, { type: "drop_holds" });
}

// Gate changes of one tab run one after another, in the order asked: commands are handled at once, and an "off"
// (which fails the tab's holds first, a debugger call each) overtaken by an "on" would end with the record saying
// gated and Fetch disabled, nothing intercepted. `check` (the backend's "on" needs a handed-over tab) runs in that
// order too: checked before the queue, an "off" asked just after could overtake the "on" and leave the tab gated.
// `openedBy`: the tab the backend gated whose page (or whose opened tabs' pages) opened this one.
const gateChanges = new Map();

export function setGate(tabId, on, { holdTimeoutMs = DEFAULT_HOLD_TIMEOUT_MS, openedBy = null, check = null } = {}) {
  const next = (gateChanges.get(tabId) || Promise.resolve()).catch(() => {})
    .then(async () => {
      if (check) await check();
      await changeGate(tabId, on, holdTimeoutMs, openedBy);
    });
  gateChanges.set(tabId, next);
  next.catch(() => {}).finally(() => { if (gateChanges.get(tabId) === next) gateChanges.delete(tabId); });
  return next;
}

async function changeGate(tabId, on, holdTimeoutMs, openedBy) {
  await loadGate();
  if (on) {
    await update(tabId, { type: "gate", on: true, holdTimeoutMs, openedBy });
    try {
      await enableEverywhere(tabId);
      await syncServiceWorkerBypass(tabId);
    } catch (error) {
      await update(tabId, { type: "gate", on: false });
      throw error;
    }
    return;
  }
  if (!gateOf(tabId)) return;
  await update(tabId, { type: "gate", on: false });
  await failHoldsOf(tabId, "the gate was turned off");
  await send(tabId, "Fetch.disable").catch(() => {});
  for (const entry of childSessions(tabId).values()) {
    await send(tabId, "Fetch.disable", {}, entry.sessionId).catch(() => {});
  }
  await syncServiceWorkerBypass(tabId).catch((e) => console.warn(`tab ${tabId}: service-worker bypass: ${e.message}`));
  // The tabs gated on this one's behalf (its page opened them) that the backend never gated itself: their run is over
  // too (a tab opened as the run ended, which the backend heard of only after).
  for (const [other, state] of tabStates()) {
    if (state.gate?.openedBy === tabId) await setGate(other, false);
  }
}

// The tab is gone: forget its gate, its holds and its block rules.
export async function dropGate(tabId) {
  await loadGate();
  await update(tabId, { type: "gate", on: false });
  await forgetHoldsOf(tabId, "target_closed");
  await dropGateRules(tabId);
}

// The tab's own block rules (a tab a gated tab's page opened, until its gate is on; new sockets refused while an act
// runs): they name the tab and outlive a worker that stopped mid-act, so they go when the tab does or is taken back.
export async function dropGateRules(tabId) {
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [openedRuleId(tabId), channelRuleId(tabId)] })
    .catch(() => {});
}

// Runs `fn` (an act command) with the allowance of what the user approved with it (`act {allow}`), until it returns.
// Every act replaces the tab's allowance, an empty one included: the backend sends the next act only once it stopped
// waiting for the previous one, so an allowance still running then belongs to nobody.
//
// In a gated tab, the act also runs with new WebSocket and WebTransport connections refused: the gate cannot hold
// what such a connection sends once it is open (a click that opens a chat socket and posts on it).
export async function withAllowance(tabId, allow, fn) {
  const act = newId();
  update(tabId, { type: "allow", act, entries: allowanceOf(allow) });
  const channels = gateOf(tabId) ? channelRuleId(tabId) : null;
  if (channels !== null) {
    await chrome.declarativeNetRequest.updateSessionRules({
      removeRuleIds: [channels], addRules: [blockChannelsRule(channels, tabId)],
    });
  }
  try {
    return await fn();
  } finally {
    update(tabId, { type: "act_done", act });
    if (channels !== null) {
      await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [channels] }).catch(() => {});
    }
  }
}

// Uses up the entry of the running act's allowance the request matches; returns it as the wire names it, or null.
function takeAllowed(tabId, method, url) {
  const { allowance } = tabState(tabId);
  const index = allowance ? findEntry(allowance.entries, method, url) : -1;
  if (index < 0) return null;
  update(tabId, { type: "allowance_used", act: allowance.act, index });
  const { method: allowedMethod, url: allowedUrl } = allowance.entries[index];
  return { method: allowedMethod, url: allowedUrl };
}

export async function releaseHold(holdId, allow) {
  const hold = await takeHold(holdId);
  if (!hold) {
    throw new CommandError("invalid_message", `no request is held as ${holdId} (released, failed or timed out)`);
  }
  if (!allow) {
    await failPaused(hold.tabId, hold.requestId, hold.sessionId);
    settled(holdId);
    return;
  }
  try {
    await send(hold.tabId, "Fetch.continueRequest", { requestId: hold.requestId }, hold.sessionId);
  } catch (error) {
    if (settled(holdId)) return; // the session ended first: it went out, and the backend was told so
    throw error;
  }
  if (settled(holdId)) return;
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
  if (isMutating(method) && !gateOf(tabId)) {
    // Paused just as the gate came off (Fetch.disable would let it go): nobody asked for it, so it fails.
    await failPaused(tabId, requestId, sessionId);
    console.warn(`network gate: failed ${method} ${request.url} of tab ${tabId}: paused while the gate came off`);
    return;
  }
  if (!isMutating(method)) {
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
  const timeoutMs = gateOf(tabId)?.holdTimeoutMs || DEFAULT_HOLD_TIMEOUT_MS;
  timers.set(holdId, setTimeout(() => fail(holdId, `no answer from the backend within ${timeoutMs / 1000} s`),
    timeoutMs));
  await update(tabId, { type: "hold", holdId, hold: { sessionId, requestId, method, url: request.url } });
  if (!findHold(holdId)) return; // the debugger session ended meanwhile: reported let go (forgetHoldsOf)
  const initiator = header(request.headers, "referer") || header(request.headers, "origin");
  // A tab a gated tab's page opened is the opener's run's: said with the hold, which can reach the backend before the
  // tab's `tab_event`.
  const opener = gateOf(tabId)?.openedBy ?? null;
  const told = emit({
    type: "request_held", id: newId(), tab_id: tabId, hold_id: holdId, method, url: request.url,
    resource_type: params.resourceType || "", body_bytes: bodyBytes(request),
    ...(initiator ? { initiator_url: initiator } : {}), ...(opener !== null ? { opener_tab_id: opener } : {}),
  });
  if (!told) await fail(holdId, "the backend is not connected, so nobody can approve it");
}

// A tab a gated tab's page opened (target=_blank, window.open): block its mutating requests from the earliest event
// that names it; webNavigation.onCreatedNavigationTarget (gateIfOpenedByGated) then puts the gate on instead.
// Returns whether it did.
export async function blockIfOpenedByGated(tab) {
  await loadGate();
  if (tab.openerTabId === undefined || !gateOf(tab.openerTabId)) return false;
  const id = openedRuleId(tab.id);
  await chrome.declarativeNetRequest.updateSessionRules({
    removeRuleIds: [id],
    addRules: [blockMutatingRule(id, tab.id)],
  }).catch((e) => console.warn(`tab ${tab.id}: no block rule: ${e.message}`));
  return true;
}

export async function gateIfOpenedByGated(sourceTabId, tabId) {
  await loadGate();
  const sourceGate = gateOf(sourceTabId);
  if (!sourceGate) return;
  try {
    // Named by the tab the backend gated itself: a tab opened by a tab the run's page opened belongs to the same run,
    // and the backend may not have heard of the tab in between yet.
    await setGate(tabId, true,
      { holdTimeoutMs: sourceGate.holdTimeoutMs, openedBy: sourceGate.openedBy ?? sourceTabId });
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
    if (gateOf(tabId) && CHILD_TYPES.has(info.type)) await enableFetch(tabId, sessionId);
  });
  // The browser ended the tab's debugger session (the user cancelled the "debugging this browser" bar): its holds
  // went out with it, and the gate is put back.
  chrome.debugger.onDetach.addListener((source, reason) => {
    const tabId = source.tabId;
    if (tabId === undefined || !gateOf(tabId)) return;
    forgetHoldsOf(tabId, reason).catch((e) => console.warn(`network gate, tab ${tabId}:`, e));
    if (reason === "target_closed") return;
    console.warn(`tab ${tabId}: debugger detached (${reason}); putting the network gate back`);
    // The service-worker bypass went with the session too: without it a pass-through worker carries the tab's posts
    // past the gate.
    enableEverywhere(tabId)
      .then(() => syncServiceWorkerBypass(tabId))
      .catch((e) => console.warn(`tab ${tabId}: network gate not put back: ${e.message}`));
  });
}
