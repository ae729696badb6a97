// Wire constants shared with the backend (backend/branchwise/protocol.py is the source of truth; a test compares them).
export const PROTOCOL_VERSION = 14;
export const SUBPROTOCOL = "branchwise";
export const DEFAULT_BACKEND_URL = "ws://127.0.0.1:8765/ws";

export function newId() {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

// An error that travels back to the backend as {type: "error", code, message}.
export class CommandError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}
