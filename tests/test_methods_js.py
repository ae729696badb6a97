"""Which requests the extension's gate holds and its guard blocks (extension/lib/constants.js, rules.js), run in Node:
every method but GET, HEAD and OPTIONS, in any spelling, so a method nobody listed (WebDAV's MOVE, a custom verb)
cannot pass as harmless."""

from __future__ import annotations

from typing import Any

from extension_js import run_js

RUNNER = """
Promise.all([import(process.argv[1]), import(process.argv[1].replace("constants.js", "rules.js"))]).then(([c, r]) => {
  const methods = ["GET", "get", "HEAD", "OPTIONS", "POST", "post", "PUT", "PATCH", "DELETE", "MOVE", "COPY",
    "MKCOL", "PROPPATCH", "LOCK", "BREW", "", "Get"];
  const mutating = Object.fromEntries(methods.map((m) => [m, c.isMutating(m)]));
  process.stdout.write(JSON.stringify({ mutating, rule: r.blockMutatingRule(7, 42) }));
});
"""


def facts() -> dict[str, Any]:
    result: dict[str, Any] = run_js("constants.js", RUNNER)
    return result


def test_only_get_head_and_options_pass_as_harmless_in_any_spelling() -> None:
    mutating = facts()["mutating"]
    assert [m for m, held in mutating.items() if not held] == ["GET", "get", "HEAD", "OPTIONS", "Get"]
    # An empty method is not one of the safe ones either: fail closed.
    assert mutating[""] is True and mutating["MOVE"] is True and mutating["BREW"] is True


def test_the_block_rule_names_the_safe_methods_it_lets_through_not_the_ones_it_blocks() -> None:
    condition = facts()["rule"]["condition"]
    assert condition["tabIds"] == [42]
    assert condition["excludedRequestMethods"] == ["get", "head", "options"]
    assert "requestMethods" not in condition  # a list of blocked methods would miss the ones it does not name
