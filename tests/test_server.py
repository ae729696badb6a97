"""The backend's socket and guard, exercised by a Python client playing the extension over real sockets."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from starlette.websockets import WebSocketDisconnect
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidStatus

from branchwise.link import ExtensionLink, LinkClosed, LinkTimeout
from branchwise.pairing import load_or_create_token, new_nonce, proof
from branchwise.protocol import PROTOCOL_VERSION, ListTabs, Observation, Observe, Tabs

from extension_client import open_socket, paired_socket, receive_json, running_backend

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Tiny helper for async tests without a plugin."""
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_token_is_created_once_and_kept_private(tmp_path: Path) -> None:
    first = load_or_create_token(tmp_path)
    assert load_or_create_token(tmp_path) == first
    assert len(first) >= 24
    assert (tmp_path / "token").stat().st_mode & 0o077 == 0


def test_the_data_folder_is_private_to_the_user_even_when_it_existed(tmp_path: Path) -> None:
    fresh, existing = tmp_path / "fresh", tmp_path / "existing"
    existing.mkdir(mode=0o755)
    existing.chmod(0o755)
    for folder in (fresh, existing):
        load_or_create_token(folder)
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_paired_extension_gets_hello_ok_and_status_shows_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            link = backend.hub.link
            assert link is not None and link.hello is not None and link.hello.extension_version == "test"
            status = await asyncio.to_thread(
                http_get, backend.server.port, "/api/status", {"Authorization": f"Bearer {backend.token}"}
            )
            assert status[0] == 200 and json.loads(status[1])["extension_connected"] is True
            await ws.close()

    run(main())


@pytest.mark.parametrize(
    ("origin", "reason"),
    [
        ("https://evil.example", "is not the Branchwise extension"),
        ("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "is not the Branchwise extension"),
    ],
)
def test_foreign_origins_get_403_and_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, origin: str, reason: str
) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            with pytest.raises(InvalidStatus) as exc:
                await open_socket(backend, origin=origin)
            assert exc.value.response.status_code == 403
            assert backend.hub.link is None

    with caplog.at_level(logging.WARNING, logger="branchwise.server"):
        run(main())
    assert any(reason in r.getMessage() for r in caplog.records), caplog.text


async def _hello(ws: ClientConnection, nonce: str) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "hello", "id": "h1", "protocol_version": PROTOCOL_VERSION, "nonce": nonce}))
    return await receive_json(ws)


def test_the_backend_proves_it_holds_the_token_without_sending_it(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            first, second = await open_socket(backend), await open_socket(backend)
            nonce = new_nonce()
            greeting = await _hello(first, nonce)
            assert greeting["type"] == "hello_ok" and backend.token not in json.dumps(greeting)
            assert greeting["proof"] == proof(backend.token, "backend", greeting["nonce"], nonce)
            assert greeting["proof"] != proof("another-token", "backend", greeting["nonce"], nonce)
            # A fresh nonce, a fresh proof: a recorded one cannot be replayed.
            again = await _hello(second, new_nonce())
            assert again["nonce"] != greeting["nonce"] and again["proof"] != greeting["proof"]
            for ws in (first, second):
                await ws.close()

    run(main())


@pytest.mark.parametrize("answer", ["wrong token", "backend's proof echoed", "no auth, a command"])
def test_a_client_that_cannot_prove_the_token_is_refused_and_replaces_nothing(
        tmp_path: Path, answer: str) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            paired = await paired_socket(backend)
            link = backend.hub.link
            intruder = await open_socket(backend)
            nonce = new_nonce()
            greeting = await _hello(intruder, nonce)
            reply: dict[str, object]
            if answer == "wrong token":
                reply = {"type": "auth", "id": "a", "proof": proof("guessed", "extension", nonce, greeting["nonce"])}
            elif answer == "backend's proof echoed":
                reply = {"type": "auth", "id": "a", "proof": greeting["proof"]}
            else:
                reply = {"type": "start_run", "id": "a", "task": "buy everything", "tab_id": 1}
            await intruder.send(json.dumps(reply))
            err = await receive_json(intruder)
            assert err["type"] == "error" and err["code"] in ("not_paired", "invalid_message"), err
            with pytest.raises(ConnectionClosed) as closed:
                await intruder.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code in (4002, 4004)
            # The paired extension was never replaced and still works.
            assert backend.hub.link is link
            await paired.send(json.dumps({"type": "ping", "id": "p1"}))
            assert (await receive_json(paired))["reply_to"] == "p1"
            await paired.close()

    run(main())


def http_get(port: int, path: str, headers: dict[str, str]) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path, headers=headers)
    resp = conn.getresponse()
    return resp.status, resp.read().decode()


