"""One live connection to the extension: handshake, validation, request/reply correlation, keepalive.

The extension is the WebSocket client; the backend sends it commands and awaits the correlated replies. Anything the
extension sends on its own (network requests, tab events, dialogs, user commands) goes to the hub's handlers.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketDisconnect

from . import __version__
from .config import ServerConfig
from .pairing import new_nonce, proof, tokens_match
from .protocol import (
    Auth,
    ConfirmAnswer,
    DemoList,
    DialogEvent,
    Envelope,
    Error,
    FromExtension,
    Hello,
    HelloOk,
    ListDemos,
    NetworkRequest,
    Ping,
    Pong,
    RequestHeld,
    RequestSent,
    ResumeRun,
    RunStarted,
    StartRun,
    StopRun,
    TabEvent,
    parse_incoming,
)

log = logging.getLogger(__name__)

R = TypeVar("R", bound=Envelope)

HELLO_TIMEOUT_SECONDS = 10.0
# Above this, an invalid message's id is looked for near its start instead of parsing the whole text again.
PEEK_PARSE_LIMIT = 1_000_000
CLOSE_VERSION_MISMATCH = 4001
CLOSE_NO_HELLO = 4002
CLOSE_REPLACED = 4003
CLOSE_NOT_PAIRED = 4004


class LinkClosed(Exception):
    """The extension disconnected while a command was in flight."""


class ExtensionError(Exception):
    """The extension answered a command with an error."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class LinkTimeout(ExtensionError):
    def __init__(self, message: str) -> None:
        super().__init__("timeout", message)


class RunRefused(Exception):
    """The backend will not start or resume the run the side panel asked for; the message says why."""


BrowserEvent = NetworkRequest | TabEvent | DialogEvent | RequestHeld | RequestSent


class LinkHandlers(Protocol):
    """What the link hands upward: events and the side panel's commands."""

    def on_event(self, event: BrowserEvent) -> None: ...

    async def on_start_run(self, message: StartRun) -> str: ...

    async def on_stop_run(self, message: StopRun) -> None: ...

    async def on_resume_run(self, message: ResumeRun) -> str: ...

    async def on_list_demos(self, message: ListDemos) -> DemoList: ...

    def on_confirm_answer(self, message: ConfirmAnswer) -> None: ...


def describe_validation_error(err: ValidationError) -> str:
    """A short message naming the offending fields, e.g. `observation.frames.0.nodes: Field required`."""
    parts = []
    for item in err.errors()[:3]:
        loc = ".".join(str(p) for p in item["loc"])
        parts.append(f"{loc}: {item['msg']}" if loc else item["msg"])
    more = len(err.errors()) - 3
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


# Closing a connection whose peer stopped reading must not hang whoever closes it.
CLOSE_TIMEOUT_SECONDS = 5.0

ID_NEAR_START = re.compile(r'"id"\s*:\s*"([^"\\]{1,64})"')


def _fields(raw: str) -> dict[str, Any]:
    """The top-level fields of a message that failed validation; empty when it is no JSON object at all (nested too
    deep for the parser included: any one message gets an error reply, never kills the connection)."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _sendable(value: object) -> str | None:
    """An id that can go back in a reply: a string of at most 64 characters that encodes as UTF-8 (no lone
    surrogate, which no JSON reply could carry)."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def peek_id(raw: str) -> str | None:
    """The `id` of a message that failed validation or is too large to parse, so the error can still be correlated."""
    if len(raw) > PEEK_PARSE_LIMIT:
        match = ID_NEAR_START.search(raw, 0, 4096)
        return match.group(1) if match else None
    return _sendable(_fields(raw).get("id"))


