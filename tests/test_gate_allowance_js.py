"""The extension's allowance matcher (extension/lib/allowance.js), run in Node: an approved action's entry lets one
request with its method and address through (scheme, host, port, path and query; not the fragment), then is used up."""

from __future__ import annotations

import json

from extension_js import run_js

RUNNER = """
import(process.argv[1]).then((m) => {
  const steps = JSON.parse(process.argv[2]);
  const allowance = m.allowanceOf(steps.allow);
  // Using an entry up is the tab state's `allowance_used` transition (tested in test_tabstate_js.py); marked here.
  const taken = steps.requests.map(([method, url]) => {
    const index = m.findEntry(allowance, method, url);
    if (index < 0) return null;
    allowance[index] = { ...allowance[index], used: true };
    return { method: allowance[index].method, url: allowance[index].url };
  });
  const same = steps.pairs.map(([a, b]) => m.sameAddress(a, b));
  const origin = steps.origins.map(([a, b]) => m.sameOrigin(a, b));
  process.stdout.write(JSON.stringify({ taken, same, origin }));
});
"""


def run(allow: list[dict[str, str]], requests: list[tuple[str, str]],
        pairs: list[tuple[str, str]] | None = None, origins: list[tuple[str, str]] | None = None,
        ) -> dict[str, list[object]]:
    steps = json.dumps({"allow": allow, "requests": requests, "pairs": pairs or [], "origins": origins or []})
    result: dict[str, list[object]] = run_js("allowance.js", RUNNER, steps)
    return result


SUBSCRIBE = "http://127.0.0.1:8800/subscribe"


def test_an_entry_lets_one_matching_request_through_then_is_used_up() -> None:
    taken = run([{"method": "POST", "url": SUBSCRIBE}],
                [("POST", "http://127.0.0.1:8800/buy"), ("GET", SUBSCRIBE), ("post", SUBSCRIBE), ("POST", SUBSCRIBE)])
    # The piggyback /buy and a GET are not it; the first POST to /subscribe uses the entry, a second finds none.
    assert taken["taken"] == [None, None, {"method": "POST", "url": SUBSCRIBE}, None]


def test_two_entries_for_one_address_let_two_through() -> None:
    entry = {"method": "POST", "url": SUBSCRIBE}
    assert run([entry, entry], [("POST", SUBSCRIBE)] * 3)["taken"] == [entry, entry, None]


def test_an_address_matches_on_scheme_host_port_path_and_query_not_the_fragment() -> None:
    same = run([], [], [
        (SUBSCRIBE, SUBSCRIBE + "#done"),
        ("http://Shop.Example:80/a?x=1", "http://shop.example/a?x=1"),
        ("http://shop.example/a b", "http://shop.example/a%20b"),
        (SUBSCRIBE, "https://127.0.0.1:8800/subscribe"),
        (SUBSCRIBE, "http://127.0.0.1:8801/subscribe"),
        (SUBSCRIBE, "http://localhost:8800/subscribe"),
        (SUBSCRIBE, SUBSCRIBE + "/"),
        (SUBSCRIBE, SUBSCRIBE + "?list=all"),
        ("http://shop.example/a?x=1", "http://shop.example/a?x=2"),
        ("not a url", "not a url"),
    ])["same"]
    assert same == [True, True, True, False, False, False, False, False, False, False]


def test_a_redirect_is_followed_unasked_only_within_its_origin() -> None:
    origin = run([], [], origins=[
        (SUBSCRIBE, "http://127.0.0.1:8800/subscribed?x=1"),
        ("http://Shop.Example:80/a", "http://shop.example/b"),
        (SUBSCRIBE, "http://localhost:8800/subscribed"),
        (SUBSCRIBE, "https://127.0.0.1:8800/subscribed"),
        (SUBSCRIBE, "http://127.0.0.1:8801/subscribed"),
        ("not a url", "not a url"),
    ])["origin"]
    assert origin == [True, True, False, False, False, False]
