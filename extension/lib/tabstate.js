// The extension's per-tab safety state, in one place: one record per tab Branchwise keeps anything about. Every change
// is an event that `transition` (pure: a record and an event in, the next record out) turns into the tab's next
// record, applied by `update`, the only writer of the records. The part that must outlive a restarted service worker
// (MV3 workers are stopped often) is written by one function, `persist`, under one chrome.storage.session key, and
// read once when the worker starts (`loadTabState`); the records in memory mirror it, so synchronous listeners
// (webRequest, debugger events, tab events) decide without a round trip.
//
// A record:
//   handed     the user (or a handed-over tab's page) handed the tab over: commands may read and drive it (tabs.js)
//   guarded    the guard's session rules are on the tab (guard.js); the rules themselves live in the browser
//   gate       null, or {holdTimeoutMs} while the network gate is on (gate.js)
//   holds      Map holdId -> {requestId, sessionId, method, url}: the tab's mutating requests held for an answer
//   allowance  null, or {act, entries: [{method, url, used}]}: what the user approved with the act command now running
//   debugger   {attached: the attach promise, sessions: Map targetKey -> {sessionId, parentSessionId, frameId} of
//              out-of-process iframes, dialog: the JavaScript dialog the tab shows} (cdp.js)
// Persisted: handed, guarded, gate and holds (a restarted worker fails the holds it finds: nobody can answer them any
// more, gate.js). Not persisted: the allowance lives only while its act command runs, and no act outlives the worker
// running it; the debugger attachment lives in the browser and outlives the worker (cdp.js reuses it), and the rest
// of what the worker knows of it comes from the live session's events.
//
// Everything down to the store is pure (no Chrome API), so it can be tested on its own (tests/test_tabstate_js.py).
import { STORAGE } from "./constants.js";

const NO_DEBUGGER = Object.freeze({ attached: null, sessions: new Map(), dialog: null });

// The record of a tab Branchwise knows nothing about. Never changed: transitions return new records (and new Maps).
export const EMPTY = Object.freeze({
  handed: false, guarded: false, gate: null, holds: new Map(), allowance: null, debugger: NO_DEBUGGER,
});

// `record` with `changes`; the same record when nothing changes, so callers can tell a no-op.
function patch(record, changes) {
  return Object.keys(changes).some((key) => changes[key] !== record[key]) ? { ...record, ...changes } : record;
}

function patchDebugger(record, changes) {
  const next = patch(record.debugger, changes);
  return next === record.debugger ? record : { ...record, debugger: next };
}

function without(map, keep) {
  const next = new Map([...map].filter(([key, value]) => keep(key, value)));
  return next.size === map.size ? map : next;
}

// The one transition function: the tab's next record after `event`.
export function transition(record, event) {
  switch (event.type) {
    case "hand_over":
      return patch(record, { handed: true });
    case "let_go": // released, closed or gone
      return patch(record, { handed: false });
    case "guard":
      return patch(record, { guarded: Boolean(event.on) });
    case "gate": {
      if (!event.on) return patch(record, { gate: null });
      // `openedBy`: the tab the backend gated whose page (or whose opened tabs' pages) opened this one (gate.js
      // gateIfOpenedByGated); a gate the backend asked for itself names none.
      const openedBy = event.openedBy ?? null;
      return record.gate?.holdTimeoutMs === event.holdTimeoutMs && (record.gate?.openedBy ?? null) === openedBy
        ? record
        : { ...record, gate: { holdTimeoutMs: event.holdTimeoutMs, ...(openedBy === null ? {} : { openedBy }) } };
    }
    case "hold":
      return { ...record, holds: new Map(record.holds).set(event.holdId, event.hold) };
    case "unhold":
      return patch(record, { holds: without(record.holds, (holdId) => holdId !== event.holdId) });
    case "drop_holds":
      return patch(record, { holds: without(record.holds, () => false) });
    case "allow": // an act command starts: its allowance replaces any other
      return { ...record, allowance: { act: event.act, entries: event.entries } };
    case "allowance_used": {
      const allowance = record.allowance;
      if (allowance?.act !== event.act || allowance.entries[event.index]?.used !== false) return record;
      const entries = allowance.entries.map((e, i) => (i === event.index ? { ...e, used: true } : e));
      return { ...record, allowance: { ...allowance, entries } };
    }
    case "act_done": // only the act's own allowance ends with it
      return record.allowance?.act === event.act ? patch(record, { allowance: null }) : record;
    case "attaching":
      return patchDebugger(record, { attached: event.attached });
    case "attach_failed":
      return record.debugger.attached === event.attached ? patchDebugger(record, { attached: null }) : record;
    case "child_session":
      return patchDebugger(record, { sessions: new Map(record.debugger.sessions).set(event.key, event.session) });
    case "child_gone":
      return patchDebugger(record, {
        sessions: without(record.debugger.sessions, (key, entry) => entry.sessionId !== event.sessionId),
      });
    case "dialog":
      return patchDebugger(record, { dialog: event.dialog || null });
    case "debugger_gone":
      return patch(record, { debugger: NO_DEBUGGER });
    default:
      throw new Error(`unknown tab state event "${event.type}"`);
  }
}

