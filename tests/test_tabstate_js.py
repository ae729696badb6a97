"""The extension's per-tab safety state (extension/lib/tabstate.js), run in Node: one record per tab, changed only by
the transition function, and one persistence path (one chrome.storage.session key) that a restarted worker reads back.
The store runs against a stand-in for chrome.storage.session that keeps what it is given as JSON, as Chrome does."""

from __future__ import annotations

from typing import Any

from extension_js import run_js

# argv: the module's file URL, the scenario's name. Each import with another query string is a fresh module instance: a
# new service worker sharing the browser's session storage. Prints the scenario's result as JSON.
RUNNER = r"""
const moduleUrl = process.argv[1];
const scenario = process.argv[2];

const stored = {};
const writes = [];
let reads = 0;
globalThis.chrome = { storage: { session: {
  async get(key) {
    reads += 1;
    return key in stored ? { [key]: JSON.parse(JSON.stringify(stored[key])) } : {}; },
  async set(items) {
    writes.push(Object.keys(items));
    for (const [key, value] of Object.entries(items)) stored[key] = JSON.parse(JSON.stringify(value));
  },
} } };
const worker = (n) => import(`${moduleUrl}?worker=${n}`);
const view = (r) => ({ handed: r.handed, guarded: r.guarded, gate: r.gate, holds: [...r.holds],
  allowance: r.allowance, attached: r.debugger.attached, sessions: [...r.debugger.sessions],
  dialog: r.debugger.dialog });

const scenarios = {
  async pure() {
    const m = await worker(1);
    const step = (record, ...events) => events.reduce((r, e) => m.transition(r, e), record);
    const handed = step(m.EMPTY, { type: "hand_over" });
    const gated = step(handed, { type: "gate", on: true, holdTimeoutMs: 5000 });
    const held = step(gated, { type: "hold", holdId: "h1", hold: { requestId: "r1", method: "POST", url: "u" } },
      { type: "hold", holdId: "h2", hold: { requestId: "r2", method: "PUT", url: "v" } });
    const allowed = step(handed, { type: "allow", act: "a1", entries: [{ method: "POST", url: "u", used: false }] });
    const used = step(allowed, { type: "allowance_used", act: "a1", index: 0 });
    const attaching = step(m.EMPTY, { type: "attaching", attached: "p1" });
    const framed = step(attaching, { type: "child_session", key: "f1", session: { sessionId: "s1", frameId: "f1" } },
      { type: "child_session", key: "f2", session: { sessionId: "s2", frameId: "f2" } },
      { type: "dialog", dialog: { dialog_type: "alert", message: "hi" } });
    let unknown = "";
    try { m.transition(m.EMPTY, { type: "nonsense" }); } catch (e) { unknown = e.message; }
    return {
      empty: view(m.EMPTY),
      handed: view(handed),
      same: {
        hand_over_again: m.transition(handed, { type: "hand_over" }) === handed,
        same_gate: m.transition(gated, { type: "gate", on: true, holdTimeoutMs: 5000 }) === gated,
        gate_off_when_off: m.transition(handed, { type: "gate", on: false }) === handed,
        unhold_unknown: m.transition(held, { type: "unhold", holdId: "nope" }) === held,
        drop_no_holds: m.transition(handed, { type: "drop_holds" }) === handed,
        use_twice: m.transition(used, { type: "allowance_used", act: "a1", index: 0 }) === used,
        other_act_uses: m.transition(allowed, { type: "allowance_used", act: "a0", index: 0 }) === allowed,
        other_act_done: m.transition(allowed, { type: "act_done", act: "a0" }) === allowed,
        stale_attach_failed: m.transition(attaching, { type: "attach_failed", attached: "p0" }) === attaching,
      },
      input_untouched: view(handed).gate === null && allowed.allowance.entries[0].used === false,
      gate_timeout: step(gated, { type: "gate", on: true, holdTimeoutMs: 9000 }).gate,
      gate_opened_by: step(gated, { type: "gate", on: true, holdTimeoutMs: 5000, openedBy: 4 }).gate,
      gate_by_backend: step(step(gated, { type: "gate", on: true, holdTimeoutMs: 5000, openedBy: 4 }),
        { type: "gate", on: true, holdTimeoutMs: 5000 }).gate,
      gate_off: view(step(held, { type: "gate", on: false })),
      unhold: [...step(held, { type: "unhold", holdId: "h1" }).holds.keys()],
      dropped: [...step(held, { type: "drop_holds" }).holds.keys()],
      used: used.allowance,
      replaced: step(used, { type: "allow", act: "a2", entries: [] }).allowance,
      done: step(used, { type: "act_done", act: "a1" }).allowance,
      framed: view(framed),
      child_gone: [...step(framed, { type: "child_gone", sessionId: "s1" }).debugger.sessions.keys()],
      dialog_closed: step(framed, { type: "dialog", dialog: null }).debugger.dialog,
      attach_failed: step(attaching, { type: "attach_failed", attached: "p1" }).debugger.attached,
      debugger_gone: view(step(framed, { type: "guard", on: true }, { type: "debugger_gone" })),
      unknown,
    };
  },

  async store() {
    const m = await worker(1);
    const before = {};
    // The volatile parts may change before the stored state is read; a persisted part may not.
    m.update(7, { type: "attaching", attached: "p" });
    try { m.update(7, { type: "hand_over" }); } catch (e) { before.refused = e.message; }
    before.loaded = m.isLoaded();
    stored.tabState = [[7, { handed: true, guarded: false, gate: null, holds: [] }]];
    await m.loadTabState();
    const afterLoad = view(m.tabState(7));
    const writesBefore = writes.length;
    // Changes in one turn are written together, under the one key.
    const a = m.update(3, { type: "hand_over" });
    const b = m.update(3, { type: "guard", on: true });
    const sync = { handed: m.isHanded(3), guarded: m.tabState(3).guarded };
    await Promise.all([a, b]);
    const batched = writes.slice(writesBefore);
    // Volatile changes and no-ops write nothing.
    const n = writes.length;
    await m.update(3, { type: "allow", act: "a", entries: [] });
    await m.update(3, { type: "dialog", dialog: { dialog_type: "alert" } });
    await m.update(3, { type: "hand_over" });
    const volatileWrites = writes.length - n;
    await m.update(3, { type: "gate", on: true, holdTimeoutMs: 1000 });
    await m.update(3, { type: "hold", holdId: "h",
      hold: { requestId: "r", sessionId: "s", method: "POST", url: "u" } });
    const found = m.findHold("h");
    // A tab with nothing left is forgotten.
    m.update(7, { type: "let_go" });
    await m.update(7, { type: "attach_failed", attached: "p" });
    return { before, afterLoad, sync, batched, volatileWrites, found, missing: m.findHold("x"),
      tabs: m.tabStates().map(([tabId]) => tabId), stored: stored.tabState, keys: [...new Set(writes.flat())] };
  },

  async restart() {
    const first = await worker(1);
    await first.loadTabState();
    await first.update(5, { type: "hand_over" });
    await first.update(5, { type: "guard", on: true });
    await first.update(5, { type: "gate", on: true, holdTimeoutMs: 2000 });
    await first.update(5, { type: "hold", holdId: "h", hold: { requestId: "r", method: "POST", url: "u" } });
    first.update(5, { type: "allow", act: "a", entries: [{ method: "POST", url: "u", used: false }] });
    first.update(5, { type: "child_session", key: "f", session: { sessionId: "s", frameId: "f" } });
    await first.update(6, { type: "hand_over" });
    await first.update(6, { type: "let_go" });
    const second = await worker(2); // the worker was stopped and started again
    const early = second.isHanded(5);
    await second.loadTabState();
    await second.loadTabState();
    return { early, restored: view(second.tabState(5)), gone: second.tabStates().map(([tabId]) => tabId), reads };
  },
};

scenarios[scenario]().then((result) => process.stdout.write(JSON.stringify(result)));
"""


