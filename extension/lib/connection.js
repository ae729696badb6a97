// The WebSocket to the local backend: the handshake in which both ends prove they hold the pairing token, version
// check, reconnect with backoff, request/reply correlation. Nothing the other end sends is run before it has proven
// itself: whatever listens on the backend's port may not be Branchwise.
import { newNonce, proof, sameProof } from "./pairing.js";
import { CommandError, PROTOCOL_VERSION, SUBPROTOCOL, newId } from "./protocol.js";
import { STORAGE } from "./constants.js";
import { loadSettings } from "./settings.js";
import { setConnectionStatus } from "./status.js";

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000];
const SLOW_RETRY_MS = 60000;
const REQUEST_TIMEOUT_MS = 30000;

export class Connection {
  // `onClosed`: told when a socket that was open closes (its backend's answers will not come).
  constructor(onCommand, onClosed = () => {}) {
    this.onCommand = onCommand;
    this.onClosed = onClosed;
    this.ws = null;
    // The socket whose handshake succeeded: readiness belongs to a socket, so a new one (opened while the old was
    // still closing) is never taken as proven by the old one's handshake.
    this.provenWs = null;
    this.attempt = 0;
    this.timer = null;
    this.pending = new Map();
    this.stopped = false;
    this.refusal = false; // why the backend, or what claimed to be it, was refused; retried only slowly
    this.attempting = null; // the connection attempt under way
  }

  // One attempt at a time: callers at once (the alarm, a settings change, a command) must not open two sockets, whose
  // handshakes would cross. `automatic` (the alarm, a worker or browser start, a retry): not after another connection
  // (another browser or profile paired with the backend) took the backend's one place, or two would take turns
  // forever; the user takes it back by opening the side panel or saving the settings. Kept in session storage: a
  // restarted worker must not take it back either.
  async ensure({ automatic = false } = {}) {
    const { [STORAGE.replaced]: replaced } = await chrome.storage.session.get(STORAGE.replaced);
    if (replaced) {
      if (automatic) return;
      await chrome.storage.session.remove(STORAGE.replaced);
    }
    if (!this.attempting) this.attempting = this.connect().finally(() => { this.attempting = null; });
    return this.attempting;
  }

  async connect() {
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
      ws = new WebSocket(backendUrl, [SUBPROTOCOL]);
    } catch (error) {
      await setConnectionStatus("disconnected", `Bad backend address: ${error.message}`);
      return;
    }
    this.ws = ws;
    // This socket's own challenge: its handshake is checked against it and the token it was opened with.
    const pairing = { token, nonce: newNonce() };
    ws.onopen = () => {
      this.sendRaw({
        type: "hello",
        id: newId(),
        protocol_version: PROTOCOL_VERSION,
        nonce: pairing.nonce,
        extension_version: chrome.runtime.getManifest().version,
        user_agent: navigator.userAgent,
      });
    };
    ws.onmessage = (event) => this.receive(event.data, ws, backendUrl, pairing);
    ws.onclose = (event) => this.closed(ws, event, backendUrl);
  }

  async closed(ws, event, backendUrl) {
    // Replaced: on record before anything is awaited, so the alarm cannot take the backend back meanwhile.
    if (event.code === 4003 && ws === this.ws) await chrome.storage.session.set({ [STORAGE.replaced]: true });
    if (this.ws !== ws) {
      // A socket replaced by a newer one while it closed: what its backend held is still to be let go.
      if (ws === this.provenWs) await this.letGo();
      return;
    }
    this.ws = null;
    for (const { reject } of this.pending.values()) reject(new Error("disconnected from the backend"));
    this.pending.clear();
    await this.letGo();
    let detail = event.reason || "";
    if (this.refusal) {
      detail = this.refusal;
    } else if (event.code === 4001) {
      detail = "protocol version mismatch: update Branchwise";
    } else if (event.code === 4003) {
      await setConnectionStatus("disconnected", "Another browser or profile connected to the backend in this one's place; "
        + "open this side panel to take it back.");
      return;
    } else if (!detail) {
      detail = await this.diagnose(backendUrl);
    }
    await setConnectionStatus(this.refusal ? "refused" : "disconnected", detail);
    this.schedule(this.refusal ? SLOW_RETRY_MS : BACKOFF_MS[Math.min(this.attempt++, BACKOFF_MS.length - 1)]);
  }

  // The proven socket closed: its backend's answers will not come (onClosed fails what it holds, marks its runs).
  async letGo() {
    this.provenWs = null;
    try {
      await this.onClosed();
    } catch (error) {
      console.warn("after the backend disconnected:", error);
    }
  }

  // A refused WebSocket upgrade looks like a dead server from here; the open /healthz tells the two apart. The backend
  // refuses an upgrade only for its Host or Origin: a wrong token is found out in the handshake instead.
  async diagnose(backendUrl) {
    const url = new URL(backendUrl);
    try {
      const response = await fetch(`http://${url.host}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return "The backend refused the connection: it expects another extension id or address.";
    } catch {
      // not running
    }
    return `No backend at ${backendUrl}: start it with \`branchwise serve\`.`;
  }

  schedule(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.ensure({ automatic: true }), delay);
  }

  // Settings changed: drop the current socket and connect with the new ones at once.
  async restart() {
    await this.attempting; // an attempt under way read the old settings: let it finish, then replace its socket
    this.attempt = 0;
    this.refusal = false;
    await chrome.storage.session.remove(STORAGE.replaced);
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000, "settings changed");
    await this.ensure();
  }

  // Before the backend has proven it holds the token, only its hello_ok or an error is read; commands are dropped
  // unanswered, so a listener that is not Branchwise gets nothing run and learns nothing.
  async handshake(message, ws, backendUrl, { token, nonce }) {
    if (message.type === "error" && (message.code === "version_mismatch" || message.code === "not_paired")) {
      this.refusal = message.message;
      await setConnectionStatus("refused", message.message);
      return;
    }
    if (message.type !== "hello_ok") {
      console.warn(`ignored ${String(message.type)} from ${backendUrl}: it has not proven it is the paired backend`);
      return;
    }
    const expected = await proof(token, "backend", String(message.nonce), nonce);
    if (ws !== this.ws) return;
    if (!sameProof(message.proof, expected)) {
      this.refusal = `The program at ${backendUrl} did not prove it holds this pairing token: check the token in the ` +
        "options (another program may be listening on that port).";
      ws.close(4004, "backend not proven");
      await setConnectionStatus("refused", this.refusal);
      return;
    }
    this.sendRaw({
      type: "auth",
      id: newId(),
      reply_to: message.id,
      proof: await proof(token, "extension", nonce, String(message.nonce)),
    });
    this.provenWs = ws;
    this.attempt = 0;
    this.refusal = false;
    await setConnectionStatus("connected", `backend ${message.backend_version}`);
  }

  // Proven and open: commands and events may go both ways.
  get ready() {
    return this.ws !== null && this.provenWs === this.ws;
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

  async receive(data, ws, backendUrl, pairing) {
    if (ws !== this.ws) return;
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      this.send({ type: "error", id: newId(), code: "invalid_message", message: "not JSON" });
      return;
    }
    if (!this.ready) {
      await this.handshake(message, ws, backendUrl, pairing);
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
