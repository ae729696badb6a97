// Pairing settings (backend URL and token) in chrome.storage.local; shared by the worker and the options page.
import { STORAGE } from "./constants.js";
import { DEFAULT_BACKEND_URL } from "./protocol.js";

export async function loadSettings() {
  const { [STORAGE.backendUrl]: backendUrl, [STORAGE.token]: token } =
    await chrome.storage.local.get([STORAGE.backendUrl, STORAGE.token]);
  return { backendUrl: backendUrl || DEFAULT_BACKEND_URL, token: token || "" };
}

export async function saveSettings({ backendUrl, token }) {
  await chrome.storage.local.set({ [STORAGE.backendUrl]: backendUrl.trim(), [STORAGE.token]: token.trim() });
}

// Validates what a user typed; returns an error message or "".
export function checkSettings({ backendUrl, token }) {
  let url;
  try {
    url = new URL(backendUrl.trim());
  } catch {
    return "The backend address must be a URL such as ws://127.0.0.1:8765/ws";
  }
  if (url.protocol !== "ws:") return "The backend address must start with ws:// (the backend runs on this computer)";
  if (!["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) {
    return "The backend must run on this computer (127.0.0.1 or localhost)";
  }
  if (!/^[A-Za-z0-9_-]{16,}$/.test(token.trim())) {
    return "The pairing token is the line `branchwise serve` printed (letters, digits, - and _)";
  }
  return "";
}

// The pairing link printed by the backend: options.html#backend=ws://...&token=...
export function settingsFromHash(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const backendUrl = params.get("backend");
  const token = params.get("token");
  return backendUrl && token ? { backendUrl, token } : null;
}