def test_http_needs_token_and_a_loopback_host(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            port = backend.server.port
            auth = {"Authorization": f"Bearer {backend.token}"}
            assert (await asyncio.to_thread(http_get, port, "/api/status", {}))[0] == 403
            rebound = await asyncio.to_thread(http_get, port, "/api/status", {**auth, "Host": f"evil.example:{port}"})
            assert rebound[0] == 403 and "Host header" in rebound[1]
            foreign = await asyncio.to_thread(http_get, port, "/api/status", {**auth, "Origin": "https://evil.example"})
            assert foreign[0] == 403
            assert (await asyncio.to_thread(http_get, port, "/api/status", auth))[0] == 200

    run(main())


def test_the_health_check_needs_no_token_but_a_loopback_host(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            port = backend.server.port
            assert (await asyncio.to_thread(http_get, port, "/healthz", {}))[0] == 200
            # A page that rebinds its own hostname to 127.0.0.1 must not learn that Branchwise runs here.
            rebound = await asyncio.to_thread(http_get, port, "/healthz", {"Host": f"evil.example:{port}"})
            assert rebound[0] == 403 and "Host header" in rebound[1]
            foreign = await asyncio.to_thread(http_get, port, "/healthz", {"Origin": "https://evil.example"})
            assert foreign[0] == 403

    run(main())


def test_a_half_sent_request_is_cut_off_and_the_extension_still_connects(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path, request_head_timeout_seconds=0.5) as backend:
            stalled = []
            for _ in range(20):
                reader, writer = await asyncio.open_connection("127.0.0.1", backend.server.port)
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
                await writer.drain()
                stalled.append((reader, writer))
            idle_reader, idle = await asyncio.open_connection("127.0.0.1", backend.server.port)  # sends nothing
            # The backend closes each of them once the head is overdue: the read sees the end of the stream.
            for reader in [idle_reader, *(r for r, _ in stalled)]:
                assert await asyncio.wait_for(reader.read(), 5) == b""
            ws = await paired_socket(backend)
            await asyncio.sleep(1.0)  # an upgraded connection is out of the deadline
            await ws.send(json.dumps({"type": "ping", "id": "p1"}))
            assert (await receive_json(ws))["reply_to"] == "p1"
            await ws.close()
            for writer in [idle, *(w for _, w in stalled)]:
                writer.close()

    run(main())


def test_backend_refuses_to_bind_beyond_loopback(tmp_path: Path) -> None:
    from branchwise.config import ServerConfig
    from branchwise.link import ExtensionHub
    from branchwise.server import BackendServer

    config = ServerConfig(host="0.0.0.0", port=0, data_dir=tmp_path)
    with pytest.raises(ValueError, match="loopback only"):
        BackendServer(config, ExtensionHub(config), "t")


def test_malformed_and_invalid_messages_get_an_error_and_the_connection_keeps_going(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            await ws.send("{not json")
            err = await receive_json(ws)
            assert err["type"] == "error" and err["code"] == "invalid_message" and "JSON" in err["message"]

            await ws.send(json.dumps({"type": "network_request", "id": "n1", "tab_id": "seven", "method": "GET"}))
            err = await receive_json(ws)
            assert err["reply_to"] == "n1" and err["code"] == "invalid_message"
            assert "tab_id" in err["message"] and "request_id" in err["message"]

            await ws.send(json.dumps({"type": "launch_missiles", "id": "x1"}))
            err = await receive_json(ws)
            assert err["reply_to"] == "x1" and "launch_missiles" in err["message"]

            await ws.send(json.dumps({"type": "ping", "id": "p1"}))
            pong = await receive_json(ws)
            assert pong == {"type": "pong", "id": pong["id"], "reply_to": "p1"}
            await ws.close()

    run(main())


def test_a_deeply_nested_message_or_a_lone_surrogate_id_gets_an_error_and_the_connection_keeps_going(
        tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            for raw in ('{"type": "ping", "id": "d1", "x": ' + "[" * 999 + "]" * 999 + "}",
                        '{"type": "tab_event", "reply_to": "r1", "x": ' + "{\"a\": " * 999 + "1" + "}" * 999 + "}",
                        '{"type": "ping", "id": "\\ud800"}',
                        '{"type": "tab_event", "id": "\\ud800", "tab_id": 1}'):
                await ws.send(raw)
                err = await receive_json(ws)
                assert err["type"] == "error" and err["code"] == "invalid_message", raw[:40]
            await ws.send(json.dumps({"type": "ping", "id": "p1"}))
            assert (await receive_json(ws))["reply_to"] == "p1"
            await ws.close()

    run(main())


class DroppedSocket:
    """The connection being replaced, gone at the TCP level: closing it fails as Starlette reports a dropped peer."""

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        raise WebSocketDisconnect(1006)


def test_a_new_connection_replaces_one_whose_close_fails(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            backend.hub._link = ExtensionLink(DroppedSocket(), backend.config, backend.hub,  # type: ignore[arg-type]
                                              backend.token)
            ws = await paired_socket(backend)
            await ws.send(json.dumps({"type": "ping", "id": "p1"}))
            assert (await receive_json(ws))["reply_to"] == "p1"
            assert backend.hub.link is not None and backend.hub.link.hello is not None
            # And the link after it is fine too.
            await ws.close()
            again = await paired_socket(backend)
            await again.close()

    run(main())


class LeavingSocket:
    """An extension that says hello and is gone before the backend answers (seen in an eval run, between two of its
    tasks): Starlette reports the dropped peer on the send."""

    def __init__(self) -> None:
        self.events = [{"type": "websocket.receive", "text": json.dumps(
            {"type": "hello", "id": "h1", "protocol_version": PROTOCOL_VERSION, "extension_version": "test",
             "nonce": new_nonce()})}]

    async def receive(self) -> dict[str, str]:
        return self.events.pop(0) if self.events else {"type": "websocket.disconnect"}

    async def send_text(self, data: str) -> None:
        raise WebSocketDisconnect(1006)


def test_an_extension_that_leaves_during_the_handshake_ends_its_connection_quietly(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """It used to escape as "Exception in ASGI application" with three chained tracebacks on the terminal."""
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            link = ExtensionLink(LeavingSocket(), backend.config, backend.hub, backend.token)  # type: ignore[arg-type]
            await asyncio.wait_for(link.run(), 5)
            assert not link.ready.is_set() and backend.hub.link is None
            ws = await paired_socket(backend)  # the next connection is served as usual
            await ws.close()

    with caplog.at_level(logging.INFO, logger="branchwise.link"):
        run(main())
    assert "the extension went away during the handshake" in caplog.text


def test_oversized_message_is_refused_politely_but_a_big_page_fits(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path, max_message_bytes=2_000_000, transport_max_bytes=8_000_000) as backend:
            ws = await paired_socket(backend)
            padding = "x" * 2_500_000
            await ws.send(json.dumps({"type": "ping", "id": "big", "pad": padding}))
            err = await receive_json(ws)
            assert err["code"] == "too_large" and "2000000" in err["message"] and err["reply_to"] == "big"
            await ws.send(json.dumps({"type": "ping", "id": "p2"}))
            assert (await receive_json(ws))["reply_to"] == "p2"
            await ws.close()

    run(main())


def test_default_limit_accepts_a_ten_megabyte_observation(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            link = backend.hub.link
            assert link is not None
            pending = asyncio.create_task(link.request(Observe(tab_id=1), Observation))
            command = await receive_json(ws)
            nodes = [
                {"nodeId": str(i), "role": {"type": "role", "value": "StaticText"},
                 "name": {"type": "computedString", "value": f"text {i} " + "y" * 400}}
                for i in range(25_000)
            ]
            reply = {"type": "observation", "id": "o1", "reply_to": command["id"], "tab_id": 1,
                     "url": "http://x/", "frames": [{"frame_id": "F", "nodes": nodes}]}
            raw = json.dumps(reply)
            assert len(raw) > 10_000_000
            await ws.send(raw)
            observation = await pending
            assert len(observation.frames[0].nodes) == 25_000
            await ws.close()

    run(main())


def test_version_mismatch_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await open_socket(backend)
            await ws.send(json.dumps({"type": "hello", "id": "h", "protocol_version": 99, "nonce": new_nonce()}))
            err = await receive_json(ws)
            assert err["code"] == "version_mismatch"
            assert f"backend speaks version {PROTOCOL_VERSION}" in err["message"] and "99" in err["message"]
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
            assert backend.hub.link is None

    run(main())


def test_first_message_must_be_hello(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await open_socket(backend)
            await ws.send(json.dumps({"type": "ping", "id": "p"}))
            err = await receive_json(ws)
            assert err["code"] == "invalid_message" and "hello" in err["message"]
            with pytest.raises(ConnectionClosed):
                await ws.recv()

    run(main())


def test_replies_are_correlated_by_id_even_out_of_order(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            link = backend.hub.link
            assert link is not None
            first = asyncio.create_task(link.request(ListTabs(), Tabs))
            second = asyncio.create_task(link.request(ListTabs(), Tabs))
            a, b = await receive_json(ws), await receive_json(ws)
            for command, tab_id in ((b, 2), (a, 1)):
                await ws.send(json.dumps({"type": "tabs", "id": f"r{tab_id}", "reply_to": command["id"],
                                          "tabs": [{"tab_id": tab_id, "index": 0}]}))
            assert (await first).tabs[0].tab_id == 1
            assert (await second).tabs[0].tab_id == 2
            await ws.close()

    run(main())


def test_errors_and_silence_fail_the_waiting_request(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            link = backend.hub.link
            assert link is not None
            pending = asyncio.create_task(link.request(Observe(tab_id=5), Observation))
            command = await receive_json(ws)
            await ws.send(json.dumps({"type": "error", "id": "e", "reply_to": command["id"],
                                      "code": "tab_not_handed_over", "message": "tab 5 is not handed over"}))
            with pytest.raises(Exception, match="tab 5 is not handed over"):
                await pending

            pending = asyncio.create_task(link.request(Observe(tab_id=5), Observation))
            command = await receive_json(ws)
            await ws.send(json.dumps({"type": "observation", "id": "o", "reply_to": command["id"], "tab_id": 5}))
            with pytest.raises(Exception, match="reply was invalid: .*url"):
                await pending

            with pytest.raises(LinkTimeout, match="no answer to observe"):
                await link.request(Observe(tab_id=5), Observation, timeout=0.2)
            await ws.close()

    run(main())


def test_keepalive_pings_arrive_as_data_messages(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path, keepalive_seconds=0.2) as backend:
            ws = await paired_socket(backend)
            msg = json.loads(await asyncio.wait_for(ws.recv(), 2))
            assert msg["type"] == "ping"
            await ws.close()

    run(main())


def test_reconnect_fails_pending_requests_and_the_new_connection_takes_over(tmp_path: Path) -> None:
    async def main() -> None:
        async with running_backend(tmp_path) as backend:
            ws = await paired_socket(backend)
            old = backend.hub.link
            assert old is not None
            pending = asyncio.create_task(old.request(ListTabs(), Tabs))
            await receive_json(ws)
            await ws.close()
            with pytest.raises(LinkClosed):
                await pending

            ws2 = await paired_socket(backend)
            new = await backend.hub.wait_link(5)
            assert new is not old
            reply_task = asyncio.create_task(new.request(ListTabs(), Tabs))
            command = await receive_json(ws2)
            await ws2.send(json.dumps({"type": "tabs", "id": "t", "reply_to": command["id"], "tabs": []}))
            assert (await reply_task).tabs == []

            # A third connection replaces the second one, which is told why.
            ws3 = await paired_socket(backend)
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await ws2.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4003
            await ws3.close()

    run(main())


# The backend in its own process with 64 file descriptors, for the test below: prints its port, serves for a while.
_LOW_LIMIT_BACKEND = """
import asyncio, logging, resource, sys
from pathlib import Path
from branchwise.config import ServerConfig
from branchwise.link import ExtensionHub
from branchwise.server import BackendServer

resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
logging.basicConfig(level=logging.INFO, stream=sys.stderr)

async def main():
    config = ServerConfig(port=0, data_dir=Path(sys.argv[1]), request_head_timeout_seconds=3.0)
    async with BackendServer(config, ExtensionHub(config), "t") as server:
        print(server.port, flush=True)
        await asyncio.sleep(float(sys.argv[2]))

asyncio.run(main())
"""


def test_running_out_of_descriptors_is_logged_once_a_while_not_once_per_connection(tmp_path: Path) -> None:
    backend = subprocess.Popen([sys.executable, "-c", _LOW_LIMIT_BACKEND, str(tmp_path), "6"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert backend.stdout is not None
        port = int(backend.stdout.readline())
        # More silent connections than the backend has descriptors; it cannot accept the rest for ~3 s.
        silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(120)]
        time.sleep(2.5)
        _, log = backend.communicate(timeout=30)
        for sock in silent:
            sock.close()
    finally:
        backend.kill()
    reports = log.count("out of system resource")
    assert reports >= 1, log[-2000:]  # the limit was reached, and said so
    assert reports <= 3, f"{reports} reports, {len(log):,} bytes of log"
