#!/usr/bin/env python3
"""Capture fixture pages into `branchwise.protocol.Observation` JSON files, the way the extension observes a tab.

Chromium is started by hand and Selenium attaches to it (docs/platform.md: the launch recipe that never hangs). Pages
are served from tests/fixtures/pages by a local http.server on 127.0.0.1; a second server is reached as `localhost` so
that one page can embed a cross-site iframe, which Chromium puts in its own process and CDP target.

What the capture relies on (measured with Chromium 156):
- `Accessibility.getFullAXTree` without `frameId` returns the main frame only: the `Iframe` node has no children, even
  for a same-origin iframe. Each frame needs its own call with `frameId`.
- A cross-site (out-of-process) iframe is missing from the tab target's `Page.getFrameTree`, and asking the tab target
  for its AX tree fails ("Frame with the given frameId is not found"). It is a target of its own (type "iframe",
  target id == frame id) that must be attached to; `DOM.getFrameOwner` for it still works in the parent target.
- backendDOMNodeIds restart in every target, so ids of an out-of-process frame collide with the tab's.

Usage: .venv/bin/python scripts/capture_axtree.py [--out tests/fixtures/axtree] [NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gzip
import json
import logging
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from websockets.sync.client import ClientConnection, connect

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "backend"))

from branchwise.launcher import ChromiumConfig, launch_chromium  # noqa: E402
from branchwise.protocol import AXNode, FrameTree, Observation, ScrollInfo, TabInfo  # noqa: E402
from branchwise.selenium_attach import attach_selenium  # noqa: E402

log = logging.getLogger("capture_axtree")

PAGES_DIR = REPO / "tests" / "fixtures" / "pages"
DEFAULT_OUT = REPO / "tests" / "fixtures" / "axtree"
PAGE_STATE_JS = """return {
  url: location.href, title: document.title,
  x: window.scrollX, y: window.scrollY, vw: window.innerWidth, vh: window.innerHeight,
  pw: document.documentElement.scrollWidth, ph: document.documentElement.scrollHeight};"""


# ---------------------------------------------------------------------------------------------------------------------
# What to capture


@dataclass(frozen=True)
class Servers:
    main: str  # http://127.0.0.1:<port>
    other_site: str  # http://localhost:<port>: another site, so Chromium isolates its frames


@dataclass(frozen=True)
class Plan:
    name: str
    page: str
    query: Callable[[Servers], str] = lambda _servers: ""
    prepare: Callable[[WebDriver], None] | None = None
    gzipped: bool = False
    # Navigate elsewhere first, so a second capture of the same page gets freshly created DOM nodes.
    reload_first: bool = False


def _type_secrets(driver: WebDriver) -> None:
    """Type like a user would, so the captured values are live input rather than markup."""
    driver.find_element(By.ID, "pw").send_keys("hunter2secret")
    driver.find_element(By.ID, "cc").send_keys("4111 1111 1111 1111")


PLANS: tuple[Plan, ...] = (
    # First, while the tab's renderer numbers its nodes from 1: the iframe's own numbering then collides with it.
    Plan("iframe_cross_origin", "iframe_cross.html", query=lambda s: f"?child={s.other_site}/iframe_child.html"),
    Plan("shop_home", "shop_home.html"),
    Plan("form", "form.html", prepare=_type_secrets),
    Plan("form_second", "form.html", prepare=_type_secrets, reload_first=True),
    Plan("iframe_same_origin", "iframe_host.html"),
    Plan("shadow_dom", "shadow.html"),
    Plan("hidden", "hidden.html"),
    Plan("repeated_text", "repeated_text.html"),
    Plan("pruning", "pruning.html"),
    Plan("large", "large.html", gzipped=True),
)


# ---------------------------------------------------------------------------------------------------------------------
# CDP sessions: the tab through Selenium, out-of-process iframes through their own DevTools WebSocket


class CdpSession(Protocol):
    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]: ...


@dataclass
class SeleniumSession:
    driver: WebDriver

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.driver.execute_cdp_cmd(method, params or {})
        return result


@dataclass
class SocketSession:
    ws: ClientConnection
    _next_id: int = 0

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        self.ws.send(json.dumps({"id": self._next_id, "method": method, "params": params or {}}))
        while True:  # events may arrive before the answer
            message = json.loads(self.ws.recv())
            if message.get("id") != self._next_id:
                continue
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            result: dict[str, Any] = message["result"]
            return result


@dataclass(frozen=True)
class TargetInfo:
    target_id: str
    parent_id: str | None
    kind: str
    ws_url: str


def list_targets(devtools_port: int) -> list[TargetInfo]:
    with urllib.request.urlopen(f"http://127.0.0.1:{devtools_port}/json/list", timeout=10) as answer:
        raw = json.load(answer)
    return [TargetInfo(t["id"], t.get("parentId"), t["type"], t["webSocketDebuggerUrl"]) for t in raw]


# ---------------------------------------------------------------------------------------------------------------------
# Frames


@dataclass
class FrameSpec:
    frame_id: str
    url: str
    parent_frame_id: str | None


def walk_frame_tree(tree: dict[str, Any]) -> Iterator[FrameSpec]:
    frame = tree["frame"]
    yield FrameSpec(frame["id"], frame.get("url", ""), frame.get("parentId"))
    for child in tree.get("childFrames", []):
        yield from walk_frame_tree(child)


def frame_owner(session: CdpSession, frame_id: str) -> int | None:
    try:
        owner: int = session.send("DOM.getFrameOwner", {"frameId": frame_id})["backendNodeId"]
        return owner
    except Exception as error:  # a frame torn down mid-capture has no owner; keep the rest of the capture
        log.warning("no owner for frame %s: %s", frame_id, error)
        return None


def capture_target(session: CdpSession, target: str | None, parent: CdpSession | None) -> list[FrameTree]:
    """All frames living in one CDP target. `parent` is the session holding the owner of this target's root frame."""
    session.send("DOM.getDocument", {"depth": 0})  # DOM.getFrameOwner needs the DOM agent's document
    frames: list[FrameTree] = []
    for index, spec in enumerate(walk_frame_tree(session.send("Page.getFrameTree")["frameTree"])):
        owner: int | None = None
        if index > 0:
            owner = frame_owner(session, spec.frame_id)
        elif parent is not None:
            parent.send("DOM.getDocument", {"depth": 0})
            owner = frame_owner(parent, spec.frame_id)
        nodes = session.send("Accessibility.getFullAXTree", {"frameId": spec.frame_id})["nodes"]
        frames.append(FrameTree(
            frame_id=spec.frame_id, url=spec.url, parent_frame_id=spec.parent_frame_id, owner_node_id=owner,
            target=target, nodes=[AXNode.model_validate(node) for node in nodes],
        ))
    if frames:
        frames[0].clickable_node_ids = clickable_nodes(session)
    return frames


