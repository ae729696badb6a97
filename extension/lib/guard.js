// Guarded tabs: throw-away tabs (speculative replay, reload checks) where repeating an action cannot order, send or
// delete anything. Three browser-enforced layers, all in place before the tab loads its first page (open_tab):
//  1. A declarativeNetRequest session rule blocks every mutating request (any method but GET, HEAD and OPTIONS) the
//     tab makes, of every resource type, top-level form posts included. GETs still load.
//  2. A second session rule appends `Content-Security-Policy: sandbox <every allow-* token but allow-popups>` to every
//     document (main_frame, sub_frame) the tab loads, so its pages cannot open tabs or windows at all: no form posted
//     into a new tab (target=_blank, formtarget=_blank, window.open + a named target, form.submit() by script). A new
//     tab's first request leaves before any listener can guard it, so stopping the tab from existing is the only
//     browser-side way. Blob and srcdoc documents inherit the sandbox. Scripts, same-tab forms and links, cookies,
//     storage, dialogs and downloads work as before; `document.domain = ...` throws (SecurityError).
//  3. Through chrome.debugger, `Network.setBypassServiceWorker` keeps the site's service worker (registered from any
//     tab of the profile, the user's own included) out of the tab: a service worker's requests carry no tab id
//     (tabId -1), so a pass-through worker would otherwise carry the tab's posts past the rule of layer 1.
// Measured limits (protocol/README.md): a page can still hand work to a worker shared with other tabs
// (a SharedWorker, or its service worker by postMessage), whose requests have no tab; WebSocket messages are not
// requests; when the guard is lifted the rules go, but the document the tab shows stays sandboxed (no new tabs) until
// the tab navigates; a guard put on a tab that already shows a page sandboxes only the tab's next document.
// Rule ids: the block rule's id is the tab id, the sandbox rule's is the tab id with bit 30 flipped (the gate's
// rules flip bits 29 and 28: see rules.js for when ids could collide). The rules name their tab in
// `condition.tabIds` and live in the browser; whether a tab is guarded is in its record (tabstate.js), which a
// restarted worker reads back.
import { CommandError } from "./protocol.js";
import { SANDBOX_RULE_BIT } from "./constants.js";
import { blockMutatingRule, flippedRuleId } from "./rules.js";
import { syncServiceWorkerBypass } from "./swbypass.js";
import { isLoaded, loadTabState, tabState, update } from "./tabstate.js";
// Every sandbox token but allow-popups (allow-popups-to-escape-sandbox is moot without it; allow-top-navigation
// includes allow-top-navigation-by-user-activation).
export const SANDBOX_POLICY = "sandbox allow-scripts allow-same-origin allow-forms allow-modals allow-downloads " +
  "allow-pointer-lock allow-orientation-lock allow-presentation allow-storage-access-by-user-activation " +
  "allow-top-navigation allow-top-navigation-to-custom-protocols";

export function sandboxRuleId(tabId) {
  return flippedRuleId(tabId, SANDBOX_RULE_BIT);
}

function ruleIds(tabId) {
  return [tabId, sandboxRuleId(tabId)];
}

export function guardRules(tabId) {
  return [
    blockMutatingRule(tabId, tabId),
    {
      id: sandboxRuleId(tabId),
      priority: 1,
      action: {
        type: "modifyHeaders",
        responseHeaders: [{ header: "Content-Security-Policy", operation: "append", value: SANDBOX_POLICY }],
      },
      condition: { tabIds: [tabId], resourceTypes: ["main_frame", "sub_frame"] },
    },
  ];
}

// `debuggee: false` sets the rules only (a tab not handed over yet must not get a debugger attached).
export async function setGuard(tabId, guarded, { debuggee = true } = {}) {
  if (!isLoaded()) await loadTabState();
  // The record changes at once; the rules go in without waiting for it to be stored (a tab's first requests race them).
  const saved = update(tabId, { type: "guard", on: guarded });
  const what = guarded ? "guard" : "unguard";
  try {
    await chrome.declarativeNetRequest.updateSessionRules(
      guarded ? { removeRuleIds: ruleIds(tabId), addRules: guardRules(tabId) } : { removeRuleIds: ruleIds(tabId) },
    );
  } catch (error) {
    saved.catch(() => {});
    throw new CommandError("internal", `could not ${what} tab ${tabId}: ${error.message || error}`);
  }
  await saved;
  if (!debuggee) return;
  try {
    await syncServiceWorkerBypass(tabId);
  } catch (error) {
    // Guarding fails closed (the rules stay, the caller hears of it); a lifted guard whose bypass lingers only keeps
    // the site's service worker out of the tab until it is detached. A gated tab keeps its bypass (swbypass.js).
    const reason = error?.message || error;
    if (guarded) throw new CommandError("internal", `could not keep service workers out of tab ${tabId}: ${reason}`);
    console.warn(`tab ${tabId}: service-worker bypass not lifted: ${reason}`);
  }
}

export async function isGuarded(tabId) {
  await loadTabState();
  return tabState(tabId).guarded;
}

// The tab is gone: its rules go too (a missing rule is fine).
export async function dropGuard(tabId) {
  await loadTabState();
  const saved = update(tabId, { type: "guard", on: false });
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: ruleIds(tabId) }).catch(() => {});
  await saved;
}

// A guarded tab's page cannot open tabs (layer 2), but a tab guarded after it loaded a page still shows that
// unsandboxed page: a tab it opens (target=_blank, window.open) is guarded too. tabs.onCreated is the earliest event
// that names it, so the rules go in from there with no other round trip; the new tab's very first request can still
// leave before. Rules only: Chrome's openerTabId may name a tab the user opened by hand, which the debugger must not
// touch; webNavigation.onCreatedNavigationTarget (adoptIfOpenedByHanded) completes the guard. Returns whether it
// guarded the tab.
export async function guardIfOpenedByGuarded(tab) {
  if (tab.openerTabId === undefined) return false;
  if (!isLoaded()) await loadTabState();
  if (!tabState(tab.openerTabId).guarded) return false;
  await setGuard(tab.id, true, { debuggee: false }).catch((e) => console.warn(e.message));
  return true;
}

// The browser ended the tab's debugger session (the user cancelled the "is debugging this browser" bar, or DevTools
// took over): the service-worker bypass went with it, so put it back.
chrome.debugger.onDetach.addListener((source, reason) => {
  const tabId = source.tabId;
  if (tabId === undefined || reason === "target_closed" || !tabState(tabId).guarded) return;
  syncServiceWorkerBypass(tabId).catch((e) => console.warn(`tab ${tabId}: bypass not put back: ${e.message}`));
});
