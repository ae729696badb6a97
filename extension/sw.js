// The Branchwise service worker: thin and obedient. It executes an allow-listed set of commands on the tabs the user
// handed over, streams their events, and relays the side panel. All thinking happens in the local backend.
import { act } from "./lib/act.js";
import { answerConfirm, closeConfirm, dropConfirmsBefore, showConfirm } from "./lib/confirm.js";
import { inspect } from "./lib/inspect.js";
import { readPage } from "./lib/readpage.js";
import { Connection } from "./lib/connection.js";
import { observe } from "./lib/observe.js";
import { watchRequests } from "./lib/network.js";
import { trackRequests } from "./lib/settle.js";
import { trackChannels } from "./lib/channels.js";
import { STORAGE } from "./lib/constants.js";
import { CommandError, newId } from "./lib/protocol.js";
import { demoOrigin, loadSiteLists, requireSiteAllowed, siteRefusal } from "./lib/sites.js";
import { applyRunUpdate, applyTreeUpdate, getConnectionStatus, markRunsCutOff, runGoingOn } from "./lib/status.js";
import {
  activateTab, adoptIfOpenedByHanded, closeTab, forgetClosed, guardTab, handOverFor, isForbiddenUrl, listHanded, openTab,
  requireHanded, takeBack,
} from "./lib/tabs.js";
import { currentDialog, onCdpEvent } from "./lib/cdp.js";
import { dropGuard, guardIfOpenedByGuarded } from "./lib/guard.js";
import { isHanded, loadTabState } from "./lib/tabstate.js";
import {
  blockIfOpenedByGated, dropGate, failAllHolds, gateIfOpenedByGated, releaseHold, setGate, startGate, unblockOpened,
  withAllowance,
} from "./lib/gate.js";

// A handed-over tab whose page (or the page it is loading) is on a site the user's lists allow.
async function requireWorkable(tabId) {
  const tab = await requireHanded(tabId);
  await requireSiteAllowed(tab.url);
  if (tab.pendingUrl) await requireSiteAllowed(tab.pendingUrl);
  return tab;
}

async function handleCommand(message) {
  switch (message.type) {
    case "list_tabs":
      return { type: "tabs", tabs: await listHanded() };
    case "open_tab":
      await requireSiteAllowed(message.url);
      return { type: "tab_opened", tab: await openTab(message.url, message.active, Boolean(message.guarded)) };
    case "close_tab":
      await closeTab(message.tab_id);
      return { type: "done" };
    case "guard_tab":
      await guardTab(message.tab_id, Boolean(message.guarded));
      return { type: "done" };
    case "activate_tab":
      await activateTab(message.tab_id);
      return { type: "done" };
    case "observe":
      await requireWorkable(message.tab_id);
      return observe(message.tab_id, message.include_frames, message.reuse);
    case "act":
      await requireWorkable(message.tab_id);
      return withAllowance(message.tab_id, message.allow || [],
        () => act(message.tab_id, message.action, message.settle));
    case "gate_tab":
      // "on" needs a handed-over tab; a closed tab's gate is simply forgotten.
      await setGate(message.tab_id, Boolean(message.on), {
        holdTimeoutMs: message.hold_timeout_seconds ? message.hold_timeout_seconds * 1000 : undefined,
        check: message.on ? () => requireHanded(message.tab_id) : null,
      });
      return { type: "done" };
    case "release_request":
      await releaseHold(message.hold_id, Boolean(message.allow));
      return { type: "done" };
    case "inspect":
      await requireWorkable(message.tab_id);
      return inspect(message.tab_id, message.elements);
    case "read_page":
      await requireWorkable(message.tab_id);
      return readPage(message.tab_id, message.expression, message.prep);
    case "run_update":
      await applyRunUpdate(message);
      return null;
    case "tree_update":
      await applyTreeUpdate(message);
      return null;
    case "confirm_request":
      await showConfirm(message);
      return null;
    case "confirm_closed":
      await closeConfirm(message.approval_id);
      return null;
    case "done":
    case "run_started":
      return null;
    default:
      throw new CommandError("unknown_command", `the extension does not know the command "${message.type}"`);
  }
}

// What the closed socket's backend would have answered or said: its held requests fail, its runs show as cut off.
const connection = new Connection(handleCommand, async () => {
  await failAllHolds("the backend disconnected");
  await markRunsCutOff("The connection to the backend was lost while this run went on: its end was not seen here.");
});
const emit = (event) => connection.send(event);

watchRequests(emit);
trackRequests();
trackChannels();
startGate(emit);

chrome.webNavigation.onCreatedNavigationTarget.addListener(async (details) => {
  if (await adoptIfOpenedByHanded(details.sourceTabId, details.tabId)) {
    await gateIfOpenedByGated(details.sourceTabId, details.tabId);
    emit({ type: "tab_event", id: newId(), tab_id: details.tabId, event: "created", url: details.url,
      opener_tab_id: details.sourceTabId });
  }
});