class ExtensionLink:
    def __init__(self, ws: WebSocket, config: ServerConfig, handlers: LinkHandlers, token: str) -> None:
        self._ws = ws
        self._config = config
        self._token = token
        self._handlers = handlers
        self._pending: dict[str, asyncio.Future[FromExtension]] = {}
        self._send_lock = asyncio.Lock()
        self._closed = asyncio.Event()
        self.ready = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.hello: Hello | None = None

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def send(self, message: Envelope) -> None:
        if self.closed:
            raise LinkClosed("the extension is not connected")
        data = message.model_dump_json(exclude_none=True)
        async with self._send_lock:
            try:
                await self._ws.send_text(data)
            except (WebSocketDisconnect, RuntimeError) as exc:
                raise LinkClosed(f"the extension disconnected: {exc}") from exc

    async def request(self, message: Envelope, reply_type: type[R], timeout: float | None = None) -> R:
        """Send a command and wait for the reply that names it in `reply_to`."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[FromExtension] = loop.create_future()
        self._pending[message.id] = future
        wait = timeout if timeout is not None else self._config.request_timeout_seconds
        try:
            await self.send(message)
            reply = await asyncio.wait_for(future, wait)
        except TimeoutError as exc:
            raise LinkTimeout(f"no answer to {message.type} within {wait:.0f} s") from exc
        finally:
            self._pending.pop(message.id, None)
        if isinstance(reply, Error):
            raise ExtensionError(reply.code, reply.message)
        if not isinstance(reply, reply_type):
            raise ExtensionError("invalid_message", f"expected {reply_type.__name__}, got {type(reply).__name__}")
        return reply

    async def run(self) -> None:
        """Handshake, then serve until the socket closes. Never raises on a bad message, nor on a peer that leaves
        halfway through the handshake (an extension reloading, a browser closing)."""
        try:
            try:
                if not await self._handshake():
                    return
            except LinkClosed as exc:
                log.info("the extension went away during the handshake: %s", exc)
                return
            keepalive = asyncio.create_task(self._keepalive())
            self._tasks.add(keepalive)
            try:
                while True:
                    raw = await self._receive()
                    if raw is None:
                        break
                    await self._dispatch(raw)
            finally:
                keepalive.cancel()
        finally:
            self._close_pending()

    async def close(self, code: int, reason: str) -> None:
        """Close the socket; a peer already gone (or one that stopped reading) is only logged: whatever this
        connection's state, closing it must not take down the one that replaces it."""
        self._close_pending()
        try:
            await asyncio.wait_for(self._ws.close(code=code, reason=reason), CLOSE_TIMEOUT_SECONDS)
        except (TimeoutError, RuntimeError, OSError, WebSocketDisconnect) as exc:
            log.info("closing the extension connection (%s) failed: %r", reason, exc)

    # -----------------------------------------------------------------------------------------------------------------

    async def _handshake(self) -> bool:
        """hello (with the extension's nonce) → hello_ok (the backend's proof and nonce) → auth (the extension's
        proof). Either end that cannot prove it holds the pairing token gets nothing run and learns nothing of it."""
        try:
            async with asyncio.timeout(HELLO_TIMEOUT_SECONDS):
                hello = await self._first_message(Hello, "hello")
                if hello is None or not await self._versions_match(hello):
                    return False
                if hello.nonce is None:
                    await self._reply_error(hello.id, "invalid_message", "hello.nonce: Field required")
                    await self.close(CLOSE_NO_HELLO, "hello without a nonce")
                    return False
                ours = new_nonce()
                greeting = HelloOk(reply_to=hello.id, backend_version=__version__,
                                   protocol_version=self._config.protocol_version, nonce=ours,
                                   proof=proof(self._token, "backend", ours, hello.nonce))
                await self.send(greeting)
                auth = await self._first_message(Auth, "auth")
                if auth is None:
                    return False
        except TimeoutError:
            log.warning("extension did not complete the handshake within %.0f s: closing", HELLO_TIMEOUT_SECONDS)
            await self.close(CLOSE_NO_HELLO, "no handshake")
            return False
        if not tokens_match(auth.proof, proof(self._token, "extension", hello.nonce, ours)):
            log.warning("refused a connection whose auth proof does not match the pairing token")
            await self._reply_error(auth.id, "not_paired", "wrong pairing proof: pair the extension with the token "
                                                           "`branchwise serve` printed")
            await self.close(CLOSE_NOT_PAIRED, "not paired")
            return False
        self.hello = hello
        self.ready.set()
        log.info("extension %s connected (protocol %d)", hello.extension_version, hello.protocol_version)
        return True

    async def _first_message(self, expected: type[R], name: str) -> R | None:
        """The next message, which must be `expected`; otherwise an error reply, the socket closed, and None."""
        raw = await self._receive()
        if raw is None:
            return None
        try:
            message = parse_incoming(raw)
        except ValidationError as err:
            await self._reply_error(peek_id(raw), "invalid_message", describe_validation_error(err))
            await self.close(CLOSE_NO_HELLO, f"expected {name}")
            return None
        if not isinstance(message, expected):
            await self._reply_error(message.id, "invalid_message", f"send {name} first, got {message.type}")
            await self.close(CLOSE_NO_HELLO, f"expected {name}")
            return None
        return message

    async def _versions_match(self, message: Hello) -> bool:
        ours = self._config.protocol_version
        if message.protocol_version == ours:
            return True
        older = "the backend" if message.protocol_version > ours else "the extension"
        text = (
            f"protocol version mismatch: the backend speaks version {ours}, the extension "
            f"{message.protocol_version}. Update {older} so both match."
        )
        log.error("refusing extension %s: %s", message.extension_version, text)
        await self._reply_error(message.id, "version_mismatch", text)
        await self.close(CLOSE_VERSION_MISMATCH, "protocol version mismatch")
        return False

    async def _receive(self) -> str | None:
        """Next text frame, or None once the socket is gone. Oversized frames are answered, not fatal."""
        while True:
            try:
                event = await self._ws.receive()
            except (WebSocketDisconnect, RuntimeError):
                self._closed.set()
                return None
            if event["type"] == "websocket.disconnect":
                self._closed.set()
                return None
            raw: str | None = event.get("text")
            if raw is None and event.get("bytes") is not None:
                raw = event["bytes"].decode("utf-8", errors="replace")
            if raw is None:
                continue
            if len(raw) > self._config.max_message_bytes:
                log.warning("message of %d bytes refused (limit %d)", len(raw), self._config.max_message_bytes)
                await self._reply_error(
                    peek_id(raw),
                    "too_large",
                    f"message of {len(raw)} bytes exceeds the limit of {self._config.max_message_bytes} bytes",
                )
                continue
            return raw

    async def _dispatch(self, raw: str) -> None:
        try:
            message = parse_incoming(raw)
        except ValidationError as err:
            reason = describe_validation_error(err)
            log.warning("invalid message from the extension: %s", reason)
            message_id = peek_id(raw)
            await self._reply_error(message_id, "invalid_message", reason)
            # A reply the backend is waiting for must not vanish: fail that request with the reason.
            self._fail_pending_for_invalid(raw, reason)
            return
        if message.reply_to is not None and message.reply_to in self._pending:
            future = self._pending[message.reply_to]
            if not future.done():
                future.set_result(message)
            return
        match message:
            case Ping():
                await self.send(Pong(reply_to=message.id))
            case Pong():
                pass
            case NetworkRequest() | TabEvent() | DialogEvent() | RequestHeld() | RequestSent():
                self._handlers.on_event(message)
            case StartRun():
                self._spawn(self._run_started(message, self._handlers.on_start_run(message), "start the run"))
            case ResumeRun():
                self._spawn(self._run_started(message, self._handlers.on_resume_run(message), "resume the run"))
            case StopRun():
                self._spawn(self._handlers.on_stop_run(message))
            case ListDemos():
                self._spawn(self._demo_list(message))
            case ConfirmAnswer():
                self._handlers.on_confirm_answer(message)
            case Error():
                log.warning("extension reported an error: %s: %s", message.code, message.message)
            case _:
                log.warning("unexpected %s from the extension (reply_to=%s)", message.type, message.reply_to)

    async def _run_started(self, message: StartRun | ResumeRun, starting: Awaitable[str], what: str) -> None:
        try:
            run_id = await starting
        except RunRefused as exc:
            log.warning("did not %s: %s", what, exc)
            await self._reply_error(message.id, "internal", f"could not {what}: {exc}")
            return
        except Exception as exc:  # the panel must hear why, whatever went wrong
            log.exception("could not %s", what)
            await self._reply_error(message.id, "internal", f"could not {what}: {exc}")
            return
        await self.send(RunStarted(reply_to=message.id, run_id=run_id))

    async def _demo_list(self, message: ListDemos) -> None:
        try:
            reply = await self._handlers.on_list_demos(message)
        except Exception as exc:  # the panel shows why instead of waiting
            log.warning("could not list demonstrations: %s", exc)
            await self._reply_error(message.id, "internal", f"could not list what was learnt here: {exc}")
            return
        await self.send(reply.model_copy(update={"reply_to": message.id}))

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _fail_pending_for_invalid(self, raw: str, reason: str) -> None:
        reply_to = _fields(raw).get("reply_to")
        future = self._pending.get(reply_to) if isinstance(reply_to, str) else None
        if future is not None and not future.done():
            future.set_exception(ExtensionError("invalid_message", f"the extension's reply was invalid: {reason}"))

    async def _reply_error(self, reply_to: str | None, code: str, message: str) -> None:
        try:
            await self.send(Error(reply_to=reply_to, code=code, message=message))  # type: ignore[arg-type]
        except LinkClosed:
            pass

    async def _keepalive(self) -> None:
        while not self.closed:
            await asyncio.sleep(self._config.keepalive_seconds)
            try:
                await self.send(Ping())
            except LinkClosed:
                return

    def _close_pending(self) -> None:
        self._closed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(LinkClosed("the extension disconnected"))
        self._pending.clear()
        for task in self._tasks:
            task.cancel()


