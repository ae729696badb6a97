"""The side panel's confirmation card (extension/lib/confirmview.js `cardPause`, run in Node): a card that takes the
place of the one just answered takes no click for a moment, so a double click on Approve cannot approve the next
question unread; the same card redrawn keeps its moment, not a new one."""

from __future__ import annotations

from extension_js import run_js

RUNNER = """
import(process.argv[1]).then((m) => {
  const steps = [];
  let shown = null;
  for (const [approvalId, now] of JSON.parse(process.argv[2])) {
    const pause = m.cardPause(shown, approvalId, now);
    shown = pause.shown;
    steps.push(pause.waitMs);
  }
  process.stdout.write(JSON.stringify({ steps, pauseMs: m.NEW_CARD_PAUSE_MS }));
});
"""


def test_a_new_card_waits_and_a_redrawn_one_keeps_its_wait() -> None:
    # Card a shown at t=1000, redrawn at 1300 and 2000; b replaces it at 2050 (a double click's second click lands
    # at 2100, inside b's pause), redrawn at 2900.
    seen = run_js("confirmview.js", RUNNER, '[["a", 1000], ["a", 1300], ["a", 2000], ["b", 2050], ["b", 2100], '
                                            '["b", 2900]]')
    pause = seen["pauseMs"]
    assert pause >= 500, "long enough that the second click of a double click lands inside it"
    assert seen["steps"] == [pause, pause - 300, max(0, pause - 1000), pause, pause - 50, max(0, pause - 850)]