def run(scenario: str) -> Any:
    return run_js("tabstate.js", RUNNER, scenario)


def test_the_transition_function_is_pure_and_says_when_nothing_changes() -> None:
    result = run("pure")
    assert result["empty"] == {"handed": False, "guarded": False, "gate": None, "holds": [], "allowance": None,
                               "attached": None, "sessions": [], "dialog": None}
    assert result["handed"]["handed"] is True
    assert all(result["same"].values()), result["same"]
    assert result["input_untouched"] is True
    assert result["unknown"] == 'unknown tab state event "nonsense"'


def test_gate_and_holds() -> None:
    result = run("pure")
    assert result["gate_timeout"] == {"holdTimeoutMs": 9000}
    # A tab gated because a gated tab's page opened it names that tab, until the backend gates it itself.
    assert result["gate_opened_by"] == {"holdTimeoutMs": 5000, "openedBy": 4}
    assert result["gate_by_backend"] == {"holdTimeoutMs": 5000}
    # Turning the gate off leaves the holds: the gate fails them one by one (each exactly once).
    assert result["gate_off"]["gate"] is None
    assert [hold_id for hold_id, _ in result["gate_off"]["holds"]] == ["h1", "h2"]
    assert result["unhold"] == ["h2"]
    assert result["dropped"] == []


