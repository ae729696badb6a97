// The tabs the user handed over to Branchwise. No other tab is ever read or touched: every command checks here first.
// Membership is the tab's record (tabstate.js, `handed`).
import { CommandError } from "./protocol.js";
import { detach, forgetTab } from "./cdp.js";
import { STORAGE } from "./constants.js";
import { dropGateRules, setGate } from "./gate.js";
import { dropGuard, isGuarded, setGuard } from "./guard.js";
import { isHanded, loadTabState, update } from "./tabstate.js";

const GROUP_TITLE = "Branchwise";

// Marks the tab as no longer handed over; whether it was.
async function letGo(tabId) {
  await loadTabState();
  const was = isHanded(tabId);
  await update(tabId, { type: "let_go" });
  return was;
}

// Pages the agent must never read or drive, even inside a handed-over tab.
export function isForbiddenUrl(url) {
  return /^(chrome|chrome-extension|devtools|chrome-untrusted|edge|about:(?!blank))/i.test(url || "");
}

async function addToGroup(tabId) {
  try {
    const { [STORAGE.groupId]: groupId } = await chrome.storage.session.get(STORAGE.groupId);
    let group = null;
    if (groupId !== undefined) {
      group = await chrome.tabGroups.get(groupId).catch(() => null);
    }
    const newGroupId = await chrome.tabs.group(group ? { tabIds: [tabId], groupId: group.id } : { tabIds: [tabId] });
    if (!group) {
      await chrome.tabGroups.update(newGroupId, { title: GROUP_TITLE, color: "blue" });
      await chrome.storage.session.set({ [STORAGE.groupId]: newGroupId });
    }
  } catch (error) {
    // Tab groups are a visual aid (not available in every window type); the handed-over set is what guards access.
    console.warn(`could not group tab ${tabId}:`, error?.message || error);
  }
}

export async function handOver(tabId) {
  await loadTabState();
  await update(tabId, { type: "hand_over" });
  await addToGroup(tabId);
}

// The user takes the tab back (the panel's "Take back"): no command reads or drives it any more, and Branchwise lets go
// of all it held there: its gate (a held request fails, as when the gate comes off at a run's end) and block rules, its
// guard's rules, the debugger (Chrome's "is debugging this browser" bar goes) and the tab group. The gate comes off
// before the debugger goes, or not at all: a request still held when the debugger detaches goes out (docs/platform.md).
export async function takeBack(tabId) {
  await requireMember(tabId);
  await letGo(tabId);
  try {
    await setGate(tabId, false);
  } catch (error) {
    await update(tabId, { type: "hand_over" }).catch(() => {}); // still handed over: the user can try again
    throw error;
  }
  try {
    await dropGateRules(tabId);
    await setGuard(tabId, false, { debuggee: false });
  } finally {
    await detach(tabId);
    await chrome.tabs.ungroup(tabId).catch(() => {});
  }
}

// Hands the tab over for a run that `start` asks the backend for (the backend reads the tab as soon as it accepts),
// and takes it back if the backend refuses or cannot be asked: a run that never started keeps no tab.
export async function handOverFor(tabId, start) {
  await loadTabState();
  const already = isHanded(tabId);
  await handOver(tabId);
  try {
    return await start();
  } catch (error) {
    if (!already) await takeBack(tabId).catch((e) => console.warn(`tab ${tabId} not taken back: ${e.message}`));
    throw error;
  }
}

async function requireMember(tabId) {
  await loadTabState();
  if (!isHanded(tabId)) {
    throw new CommandError("tab_not_handed_over", `tab ${tabId} is not handed over to Branchwise`);
  }
}

// A tab that is gone is reported as closed, handed over or not: its record goes when it closes, and "not handed over"
// would send the user looking for the wrong cause.
export async function requireHanded(tabId) {
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    await letGo(tabId);
    throw new CommandError("tab_closed", `tab ${tabId} was closed`);
  }
  await requireMember(tabId);
  if (isForbiddenUrl(tab.url || tab.pendingUrl)) {
    throw new CommandError("tab_not_handed_over", `Branchwise does not read or act on ${tab.url}`);
  }
  return tab;
}

function tabInfo(tab, index) {
  return { tab_id: tab.id, index, title: tab.title || "", url: tab.url || tab.pendingUrl || "", active: tab.active };
}

// Handed-over tabs in browser order; `index` is the agent's tab number (tab_focus [index]).
export async function listHanded() {
  await loadTabState();
  const all = await chrome.tabs.query({});
  const mine = all.filter((t) => isHanded(t.id)).sort((a, b) => a.windowId - b.windowId || a.index - b.index);
  return mine.map(tabInfo);
}

export async function waitForLoad(tabId, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab) throw new CommandError("tab_closed", `tab ${tabId} was closed`);
    if (tab.status === "complete") return tab;
    await new Promise((r) => setTimeout(r, 50));
  }
  return chrome.tabs.get(tabId);
}

export async function openTab(url, active, guarded = false) {
  if (!/^https?:|^about:blank$/i.test(url)) {
    throw new CommandError("invalid_message", `Branchwise opens only http(s) pages, not ${url}`);
  }
  // Hand the tab over (and guard it) before it loads anything, so its very first requests are seen (and held to GETs).
  const tab = await chrome.tabs.create({ url: "about:blank", active });
  await handOver(tab.id);
  if (guarded) {
    try {
      await setGuard(tab.id, true);
    } catch (error) {
      await forgetClosed(tab.id);
      await chrome.tabs.remove(tab.id).catch(() => {});
      throw error;
    }
  }
  await chrome.tabs.update(tab.id, { url });
  await new Promise((r) => setTimeout(r, 50));
  const loadedTab = await waitForLoad(tab.id);
  const list = await listHanded();
  return list.find((t) => t.tab_id === loadedTab.id) || tabInfo(loadedTab, list.length);
}

export async function closeTab(tabId) {
  // Only membership: closing reads nothing, so a handed-over tab that went to a browser page can still be closed.
  await requireMember(tabId);
  await letGo(tabId);
  forgetTab(tabId);
  const gone = await chrome.tabs.remove(tabId).then(() => false, () => true);
  await dropGuard(tabId);
  if (gone) throw new CommandError("tab_closed", `tab ${tabId} was closed`);
}

export async function guardTab(tabId, guarded) {
  await requireHanded(tabId);
  await setGuard(tabId, guarded);
}

export async function activateTab(tabId) {
  const tab = await requireHanded(tabId);
  await chrome.tabs.update(tabId, { active: true });
  await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
}

// A tab the page in a handed-over tab opened itself (target=_blank, window.open) belongs to the agent too. Chrome's
// openerTabId is no evidence: a tab the user opens while a handed-over tab is active gets it as well.
// A tab opened by a guarded tab is guarded too (as early as the event allows: see protocol/README.md).
export async function adoptIfOpenedByHanded(sourceTabId, tabId) {
  await loadTabState();
  if (!isHanded(sourceTabId)) return false;
  if (await isGuarded(sourceTabId)) await setGuard(tabId, true).catch((e) => console.warn(e.message));
  await handOver(tabId);
  return true;
}

export async function forgetClosed(tabId) {
  const was = await letGo(tabId);
  forgetTab(tabId);
  await dropGuard(tabId);
  return was;
}