def clickable_nodes(session: CdpSession) -> list[int]:
    """The elements of one target that respond to clicks, as the extension reads them (extension/lib/observe.js)."""
    documents = session.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})["documents"]
    return [doc["nodes"]["backendNodeId"][index]
            for doc in documents for index in doc["nodes"].get("isClickable", {}).get("index", [])]


def capture_out_of_process(
    devtools_port: int, page_target: str, sessions: dict[str, CdpSession], stack: ExitStack
) -> list[FrameTree]:
    """Frames of cross-site iframes, breadth first so a parent target is attached before its children."""
    frames: list[FrameTree] = []
    targets = [t for t in list_targets(devtools_port) if t.kind == "iframe"]
    pending = [t for t in targets if t.parent_id == page_target]
    while pending:
        info = pending.pop(0)
        session = SocketSession(stack.enter_context(connect(info.ws_url, max_size=None, open_timeout=10)))
        sessions[info.target_id] = session
        frames.extend(capture_target(session, info.target_id, sessions[info.parent_id or page_target]))
        pending.extend(t for t in targets if t.parent_id == info.target_id)
    return frames


# ---------------------------------------------------------------------------------------------------------------------
# Browser and servers


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)


@contextmanager
def serve_pages() -> Iterator[Servers]:
    handler = functools.partial(QuietHandler, directory=str(PAGES_DIR))
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Servers(f"http://127.0.0.1:{servers[0].server_port}", f"http://localhost:{servers[1].server_port}")
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