function persistedChanged(a, b) {
  return a.handed !== b.handed || a.guarded !== b.guarded || a.gate !== b.gate || a.holds !== b.holds;
}

function isEmpty(record) {
  const { attached, sessions, dialog } = record.debugger;
  return !record.handed && !record.guarded && !record.gate && !record.holds.size && !record.allowance &&
    !attached && !sessions.size && !dialog;
}

// The stored form: [[tabId, {handed, guarded, gate, holds: [[holdId, hold]]}]] of the tabs with anything to keep.
export function serialize(records) {
  return [...records]
    .filter(([, r]) => r.handed || r.guarded || r.gate || r.holds.size)
    .map(([tabId, r]) => [tabId, { handed: r.handed, guarded: r.guarded, gate: r.gate, holds: [...r.holds] }]);
}

export function deserialize(saved) {
  return new Map((saved || []).map(([tabId, s]) => [tabId, {
    ...EMPTY, handed: Boolean(s.handed), guarded: Boolean(s.guarded), gate: s.gate || null, holds: new Map(s.holds),
  }]));
}

// The store: the records of this worker, and their one persistence path.
const records = new Map();
let loading = null;
let loaded = false;
let writing = Promise.resolve();
let pending = null;

// Reads the persisted state once per worker; the records of the volatile parts that events created meanwhile stay.
export function loadTabState() {
  if (!loading) {
    loading = chrome.storage.session.get(STORAGE.tabState).then(({ [STORAGE.tabState]: saved }) => {
      for (const [tabId, stored] of deserialize(saved)) {
        const now = tabState(tabId);
        records.set(tabId, { ...stored, allowance: now.allowance, debugger: now.debugger });
      }
      loaded = true;
    });
  }
  return loading;
}

export function isLoaded() {
  return loaded;
}

export function tabState(tabId) {
  return records.get(tabId) || EMPTY;
}

export function isHanded(tabId) {
  return tabState(tabId).handed;
}

export function tabStates() {
  return [...records];
}

// The hold `holdId` with its tab's id, or null.
export function findHold(holdId) {
  for (const [tabId, record] of records) {
    const hold = record.holds.get(holdId);
    if (hold) return { tabId, ...hold };
  }
  return null;
}

// The one writer of the stored state. A write takes the records as they are when it starts, so changes made while one
// is under way are written by the next; writes go one after the other, so the last one holds the latest state.
function persist() {
  if (!pending) {
    pending = writing.then(() => {
      pending = null;
      return chrome.storage.session.set({ [STORAGE.tabState]: serialize(records) });
    });
    writing = pending.catch(() => {});
  }
  return pending;
}

// Applies `event` to the tab's record at once (synchronously: listeners see it on their next read) and returns a
// promise that settles once the change is stored (at once when nothing persisted changed). A persisted part may only
// change once the stored state is loaded, or loading it would undo the change.
export function update(tabId, event) {
  const before = tabState(tabId);
  const after = transition(before, event);
  if (after === before) return Promise.resolve();
  const stored = persistedChanged(before, after);
  if (stored && !loaded) throw new Error(`tab ${tabId}: "${event.type}" before the tab state was loaded`);
  if (isEmpty(after)) records.delete(tabId);
  else records.set(tabId, after);
  return stored ? persist() : Promise.resolve();
}
