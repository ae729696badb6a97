// Constants more than one part of the extension uses. No imports and no Chrome API, so pure modules (and Node tests)
// can import it. The backend keeps its own copies (safety/): what goes on the wire is in protocol.js.

// The HTTP methods that only read. Every other method, in any spelling (POST, DELETE, WebDAV's MOVE or PROPPATCH, a
// custom one), may change something on a server: the guard blocks it and the gate holds it (fail closed).
export const SAFE_METHODS = Object.freeze(["GET", "HEAD", "OPTIONS"]);

export function isMutating(method) {
  return !SAFE_METHODS.includes(String(method || "").toUpperCase());
}

// Every declarativeNetRequest resource type. A rule condition without `resourceTypes` matches every type except
// main_frame, so a rule meant for all requests names them all (top-level form posts included).
export const ALL_RESOURCE_TYPES = Object.freeze([
  "main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object", "xmlhttprequest", "ping",
  "csp_report", "media", "websocket", "webtransport", "webbundle", "other",
]);

// Session rule ids of a tab (rules.js): the guard's block rule is the tab id itself; its other rules flip one bit of it.
export const SANDBOX_RULE_BIT = 0x40000000; // the guard's sandbox rule
export const OPENED_RULE_BIT = 0x20000000; // the block rule of a tab a gated tab opened (gate.js)
export const CHANNEL_RULE_BIT = 0x10000000; // new WebSocket/WebTransport connections refused during an act (gate.js)

// How long a held request waits for the backend's answer unless `gate_tab {hold_timeout_seconds}` says otherwise.
export const DEFAULT_HOLD_TIMEOUT_MS = 150000;

// chrome.storage keys. Session storage lives as long as the browser and outlives a restarted service worker.
export const STORAGE = Object.freeze({
  tabState: "tabState", // session: the per-tab safety state (tabstate.js)
  groupId: "groupId", // session: the "Branchwise" tab group
  connection: "connection", // session: the backend connection's status (status.js)
  replaced: "replaced", // session: another connection took the backend's place (connection.js)
  runs: "runs", // session: the last runs, for the side panel (status.js)
  confirms: "confirms", // session: open confirmation cards (confirm.js)
  backendUrl: "backendUrl", // local: pairing settings (settings.js)
  token: "token", // local
  allowSites: "allowSites", // local: the site lists (sites.js)
  blockSites: "blockSites", // local
});
