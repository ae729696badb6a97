"""The connection status pages show (extension/lib/status.js, in Node with an in-memory chrome.storage): the options
page and the side panel hear it twice, from the worker's reply to their "status" request and from storage changes, in
either order. A reply read before the status changed must not put "Connecting…" back over a later "Refused" (it did,
in CI: the impostor e2e waited 20 s for a refusal the page had shown and then overwritten)."""

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
(async () => {
  const status = await import(process.argv[1]);
  // The worker: a status read for the page's request, then changes, all within the same millisecond or so.
  const heard = [];
  for (const [state, detail] of JSON.parse(process.argv[2])) {
    await status.setConnectionStatus(state, detail);
    heard.push(await status.getConnectionStatus());
  }
  // The page hears them in the order given and keeps what it shows.
  const shown = (order) => {
    let current = null;
    for (const i of order) if (status.newerStatus(heard[i], current)) current = heard[i];
    return current && current.state;
  };
  process.stdout.write(JSON.stringify({
    at: heard.map((h) => h.at),
    inOrder: shown(heard.map((_, i) => i)),
    reversed: shown(heard.map((_, i) => heard.length - 1 - i)),
    staleLast: shown([...heard.keys()].slice(1).concat([0])),
    nothing: status.newerStatus(undefined, null),
    first: status.newerStatus({ state: "disconnected", detail: "", at: 0 }, null),
  }));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def hear(*statuses: tuple[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = run_js("status.js", RUNNER, json.dumps(statuses))
    return out


def test_a_stale_reply_arriving_after_a_newer_change_does_not_overwrite_it() -> None:
    out = hear(("connecting", "ws://127.0.0.1:1"), ("refused", "did not prove it holds this pairing token"))
    assert out["inOrder"] == "refused"
    assert out["reversed"] == "refused", "the 'connecting' reply came after the refusal and was shown over it"


def test_statuses_set_within_one_millisecond_are_still_ordered() -> None:
    out = hear(*[("connecting", ""), ("disconnected", "")] * 10, ("connected", "backend 0.1.0"))
    assert out["at"] == sorted(set(out["at"])), out["at"]
    assert out["staleLast"] == "connected" and out["reversed"] == "connected"


def test_a_page_shows_the_first_status_it_hears_even_one_never_set() -> None:
    out = hear(("connected", ""))
    assert out["first"] is True, "the stored default (at 0) is shown when nothing is shown yet"
    assert out["nothing"] is False, "no reply (a worker that did not answer) shows nothing"
