// declarativeNetRequest session rules that name one tab (guard.js, gate.js). Pure: no Chrome API.
import { ALL_RESOURCE_TYPES, SAFE_METHODS } from "./constants.js";

// A rule id for the tab derived from its id with `bit` flipped. Tab ids grow by one from a random start, and a tab's
// rules flip bit 28, 29 or 30 or none, so it would take 2^28 tabs to collide; ids must fit 1..2^31-1 (a tab id equal to
// the bit would give 0, not a valid id).
export function flippedRuleId(tabId, bit) {
  return (tabId ^ bit) || 0x7fffffff;
}

// Blocks every mutating request the tab makes, of every resource type, top-level form posts included: every method but
// the safe ones, so a method the rule has no name for (MOVE, a custom verb) is blocked too.
export function blockMutatingRule(id, tabId) {
  return {
    id,
    priority: 1,
    action: { type: "block" },
    condition: {
      tabIds: [tabId],
      excludedRequestMethods: SAFE_METHODS.map((m) => m.toLowerCase()),
      resourceTypes: [...ALL_RESOURCE_TYPES],
    },
  };
}

// Refuses the tab's new WebSocket and WebTransport connections (their opening request; connections already open stay).
export function blockChannelsRule(id, tabId) {
  return {
    id,
    priority: 1,
    action: { type: "block" },
    condition: { tabIds: [tabId], resourceTypes: ["websocket", "webtransport"] },
  };
}
