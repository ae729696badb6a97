// What a tab's current document has open that the network gate cannot hold: the gate holds HTTP requests (CDP
// Fetch), not the messages of a WebSocket or WebTransport session, nor what a page hands its service worker. The
// classifier lets a click whose effect only the page's script knows run under the gate (which asks about whatever
// mutating request it really sends) only where no such channel is open; otherwise it asks before the click.
const opened = new Map(); // tabId -> Set of channel names opened since the tab's document committed
// Tabs whose document committed while this worker ran: of any other tab (a worker restarted mid-run, a page loaded
// before the extension started) nobody saw what it opened, so it counts as having something open (fail safe).
const watched = new Set();
const UNSEEN = "connections opened before the extension could see them";

const CHANNELS = { websocket: "WebSocket", webtransport: "WebTransport" };

export function trackChannels() {
  chrome.webRequest.onBeforeRequest.addListener((details) => {
    const channel = CHANNELS[details.type];
    if (details.tabId < 0 || !channel) return;
    if (!opened.has(details.tabId)) opened.set(details.tabId, new Set());
    opened.get(details.tabId).add(channel);
  }, { urls: ["<all_urls>"] });
  // A new document starts with nothing open: the old one's connections closed with it.
  chrome.webNavigation.onCommitted.addListener((details) => {
    if (details.frameId !== 0) return;
    opened.delete(details.tabId);
    watched.add(details.tabId);
  });
  chrome.tabs.onRemoved.addListener((tabId) => {
    opened.delete(tabId);
    watched.delete(tabId);
  });
}

// The channels the tab's document opened (a service worker controlling the page is read with the element's facts).
export function openChannels(tabId) {
  if (!watched.has(tabId)) return [UNSEEN];
  return [...(opened.get(tabId) || [])];
}
