// Draws the confirmation card of the side panel: what will be done, on which page, the element, why it was flagged, a
// what approving an action lets through the network gate, a countdown, Approve and Deny. Hooks for tests:
// #confirm-card[data-approval-id][data-highlighted], .confirm-what, .confirm-url, .confirm-element, .confirm-sends,
// .confirm-reasons li, .confirm-countdown[data-remaining], button.approve, button.deny.
import { el } from "./treeview.js";

export function remainingSeconds(confirm, now = Date.now()) {
  return Math.max(0, Math.ceil((confirm.deadline - now) / 1000));
}

export function countdownText(confirm, now = Date.now()) {
  if (confirm.answered) return confirm.answered === "approved" ? "Approved: running it…" : "Denied.";
  const left = remainingSeconds(confirm, now);
  return left > 0 ? `Denied automatically in ${left} s` : "No answer: denied.";
}

function row(label, cls, value) {
  return value ? [el("dt", {}, label), el("dd", { class: cls }, value)] : [];
}

// An approved action gets exactly what the card names through the network gate; the rest is asked about.
function coversText(confirm) {
  const sends = confirm.sends || [];
  if (!sends.length) return "Nothing unasked: each request it sends is asked about before it goes out";
  return `${sends.map((r) => `one ${r.method} to ${r.url}`).join(" and ")}; anything else it sends is asked about`;
}

// A card that takes the place of another takes no click for a moment: a double click on Approve must not approve the
// next question unread. `shown` is the card shown last ({approvalId, since}); returns the card shown now and how long
// its buttons wait before they take clicks.
export const NEW_CARD_PAUSE_MS = 700;

export function cardPause(shown, approvalId, now = Date.now(), pauseMs = NEW_CARD_PAUSE_MS) {
  const current = shown?.approvalId === approvalId ? shown : { approvalId, since: now };
  return { shown: current, waitMs: Math.max(0, current.since + pauseMs - now) };
}

export function renderConfirm(confirm, waiting, onAnswer) {
  const isRequest = confirm.kind === "request";
  const closed = Boolean(confirm.answered) || remainingSeconds(confirm) === 0;
  const approve = el("button", { type: "button", class: "approve", disabled: closed }, "Approve once");
  const deny = el("button", { type: "button", class: "deny secondary", disabled: closed }, "Deny");
  approve.addEventListener("click", () => onAnswer(confirm.approval_id, true));
  deny.addEventListener("click", () => onAnswer(confirm.approval_id, false));
  const request = isRequest ? `${confirm.request_method} ${confirm.request_url}`.trim() : "";
  const card = el("section", {
    id: "confirm-card", class: "confirm", role: "alertdialog", "aria-labelledby": "confirm-title",
    "data-approval-id": confirm.approval_id, "data-kind": confirm.kind, "data-run-id": confirm.run_id,
    "data-highlighted": String(Boolean(confirm.highlighted)),
  },
  el("h2", { id: "confirm-title" }, isRequest ? "Let this request through?" : "Allow this action?"),
  el("p", { class: "confirm-what" }, el("span", { class: "action" }, confirm.action_text || request)),
  el("dl", {},
    ...row("Element", "confirm-element", confirm.element_label),
    ...row("Page", "confirm-url", confirm.url),
    ...row("Request", "confirm-request", request),
    ...row("Lets through", "confirm-sends", isRequest ? "" : coversText(confirm))),
  );
  if (confirm.reasons.length) {
    card.append(el("p", { class: "confirm-why" }, "Why it was flagged:"),
      el("ul", { class: "confirm-reasons" }, ...confirm.reasons.map((r) => el("li", {}, r))));
  }
  if (confirm.highlighted) card.append(el("p", { class: "hint confirm-highlight" }, "Highlighted on the page."));
  else if (confirm.highlight_error) {
    card.append(el("p", { class: "hint confirm-highlight" }, "The element could not be highlighted on the page."));
  }
  card.append(
    el("p", { class: "confirm-countdown", "data-remaining": remainingSeconds(confirm) }, countdownText(confirm)),
    el("div", { class: "row" }, approve, deny),
    el("p", { class: "error confirm-problem", role: "alert" }),
  );
  if (waiting > 0) card.append(el("p", { class: "hint" }, `${waiting} more waiting after this one.`));
  return card;
}