@dataclass
class Browser:
    driver: WebDriver
    devtools_port: int


@contextmanager
def launch_browser() -> Iterator[Browser]:
    """Chromium from the product's own launcher (the extension loads too, unpaired and idle), with Selenium attached."""
    loop = asyncio.new_event_loop()
    chromium = loop.run_until_complete(launch_chromium(ChromiumConfig(headless=True)))
    try:
        driver = attach_selenium(chromium.debugger_address)
        try:
            yield Browser(driver, chromium.devtools_port)
        finally:
            driver.quit()
    finally:
        loop.run_until_complete(chromium.close())
        loop.close()


def current_target_id(driver: WebDriver) -> str:
    target_id: str = driver.execute_cdp_cmd("Target.getTargetInfo", {})["targetInfo"]["targetId"]
    return target_id


def capture(browser: Browser, plan: Plan, servers: Servers) -> Observation:
    driver = browser.driver
    if plan.reload_first:
        driver.get("about:blank")
    driver.get(f"{servers.main}/{plan.page}{plan.query(servers)}")
    if plan.prepare:
        plan.prepare(driver)
    started = time.perf_counter()
    state = driver.execute_script(PAGE_STATE_JS)
    page_session = SeleniumSession(driver)
    frames = capture_target(page_session, None, None)
    page_target = current_target_id(driver)
    with ExitStack() as sockets:
        frames += capture_out_of_process(browser.devtools_port, page_target, {page_target: page_session}, sockets)
    capture_ms = (time.perf_counter() - started) * 1000
    tab = TabInfo(tab_id=1, index=0, title=state["title"], url=state["url"], active=True)
    return Observation(
        id=f"fixture-{plan.name}", tab_id=tab.tab_id, url=state["url"], title=state["title"], tabs=[tab],
        scroll=ScrollInfo(
            x=state["x"], y=state["y"], viewport_width=state["vw"], viewport_height=state["vh"],
            page_width=state["pw"], page_height=state["ph"],
        ),
        frames=frames, capture_ms=round(capture_ms, 1),
    )


def save(observation: Observation, out_dir: Path, plan: Plan) -> Path:
    data = observation.model_dump_json(exclude_defaults=False).encode()
    if plan.gzipped:
        path = out_dir / f"{plan.name}.json.gz"
        # mtime=0 keeps re-captures byte-identical when nothing changed
        path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    else:
        path = out_dir / f"{plan.name}.json"
        path.write_text(json.dumps(json.loads(data), indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="plans to capture (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    wanted = set(args.names) or {plan.name for plan in PLANS}
    unknown = wanted - {plan.name for plan in PLANS}
    if unknown:
        parser.error(f"unknown plans: {', '.join(sorted(unknown))}")
    args.out.mkdir(parents=True, exist_ok=True)
    with serve_pages() as servers, launch_browser() as browser:
        for plan in PLANS:
            if plan.name not in wanted:
                continue
            observation = capture(browser, plan, servers)
            path = save(observation, args.out, plan)
            nodes = sum(len(frame.nodes) for frame in observation.frames)
            log.info("%s: %d frames, %d AX nodes, %.0f ms -> %s", plan.name, len(observation.frames), nodes,
                     observation.capture_ms, os.path.relpath(path, REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
