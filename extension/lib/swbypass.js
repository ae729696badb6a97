// Service workers out of a tab the extension watches: a guarded tab (guard.js) or a gated one (gate.js). A page's
// request that its site's service worker answers is sent on by the worker, in the worker's own target: no tab id for
// the guard's rules, no tab session for the gate's Fetch. Measured: a gated page's POST forwarded by a pass-through
// worker reached the server unasked. With the bypass, the tab's requests go to the network from the tab itself, where
// both layers see them. The setting lives in the browser with the tab's debugger attachment (it outlives a restarted
// extension worker) and needs the Network domain (no bodies are kept).
import { ensureAttached, send } from "./cdp.js";
import { tabState } from "./tabstate.js";

export function wantsBypass(record) {
  return Boolean(record.guarded || record.gate);
}

// Sets the tab's bypass to what its guard and gate want now; call after either changes.
export async function syncServiceWorkerBypass(tabId) {
  await ensureAttached(tabId);
  if (wantsBypass(tabState(tabId))) {
    await send(tabId, "Network.enable", { maxTotalBufferSize: 0, maxResourceBufferSize: 0, maxPostDataSize: 0 });
    await send(tabId, "Network.setBypassServiceWorker", { bypass: true });
  } else {
    await send(tabId, "Network.setBypassServiceWorker", { bypass: false });
    await send(tabId, "Network.disable");
  }
}
