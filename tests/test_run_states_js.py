"""The side panel's stored runs (extension/lib/status.js, run in Node with an in-memory chrome.storage): a run shown
as running when the connection to the backend closes shows as cut off (Start is no longer blocked by a run that is
gone), and turns running again if a reconnected backend goes on with it; finished runs are left as they are."""

from __future__ import annotations

import json
from typing import Any

from extension_js import run_js

RUNNER = """
const stored = {};
globalThis.chrome = { storage: { session: {
  get: async (key) => (key in stored ? { [key]: structuredClone(stored[key]) } : {}),
  set: async (items) => { for (const [k, v] of Object.entries(items)) stored[k] = structuredClone(v); },
} } };
const base = process.argv[1].replace(/status\\.js$/, "");
(async () => {
  const status = await import(base + "status.js");
  const { STORAGE } = await import(base + "constants.js");
  const runs = () => Object.fromEntries((stored[STORAGE.runs] || []).map((r) => [r.run_id, [r.status, r.message]]));
  const seen = [];
  for (const step of JSON.parse(process.argv[2])) {
    if (step.cut) await status.markRunsCutOff(step.cut);
    else if (step.tree) await status.applyTreeUpdate({ run_id: step.tree, nodes: [] });
    else await status.applyRunUpdate(step);
    seen.push(runs());
  }
  process.stdout.write(JSON.stringify(seen));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def play(*steps: dict[str, Any]) -> list[dict[str, list[str]]]:
    seen: list[dict[str, list[str]]] = run_js("status.js", RUNNER, json.dumps(steps))
    return seen


def test_a_running_run_is_cut_off_when_the_backend_disconnects_and_runs_again_if_it_goes_on() -> None:
    seen = play({"run_id": "done", "status": "started", "task": "a"}, {"run_id": "done", "status": "finished"},
                {"run_id": "live", "status": "started", "task": "b"},
                {"run_id": "live", "status": "progress", "message": "expanding"},
                {"cut": "lost"},
                {"run_id": "live", "status": "progress", "message": "backtracking"},
                {"cut": "lost again"},
                {"tree": "live"})
    assert seen[4] == {"done": ["finished", ""], "live": ["interrupted", "lost"]}
    assert seen[5]["live"] == ["running", ""], "a reconnected backend's update: running again, the note gone"
    assert seen[6]["live"] == ["interrupted", "lost again"] and seen[7]["live"] == ["running", ""]
    assert all(state["done"] == ["finished", ""] for state in seen[1:])


def test_an_interrupted_run_the_backend_offers_for_resume_stays_offered() -> None:
    seen = play({"run_id": "r", "status": "interrupted", "task": "a", "message": "cut short", "resumable": True},
                {"tree": "r"})
    assert seen[-1] == {"r": ["interrupted", "cut short"]}
