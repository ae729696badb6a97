// Observe a handed-over tab: the accessibility tree of every frame (same- and cross-origin), plus URL, title, scroll,
// viewport and any open JavaScript dialog. Raw CDP nodes go to the backend untouched; it does all the processing.
import { childSessions, currentDialog, ensureAttached, framesOf, send } from "./cdp.js";
import { listHanded } from "./tabs.js";
import { captureWatched, reusable } from "./unchanged.js";

async function frameOwner(tabId, frameId, sessionId) {
  try {
    const { backendNodeId } = await send(tabId, "DOM.getFrameOwner", { frameId }, sessionId);
    return backendNodeId ?? null;
  } catch {
    return null;
  }
}

const SENSITIVE_SELECTOR = 'input[type="password"], input[autocomplete^="cc-" i], input[autocomplete*=" cc-" i]';
const MAX_SENSITIVE = 200;

// Backend node ids of password and payment-card inputs in one target (all its in-process frames).
async function sensitiveNodes(tabId, sessionId) {
  try {
    await send(tabId, "DOM.getDocument", { depth: 0 }, sessionId);
    const { searchId, resultCount } = await send(tabId, "DOM.performSearch", { query: SENSITIVE_SELECTOR }, sessionId);
    try {
      if (!resultCount) return [];
      const { nodeIds } = await send(tabId, "DOM.getSearchResults",
        { searchId, fromIndex: 0, toIndex: Math.min(resultCount, MAX_SENSITIVE) }, sessionId);
      const described = await Promise.all(nodeIds.map((nodeId) => send(tabId, "DOM.describeNode", { nodeId }, sessionId)));
      return described.map((d) => d.node.backendNodeId);
    } finally {
      send(tabId, "DOM.discardSearchResults", { searchId }, sessionId).catch(() => {});
    }
  } catch {
    return [];
  }
}

const MAX_CLICKABLE = 20000;
const MAX_BOUNDS = 100000;

// From one DOM snapshot of a target (all its in-process frames): the backend node ids of the elements the DOM says
// respond to clicks (a click listener, an onclick, a link), which the accessibility tree does not say (a nameless <div>
// with a click listener looks like any other box, and the backend would otherwise fold it away); and where the nodes
// of the target's top document are laid out, as flat [backendNodeId, top, height] triples in page pixels, so the
// backend can show the model the part of a long page around the viewport. Child documents have coordinates of their
// own and are left out: their nodes stand where their <iframe> does.
async function layoutNodes(tabId, sessionId) {
  try {
    const { documents } = await send(tabId, "DOMSnapshot.captureSnapshot", { computedStyles: [] }, sessionId);
    const clickable = [];
    for (const doc of documents) {
      for (const index of doc.nodes.isClickable?.index || []) clickable.push(doc.nodes.backendNodeId[index]);
    }
    const bounds = [];
    const top = documents[0];
    if (top?.layout) {
      const { nodeIndex, bounds: boxes } = top.layout;
      for (let i = 0; i < nodeIndex.length && bounds.length < MAX_BOUNDS * 3; i++) {
        const [, y, , height] = boxes[i];
        bounds.push(top.nodes.backendNodeId[nodeIndex[i]], Math.round(y), Math.round(height));
      }
    }
    return { clickable: clickable.slice(0, MAX_CLICKABLE), bounds };
  } catch {
    return { clickable: [], bounds: [] };
  }
}

async function axTree(tabId, frameId, sessionId) {
  try {
    const { nodes } = await send(tabId, "Accessibility.getFullAXTree", { frameId }, sessionId);
    return nodes;
  } catch {
    return null; // the frame lives in another process: its own session covers it
  }
}

// Every frame rendered by one CDP target (the tab itself, or one out-of-process iframe).
async function captureTarget(tabId, sessionId, targetKey, parentSessionId) {
  const all = await framesOf(tabId, sessionId);
  const rootId = all[0].id;
  const sensitive = sensitiveNodes(tabId, sessionId);
  const layout = layoutNodes(tabId, sessionId);
  const captured = await Promise.all(
    all.map(async (frame) => {
      const nodes = await axTree(tabId, frame.id, sessionId);
      if (!nodes) return null;
      const isTargetRoot = frame.id === rootId;
      // The element hosting an OOPIF's root frame lives in the parent target.
      const owner = frame.parentId
        ? await frameOwner(tabId, frame.id, isTargetRoot ? parentSessionId : sessionId)
        : null;
      return {
        frame_id: frame.id,
        url: frame.url + (frame.urlFragment || ""),
        parent_frame_id: frame.parentId || null,
        owner_node_id: owner,
        target: targetKey,
        nodes,
        sensitive_node_ids: [],
        clickable_node_ids: [],
        node_bounds: [],
      };
    }),
  );
  const frames = captured.filter(Boolean);
  if (frames.length) {
    frames[0].sensitive_node_ids = await sensitive;
    const { clickable, bounds } = await layout;
    frames[0].clickable_node_ids = clickable;
    // Page coordinates only mean something for the tab's own document; an out-of-process frame's are its own.
    if (targetKey === null && frames[0].frame_id === rootId) frames[0].node_bounds = bounds;
  }
  return frames;
}

