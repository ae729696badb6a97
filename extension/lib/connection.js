// The WebSocket to the local backend: pairing, version handshake, reconnect with backoff, request/reply correlation.
import { CommandError, PROTOCOL_VERSION, SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX, newId } from "./protocol.js";
import { loadSettings } from "./settings.js";
import { setConnectionStatus } from "./status.js";

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];
const SLOW_RETRY_MS = 60000;
const REQUEST_TIMEOUT_MS = 30000;

export class Connection {
  constructor(onCommand) {
    this.onCommand = onCommand;
    this.ws = null;
    this.ready = false;
    this.attempt = 0;
    this.timer = null;
    this.pending = new Map();
    this.stopped = false;
    this.refusedVersion = false;
  }

  async ensure() {
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    clearTimeout(this.timer);
    const { backendUrl, token } = await loadSettings();
    if (!token) {
      await setConnectionStatus("unpaired", "Open the Branchwise options and enter the pairing token.");
      return;
    }
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    await setConnectionStatus("connecting", backendUrl);
    let ws;
    try {
      ws = new WebSocket(backendUrl, [SUBPROTOCOL, TOKEN_SUBPROTOCOL_PREFIX + token]);
    } catch (error) {
      await setConnectionStatus("disconnected", `Bad backend address: ${error.message}`);
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.sendRaw({
        type: "hello",
        id: newId(),
        protocol_version: PROTOCOL_VERSION,
        extension_version: chrome.runtime.getManifest().version,
        user_agent: navigator.userAgent,
      });
    };
    ws.onmessage = (event) => this.receive(event.data);
    ws.onclose = (event) => this.closed(ws, event, backendUrl);
  }

  async closed(ws, event, backendUrl) {
    if (this.ws !== ws) return;
    this.ws = null;
    this.ready = false;
    for (const { reject } of this.pending.values()) reject(new Error("disconnected from the backend"));
    this.pending.clear();
    let detail = event.reason || "";
    if (event.code === 4001 || this.refusedVersion) {
      detail = this.refusedVersion || "protocol version mismatch: update Branchwise";
    } else if (event.code === 4003) {
      detail = "Another Branchwise connection replaced this one.";
    } else if (!detail) {
      detail = await this.diagnose(backendUrl);
    }
    await setConnectionStatus(this.refusedVersion ? "refused" : "disconnected", detail);
    this.schedule(this.refusedVersion ? SLOW_RETRY_MS : BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)]);
  }

  // A refused WebSocket handshake looks like a dead server from here; the open /healthz tells the two apart.
  async diagnose(backendUrl) {
    const url = new URL(backendUrl);
    try {
      const response = await fetch(`http://${url.host}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return "The backend refused the connection: check the pairing token in the options.";
    } catch {
      // not running
    }
    return `No backend at ${backendUrl}: start it with \`branchwise serve\`.`;
  }

  schedule(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.ensure(), delay);
  }

  // Settings changed: drop the current socket and connect with the new ones at once.
  async restart() {
    this.attempt = 0;
    this.refusedVersion = false;
    const ws = this.ws;
    this.ws = null;
    this.ready = false;
    if (ws) ws.close(1000, "settings changed");
    await this.ensure();
  }

  sendRaw(message) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  send(message) {
    if (!this.ready) return false;
    return this.sendRaw(message);
  }

  request(message, timeoutMs = REQUEST_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      if (!this.send(message)) {
        reject(new Error("not connected to the backend"));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(message.id);
        reject(new Error(`the backend did not answer ${message.type}`));
      }, timeoutMs);
      this.pending.set(message.id, {
        resolve: (reply) => (clearTimeout(timer), resolve(reply)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
    });
  }

  async receive(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      this.send({ type: "error", id: newId(), code: "invalid_message", message: "not JSON" });
      return;
    }
    if (message.type === "hello_ok") {
      this.ready = true;
      this.attempt = 0;
      await setConnectionStatus("connected", `backend ${message.backend_version}`);
      return;
    }
    if (message.type === "error" && message.code === "version_mismatch") {
      this.refusedVersion = message.message;
      await setConnectionStatus("refused", message.message);
      return;
    }
    const waiter = message.reply_to && this.pending.get(message.reply_to);
    if (waiter) {
      this.pending.delete(message.reply_to);
      if (message.type === "error") waiter.reject(new Error(message.message));
      else waiter.resolve(message);
      return;
    }
    if (message.type === "ping") {
      this.send({ type: "pong", id: newId(), reply_to: message.id });
      return;
    }
    if (message.type === "pong" || message.type === "error") {
      if (message.type === "error") console.warn("backend error:", message.code, message.message);
      return;
    }
    let reply;
    try {
      reply = await this.onCommand(message);
    } catch (error) {
      const code = error instanceof CommandError ? error.code : "internal";
      reply = { type: "error", code, message: error.message || String(error) };
    }
    if (reply) this.send({ id: newId(), reply_to: message.id, ...reply });
  }
}