class ExtensionHub:
    """Holds the current connection (one browser at a time) and lets callers wait for it."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        # Where the backend listens; the server sets it once bound (the config says 0 when the system picks the port).
        self.port = config.port
        self._link: ExtensionLink | None = None
        self._changed = asyncio.Condition()
        self._event_listeners: list[Callable[[BrowserEvent], None]] = []
        self._confirm_listeners: list[Callable[[ConfirmAnswer], None]] = []
        self.start_run_handler: Callable[[StartRun], Awaitable[str]] | None = None
        self.stop_run_handler: Callable[[StopRun], Awaitable[None]] | None = None
        self.resume_run_handler: Callable[[ResumeRun], Awaitable[str]] | None = None
        self.list_demos_handler: Callable[[ListDemos], Awaitable[DemoList]] | None = None
        # Told each time an extension has connected and proved itself (the side panel's runs are offered then).
        self._link_listeners: list[Callable[[], Awaitable[None]]] = []

    @property
    def link(self) -> ExtensionLink | None:
        link = self._link
        return link if link is not None and not link.closed and link.hello is not None else None

    def add_event_listener(self, listener: Callable[[BrowserEvent], None]) -> Callable[[], None]:
        self._event_listeners.append(listener)
        return lambda: self._event_listeners.remove(listener)

    def add_confirm_listener(self, listener: Callable[[ConfirmAnswer], None]) -> Callable[[], None]:
        """Hear the user's answers to confirmation cards; returns the unsubscribe function."""
        self._confirm_listeners.append(listener)
        return lambda: self._confirm_listeners.remove(listener)

    def add_link_listener(self, listener: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        """Hear each new connection once it is ready; returns the unsubscribe function."""
        self._link_listeners.append(listener)
        return lambda: self._link_listeners.remove(listener)

    async def wait_link(self, timeout: float) -> ExtensionLink:
        async def ready() -> ExtensionLink:
            async with self._changed:
                await self._changed.wait_for(lambda: self.link is not None)
                assert self.link is not None
                return self.link

        try:
            return await asyncio.wait_for(ready(), timeout)
        except TimeoutError as exc:
            raise LinkTimeout(
                f"no Branchwise extension connected within {timeout:.0f} s: is the extension installed and paired "
                f"with ws://127.0.0.1:{self.port}/ws?"
            ) from exc

    async def serve(self, ws: WebSocket, token: str) -> None:
        link = ExtensionLink(ws, self.config, self, token)
        run = asyncio.create_task(link.run())
        ready = asyncio.create_task(link.ready.wait())
        await asyncio.wait({run, ready}, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if not link.ready.is_set():
            await run  # never proved it holds the token: it replaces nothing and nobody hears of it
            return
        # Only a connection that proved itself replaces the current one: anyone on this machine can open a socket.
        previous = self._link
        self._link = link
        if previous is not None and not previous.closed:
            log.info("a new extension connection replaces the previous one")
            await previous.close(CLOSE_REPLACED, "replaced by a newer connection")
        await self._notify()
        for listener in list(self._link_listeners):
            link._spawn(listener())
        await run
        await self._notify()
        log.info("extension disconnected")

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # LinkHandlers -----------------------------------------------------------------------------------------------------

    def on_event(self, event: BrowserEvent) -> None:
        for listener in list(self._event_listeners):
            listener(event)

    async def on_start_run(self, message: StartRun) -> str:
        if self.start_run_handler is None:
            raise RuntimeError("this backend does not accept runs from the side panel")
        return await self.start_run_handler(message)

    async def on_stop_run(self, message: StopRun) -> None:
        if self.stop_run_handler is not None:
            await self.stop_run_handler(message)

    async def on_resume_run(self, message: ResumeRun) -> str:
        if self.resume_run_handler is None:
            raise RunRefused("this backend does not resume runs from the side panel")
        return await self.resume_run_handler(message)

    async def on_list_demos(self, message: ListDemos) -> DemoList:
        if self.list_demos_handler is None:
            raise RunRefused("this backend keeps no demonstrations (it has no run store)")
        return await self.list_demos_handler(message)

    def on_confirm_answer(self, message: ConfirmAnswer) -> None:
        if not self._confirm_listeners:
            log.warning("confirmation answer %s arrived but nothing is waiting for one", message.approval_id)
        for listener in list(self._confirm_listeners):
            listener(message)