def test_an_allowance_is_the_running_acts_own_and_each_entry_is_used_once() -> None:
    result = run("pure")
    assert result["used"] == {"act": "a1", "entries": [{"method": "POST", "url": "u", "used": True}]}
    assert result["replaced"] == {"act": "a2", "entries": []}  # a newer act replaces it
    assert result["done"] is None


def test_debugger_session_state() -> None:
    result = run("pure")
    assert result["framed"]["attached"] == "p1"
    assert [key for key, _ in result["framed"]["sessions"]] == ["f1", "f2"]
    assert result["framed"]["dialog"] == {"dialog_type": "alert", "message": "hi"}
    assert result["child_gone"] == ["f2"]
    assert result["dialog_closed"] is None
    assert result["attach_failed"] is None
    # The debugger going away forgets only what the worker knew of the session, not the guard.
    gone = result["debugger_gone"]
    assert (gone["guarded"], gone["attached"], gone["sessions"], gone["dialog"]) == (True, None, [], None)


def test_one_persistence_path_under_one_key() -> None:
    result = run("store")
    assert result["before"] == {"refused": 'tab 7: "hand_over" before the tab state was loaded', "loaded": False}
    # Loading keeps what events told the worker meanwhile and adds what was stored.
    assert (result["afterLoad"]["handed"], result["afterLoad"]["attached"]) == (True, "p")
    assert result["sync"] == {"handed": True, "guarded": True}  # in memory at once, for synchronous listeners
    assert result["batched"] == [["tabState"]]
    assert result["volatileWrites"] == 0
    assert result["found"] == {"tabId": 3, "requestId": "r", "sessionId": "s", "method": "POST", "url": "u"}
    assert result["missing"] is None
    assert result["tabs"] == [3]
    assert result["stored"] == [[3, {"handed": True, "guarded": True, "gate": {"holdTimeoutMs": 1000},
                                     "holds": [["h", {"requestId": "r", "sessionId": "s", "method": "POST",
                                                      "url": "u"}]]}]]
    assert result["keys"] == ["tabState"]


def test_a_restarted_worker_gets_back_what_must_survive_and_only_that() -> None:
    result = run("restart")
    assert result["early"] is False  # nothing before the stored state is read
    restored = result["restored"]
    assert (restored["handed"], restored["guarded"], restored["gate"]) == (True, True, {"holdTimeoutMs": 2000})
    assert restored["holds"] == [["h", {"requestId": "r", "method": "POST", "url": "u"}]]
    # No act outlives its worker, and the debugger session is the browser's: neither is stored.
    assert (restored["allowance"], restored["attached"], restored["sessions"]) == (None, None, [])
    assert result["gone"] == [5]  # tab 6 was let go: nothing of it is kept
    assert result["reads"] == 2  # once per worker
