"""The extension's connection to the backend (extension/lib/connection.js, run in Node with a fake WebSocket): being
proven belongs to a socket. A socket opened while the proven one was still closing is not taken as proven before its
own handshake, so nothing the new peer sends runs, and no event goes to it, until it has proven it holds the token."""

from __future__ import annotations

from typing import Any

from extension_js import run_js

RUNNER = """
const base = process.argv[1].replace(/tabstate\\.js$/, "");
const TOKEN = "t0ken-for-the-test-0123456789";
const session = {};
globalThis.chrome = {
  storage: { local: { get: async () => ({ backendUrl: "ws://127.0.0.1:9/ws", token: TOKEN }) },
             session: {
               get: async (key) => (key in session ? { [key]: session[key] } : {}),
               set: async (items) => { Object.assign(session, items); },
               remove: async (key) => { delete session[key]; },
             } },
  runtime: { getManifest: () => ({ version: "test" }) },
};
const sockets = [];
class FakeSocket {
  static CONNECTING = 0; static OPEN = 1; static CLOSING = 2; static CLOSED = 3;
  constructor(url) { this.url = url; this.readyState = FakeSocket.CONNECTING; this.sent = []; sockets.push(this); }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() { this.readyState = FakeSocket.CLOSING; }
}
globalThis.WebSocket = FakeSocket;
globalThis.navigator = { userAgent: "node" };
(async () => {
  const { Connection } = await import(base + "connection.js");
  const { proof } = await import(base + "pairing.js");
  const ran = [];
  // What the hook saw each time a socket's backend was let go: whether the replaced state was on record yet.
  const letGo = [];
  const connection = new Connection(async (message) => { ran.push(message.type); return null; },
    async () => { letGo.push(Boolean(session.replaced)); });
  const open = async (ws) => {
    ws.readyState = FakeSocket.OPEN;
    ws.onopen();
    const hello = ws.sent.find((m) => m.type === "hello");
    const backendNonce = "backend-nonce-" + sockets.length;
    await ws.onmessage({ data: JSON.stringify({ type: "hello_ok", id: "h" + sockets.length, nonce: backendNonce,
      backend_version: "test", proof: await proof(TOKEN, "backend", backendNonce, hello.nonce) }) });
  };
  await connection.ensure();
  await open(sockets[0]);
  const provenFirst = connection.ready;
  // The backend closes the first socket; before its close event arrives, the alarm asks for a connection.
  sockets[0].readyState = FakeSocket.CLOSING;
  await connection.ensure();
  const second = sockets[1];
  second.readyState = FakeSocket.OPEN;
  second.onopen();
  sockets[0].readyState = FakeSocket.CLOSED;
  await sockets[0].onclose({ code: 1000, reason: "bye" });
  const readyBefore = connection.ready;
  const letGoAfterFirst = letGo.length;
  const eventSent = connection.send({ type: "request_held", id: "e1" });
  await second.onmessage({ data: JSON.stringify({ type: "observe", id: "c1", tab_id: 1 }) });
  // Another browser or profile takes the backend's place (close code 4003): the alarm's and the retries' attempts
  // leave it there, the user's (the side panel opened) takes it back.
  await open(second);
  second.readyState = FakeSocket.CLOSED;
  await second.onclose({ code: 4003, reason: "replaced" });
  await connection.ensure({ automatic: true });
  await new Promise((resolve) => setTimeout(resolve, 700));  // past the first retry's delay
  const afterReplaced = sockets.length;
  const status = session.connection?.detail;
  await connection.ensure();
  process.stdout.write(JSON.stringify({ sockets: sockets.length, provenFirst, readyBefore, eventSent, ran,
                                        sentToSecond: second.sent.map((m) => m.type).slice(0, 1), afterReplaced,
                                        status, letGoAfterFirst, letGo }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_a_socket_opened_while_the_proven_one_closes_runs_nothing_before_its_own_handshake_and_a_replaced_one_waits(
        ) -> None:
    seen: dict[str, Any] = run_js("tabstate.js", RUNNER)
    assert seen["provenFirst"] is True
    assert seen["readyBefore"] is False and seen["eventSent"] is False
    # The first socket's backend was let go (its holds failed, its runs marked) though a newer socket had replaced it.
    assert seen["letGoAfterFirst"] == 1
    assert seen["ran"] == [] and seen["sentToSecond"] == ["hello"]
    # Replaced: no automatic reconnect (two profiles would take turns forever), one when the user asks.
    assert seen["afterReplaced"] == 2 and seen["sockets"] == 3
    assert "open this side panel to take it back" in seen["status"]
    # On record before the hook ran: the alarm firing meanwhile would not take the backend back.
    assert seen["letGo"] == [False, True]
