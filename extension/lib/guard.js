// Guarded tabs: a declarativeNetRequest session rule per tab blocks every mutating request (POST, PUT, PATCH, DELETE)
// the tab makes, of every kind, top-level form posts included. Throw-away tabs (speculative replay, reload checks) run
// guarded, so repeating an action there cannot order, send or delete anything; GETs still load.
// The rule's id is the tab's id: the session rule set itself is the record, so a restarted worker needs no bookkeeping,
// and Chromium never reuses a tab id within a browser session.
import { CommandError } from "./protocol.js";

const MUTATING = ["post", "put", "patch", "delete"];
// A condition without `resourceTypes` matches every type except main_frame: name them all, so form posts are caught.
const ALL_TYPES = [
  "main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object", "xmlhttprequest", "ping",
  "csp_report", "media", "websocket", "webtransport", "webbundle", "other",
];

export function guardRule(tabId) {
  return {
    id: tabId,
    priority: 1,
    action: { type: "block" },
    condition: { tabIds: [tabId], requestMethods: MUTATING, resourceTypes: ALL_TYPES },
  };
}

// Mirror of the guarded tab ids, so tab listeners can decide without a round trip (see guardIfOpenedByGuarded).
const guardedTabs = new Set();
let loaded = null;
let ready = false;

export function loadGuarded() {
  if (!loaded) {
    loaded = chrome.declarativeNetRequest.getSessionRules().then((rules) => {
      for (const rule of rules) if (rule.condition?.tabIds?.includes(rule.id)) guardedTabs.add(rule.id);
      ready = true;
    });
  }
  return loaded;
}

export async function setGuard(tabId, guarded) {
  await loadGuarded(); // so the mirror's first load cannot undo this change
  if (guarded) guardedTabs.add(tabId);
  else guardedTabs.delete(tabId);
  try {
    await chrome.declarativeNetRequest.updateSessionRules(
      guarded ? { removeRuleIds: [tabId], addRules: [guardRule(tabId)] } : { removeRuleIds: [tabId] },
    );
  } catch (error) {
    const what = guarded ? "guard" : "unguard";
    throw new CommandError("internal", `could not ${what} tab ${tabId}: ${error.message || error}`);
  }
}

export async function isGuarded(tabId) {
  await loadGuarded();
  return guardedTabs.has(tabId);
}

// The tab is gone: its rule goes too (a missing rule is fine).
export async function dropGuard(tabId) {
  await loadGuarded();
  guardedTabs.delete(tabId);
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [tabId] }).catch(() => {});
}

// A tab opened by a guarded tab's page (target=_blank, window.open) is guarded too. tabs.onCreated is the earliest
// event that names it, so the rule goes in from there with no other round trip; still, the new tab's very first
// request can leave before (a form posted into a new tab: see protocol/README.md). Returns whether it guarded the tab.
export async function guardIfOpenedByGuarded(tab) {
  if (tab.openerTabId === undefined) return false;
  if (!ready) await loadGuarded();
  if (!guardedTabs.has(tab.openerTabId)) return false;
  await setGuard(tab.id, true).catch((e) => console.warn(e.message));
  return true;
}