// Chrome's openerTabId also names the active tab when the user opens a tab by hand: a tab guarded (or blocked, for a
// gated opener) on that evidence alone keeps it only if it turns out the page opened it
// (webNavigation.onCreatedNavigationTarget adopts it, and puts the gate on).
const ADOPT_WAIT_MS = 3000;

function undoUnlessAdopted(tabId, undo) {
  setTimeout(async () => {
    await loadTabState();
    if (!isHanded(tabId)) await undo(tabId);
  }, ADOPT_WAIT_MS);
}

chrome.tabs.onCreated.addListener(async (tab) => {
  if (await guardIfOpenedByGuarded(tab)) undoUnlessAdopted(tab.id, dropGuard);
});

chrome.tabs.onCreated.addListener(async (tab) => {
  if (await blockIfOpenedByGated(tab)) undoUnlessAdopted(tab.id, unblockOpened);
});

chrome.tabs.onRemoved.addListener((tabId) => dropGate(tabId));

chrome.tabs.onRemoved.addListener(async (tabId) => {
  if (await forgetClosed(tabId)) emit({ type: "tab_event", id: newId(), tab_id: tabId, event: "closed" });
});

chrome.tabs.onUpdated.addListener(async (tabId, change, tab) => {
  await loadTabState();
  if (isHanded(tabId) && (change.url || change.status === "complete")) {
    emit({ type: "tab_event", id: newId(), tab_id: tabId, event: "updated", url: tab.url || "" });
  }
});

// cdp.js records the dialog before its listeners hear of the event.
onCdpEvent((tabId, method, params, sessionId) => {
  if (method === "Page.javascriptDialogOpening" && !sessionId && isHanded(tabId)) {
    emit({ type: "dialog_event", id: newId(), tab_id: tabId, dialog: currentDialog(tabId) });
  }
});

// Messages from the side panel and the options page.
async function handlePanelMessage(request) {
  switch (request.kind) {
    case "status":
      await connection.ensure();
      return { connection: await getConnectionStatus(), tabs: await listHanded() };
    case "start_run": {
      const tab = await chrome.tabs.get(request.tabId);
      if (isForbiddenUrl(tab.url)) return { error: "Branchwise cannot work on this page. Open a website first." };
      const refusal = siteRefusal(tab.url, await loadSiteLists());
      if (refusal) return { error: `Branchwise cannot work here: ${refusal}. Change the lists on the options page.` };
      const reply = await handOverFor(tab.id,
        () => connection.request({ type: "start_run", id: newId(), task: request.task, tab_id: tab.id }));
      return { run_id: reply.run_id };
    }
    case "list_tabs":
      return { tabs: await listHanded() };
    case "take_back":
      if (await runGoingOn()) return { error: "A run is going on: stop it before taking a tab back." };
      await takeBack(request.tabId);
      return { ok: true };
    case "stop_run":
      connection.send({ type: "stop_run", id: newId(), run_id: request.runId });
      return { ok: true };
    case "resume_run": {
      const reply = await connection.request({ type: "resume_run", id: newId(), run_id: request.runId });
      return { run_id: reply.run_id };
    }
    case "list_demos": {
      // What `branchwise explore` learnt about the site of the panel's tab.
      const tab = await chrome.tabs.get(request.tabId);
      const origin = demoOrigin(tab.url, await loadSiteLists());
      if (!origin) return { site: "", demos: [] };
      const reply = await connection.request({ type: "list_demos", id: newId(), url: origin });
      return { site: reply.site, demos: reply.demos };
    }
    case "confirm_answer":
      return answerConfirm(connection, request.approvalId, request.approved);
    default:
      return { error: `unknown request ${request.kind}` };
  }
}

chrome.runtime.onMessage.addListener((request, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id) return false;
  handlePanelMessage(request).then(sendResponse, (error) => sendResponse({ error: error.message || String(error) }));
  return true;
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && (changes[STORAGE.token] || changes[STORAGE.backendUrl])) connection.restart();
  const now = changes[STORAGE.connection]?.newValue;
  if (area === "session" && now?.state === "connected") dropConfirmsBefore(now.at);
});

// The worker may be stopped at any time; an alarm wakes it to reconnect if the backend came back meanwhile.
chrome.alarms.create("branchwise-reconnect", { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => connection.ensure({ automatic: true }));
chrome.runtime.onStartup.addListener(() => connection.ensure({ automatic: true }));
chrome.runtime.onInstalled.addListener(() => connection.ensure({ automatic: true }));
chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});

loadTabState();
connection.ensure({ automatic: true });
