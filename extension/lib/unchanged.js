// Reusing a capture of a page that has not changed. Capturing is the costliest thing observe does (the accessibility
// tree of a 6,500-element page takes ~0.9 s), and search observes the same page again and again. A watcher in a world
// of our own in every captured frame (the page neither sees nor disturbs it) counts what can change the tree: any DOM
// mutation (in open shadow roots too, style included), input, change, focus, a box's scroll, resize, toggle and load
// events; its stamp adds what changes without either (a script setting a field's value, the page growing or scrolling),
// hashed, and names the document (the same page loaded again is a change: its node ids are new). A capture is reused
// only when it was stable while it was taken, the frames are the same and every frame's stamp is unchanged; anything
// unreadable counts as a change. Not seen: changes inside closed shadow roots that touch nothing outside.
import { childSessions, framesOf } from "./cdp.js";
import { World } from "./worlds.js";

const STAMP = `(() => {
  if (!globalThis.branchwiseWatch) {
    // A new document gets a new watcher, and a new id: the same page loaded again is a change.
    const state = { document: crypto.randomUUID(), changes: 0, roots: new WeakSet() };
    const bump = () => { state.changes += 1; };
    const observer = new MutationObserver((records) => {
      bump();
      for (const record of records) for (const node of record.addedNodes) watchShadows(node);
    });
    const options = { subtree: true, childList: true, attributes: true, characterData: true };
    const watchShadows = (root) => {
      if (!root.querySelectorAll) return;
      for (const element of [root, ...root.querySelectorAll("*")]) {
        const shadow = element.shadowRoot;
        if (shadow && !state.roots.has(shadow)) {
          state.roots.add(shadow);
          observer.observe(shadow, options);
          watchShadows(shadow);
        }
      }
    };
    observer.observe(document, options);
    watchShadows(document);
    for (const type of ["input", "change", "focusin", "focusout", "resize", "toggle", "load", "error"]) {
      addEventListener(type, bump, true);
    }
    // The window's own scroll position is in the stamp, read when it happens; its scroll event comes a frame later
    // and, counted, would discard a capture taken in between for a scroll it already shows. A box's scroll is not.
    addEventListener("scroll", (event) => { if (event.target !== document) bump(); }, true);
    globalThis.branchwiseWatch = state;
  }
  let hash = 2166136261;
  const mix = (text) => {
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
    hash = Math.imul(hash ^ 0xff, 16777619);
  };
  for (const field of document.querySelectorAll("input, textarea, select")) {
    mix(field.type === "checkbox" || field.type === "radio" ? String(field.checked) : field.value);
  }
  const root = document.documentElement;
  return [globalThis.branchwiseWatch.document, globalThis.branchwiseWatch.changes, hash >>> 0, document.getElementsByTagName("*").length,
    root ? root.scrollWidth : 0, root ? root.scrollHeight : 0, innerWidth, innerHeight, scrollX, scrollY,
    document.activeElement ? document.activeElement.tagName : ""].join(",");
})()`;

const world = new World("branchwise-unchanged");
const captures = new Map(); // tabId -> { id, includeFrames, frames, stamps }

async function stampOf(tabId, frame) {
  // An out-of-process frame's target may be gone (the page navigated): that frame cannot be read, a change.
  const sessionId = frame.target ? childSessions(tabId).get(frame.target)?.sessionId : undefined;
  if (frame.target && !sessionId) return null;
  const stamp = await world.evaluate(tabId, frame.frame_id, STAMP,
    { sessionId, key: frameKey(frame.target, frame.frame_id) });
  return typeof stamp === "string" ? stamp : null;
}

const frameKey = (target, frameId) => `${target || ""}|${frameId}`;

// What the tab is made of: its main target's frames with the loader of the document each shows, and its
// out-of-process targets, as one comparable string.
async function layoutOf(tabId, includeFrames) {
  try {
    const children = includeFrames ? [...childSessions(tabId).keys()].sort() : [];
    const frames = (await framesOf(tabId)).map((frame) => `${frame.id}:${frame.loaderId}`);
    return `${frames.sort().join(",")};${children.join(",")}`;
  } catch {
    return null;
  }
}

// Stamps of every frame of the tab that has a document we can reach, by frameKey; installs the watchers.
async function stampAll(tabId, includeFrames) {
  const targets = [[null, undefined]];
  if (includeFrames) for (const [key, entry] of childSessions(tabId)) targets.push([key, entry.sessionId]);
  const stamps = new Map();
  await Promise.all(targets.map(async ([target, sessionId]) => {
    const ids = (await framesOf(tabId, sessionId).catch(() => [])).map((frame) => frame.id);
    await Promise.all(ids.map(async (frameId) => {
      const stamp = await stampOf(tabId, { frame_id: frameId, target });
      if (stamp !== null) stamps.set(frameKey(target, frameId), stamp);
    }));
  }));
  return stamps;
}

// Every captured frame's stamp now, or null when any cannot be read.
async function stampsOf(tabId, frames) {
  const stamps = await Promise.all(frames.map((frame) => stampOf(tabId, frame)));
  return stamps.includes(null) ? null : stamps;
}

function sameStamps(a, b) {
  return a !== null && b !== null && a.length === b.length && a.every((stamp, i) => stamp === b[i]);
}

// The frames of the capture `id` if the tab still shows exactly what it captured; else null.
export async function reusable(tabId, id, includeFrames) {
  const capture = captures.get(tabId);
  if (!id || !capture || capture.id !== id || capture.includeFrames !== includeFrames) return null;
  const [layout, stamps] = await Promise.all([layoutOf(tabId, includeFrames), stampsOf(tabId, capture.frames)]);
  if (layout === null || layout !== capture.layout || !sameStamps(stamps, capture.stamps)) return null;
  return capture.frames;
}

// Runs `capture` (which resolves to the frames it captured) between two readings of every frame's stamp and keeps it
// for reuse if nothing changed meanwhile: the watchers are in place before the capture starts, so a change made while
// it ran is seen. Returns the frames and the capture's id ("" when it cannot be reused).
export async function captureWatched(tabId, includeFrames, capture) {
  captures.delete(tabId);
  const [layout, before] = await Promise.all([layoutOf(tabId, includeFrames), stampAll(tabId, includeFrames)]);
  const frames = await capture();
  if (!frames.length || layout === null) return { frames, id: "" };
  const [layoutAfter, after] = await Promise.all([layoutOf(tabId, includeFrames), stampsOf(tabId, frames)]);
  const stable = after !== null && layoutAfter === layout
    && frames.every((frame, i) => before.get(frameKey(frame.target, frame.frame_id)) === after[i]);
  if (!stable) return { frames, id: "" };
  const id = crypto.randomUUID();
  captures.set(tabId, { id, includeFrames, frames, stamps: after, layout });
  return { frames, id };
}

export function forgetCaptures(tabId) {
  captures.delete(tabId);
  world.forget(tabId);
}

chrome.tabs.onRemoved.addListener(forgetCaptures);
