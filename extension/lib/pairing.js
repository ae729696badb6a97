// Both ends of the connection prove they hold the pairing token without sending it (backend/branchwise/pairing.py is
// the reference): each sends a fresh nonce and answers the other's with an HMAC-SHA256 keyed by the token over
// "<label>\n<the other's nonce>\n<own nonce>", labelled by role so that one side's proof never passes as the other's.
const LABELS = { backend: "branchwise-backend", extension: "branchwise-extension" };
const encoder = new TextEncoder();

export function newNonce() {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

export async function proof(token, role, ownNonce, peerNonce) {
  const key = await crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false,
    ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${LABELS[role]}\n${peerNonce}\n${ownNonce}`));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// Compares in time independent of where the strings differ.
export function sameProof(given, expected) {
  if (typeof given !== "string" || given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}