function dedupeFrames(frames) {
  // A frame may be reported by both its parent's target and its own (while it navigates): keep the first.
  const seen = new Set();
  return frames.filter((f) => (seen.has(f.frame_id) ? false : (seen.add(f.frame_id), true)));
}

// Scroll position, and how the document loaded: the navigation timing entry carries the main document's HTTP status.
async function readPage(tabId) {
  const expression = `JSON.stringify({x: scrollX, y: scrollY, viewport_width: innerWidth, viewport_height: innerHeight,
    page_width: document.documentElement.scrollWidth, page_height: document.documentElement.scrollHeight,
    status: performance.getEntriesByType("navigation")[0]?.responseStatus || null})`;
  // The debugger cannot read Chromium's own error pages; webNavigation knows the top frame failed to load.
  const frame = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
  const errorPage = Boolean(frame?.errorOccurred);
  try {
    const { result } = await send(tabId, "Runtime.evaluate", { expression, returnByValue: true });
    const { status, ...scroll } = JSON.parse(result.value);
    return { scroll, status, errorPage };
  } catch {
    return { scroll: {}, status: null, errorPage };
  }
}

async function readHistory(tabId) {
  try {
    const { currentIndex, entries } = await send(tabId, "Page.getNavigationHistory", {});
    // Tabs Branchwise opens start at about:blank (handed over before they load): going back there is no move.
    const real = (e) => e.url !== "about:blank";
    return {
      can_go_back: entries.slice(0, currentIndex).some(real),
      can_go_forward: entries.slice(currentIndex + 1).some(real),
    };
  } catch {
    // Unknown (null): the planner forbids nothing rather than a move the tab may allow.
    return { can_go_back: null, can_go_forward: null };
  }
}

// The tab's frames: its own target's, and with `includeFrames` every out-of-process iframe's too.
async function captureFrames(tabId, includeFrames) {
  const captures = [captureTarget(tabId, undefined, null, undefined)];
  if (includeFrames) {
    for (const [key, entry] of childSessions(tabId)) {
      captures.push(captureTarget(tabId, entry.sessionId, key, entry.parentSessionId).catch(() => []));
    }
  }
  const frames = dedupeFrames((await Promise.all(captures)).flat());
  return includeFrames ? frames : frames.filter((f) => !f.parent_frame_id);
}

// `reuse`: the id of the capture the backend holds for this tab; if the tab shows exactly what it captured, the frames
// are not captured again nor sent ("reused": the backend puts its copy back).
export async function observe(tabId, includeFrames, reuse) {
  const started = performance.now();
  await ensureAttached(tabId);
  const tab = await chrome.tabs.get(tabId);
  const dialog = currentDialog(tabId);
  const history = readHistory(tabId);
  let frames = [];
  let captureId = "";
  let reused = false;
  let page = { scroll: {}, status: null, errorPage: false };
  // While a JS dialog is open the page's renderer is blocked: report the dialog instead of hanging on the tree.
  if (!dialog) {
    const capture = async () => {
      if (await reusable(tabId, reuse, includeFrames)) {
        reused = true;
        return { frames: [], id: reuse };
      }
      return captureWatched(tabId, includeFrames, () => captureFrames(tabId, includeFrames));
    };
    let captured;
    [captured, page] = await Promise.all([capture(), readPage(tabId)]);
    ({ frames, id: captureId } = captured);
  }
  return {
    type: "observation",
    tab_id: tabId,
    url: tab.url || "",
    title: tab.title || "",
    tabs: await listHanded(),
    scroll: page.scroll,
    navigation: { ...(await history), http_status: page.status, error_page: page.errorPage },
    dialog,
    frames,
    capture_id: captureId,
    reused,
    capture_ms: performance.now() - started,
  };
}
