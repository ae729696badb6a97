"""Generates `protocol/`: a JSON Schema per message from the pydantic models, and one example of each message."""

from __future__ import annotations

import json
from pathlib import Path

from .protocol import (
    ALL_MESSAGES,
    PROTOCOL_VERSION,
    Act,
    ActivateTab,
    ActResult,
    AllowedRequest,
    Auth,
    AXNode,
    AXProperty,
    AXValue,
    BacktrackView,
    ClickCmd,
    CloseTab,
    ConfirmAnswer,
    ConfirmClosed,
    ConfirmRequest,
    DemoList,
    DemoSummary,
    DialogEvent,
    DialogInfo,
    Done,
    ElementFacts,
    ElementFactsReply,
    ElementRef,
    Envelope,
    Error,
    FormFacts,
    FrameTree,
    FrontierItemView,
    GateTab,
    GuardTab,
    Hello,
    HelloOk,
    Inspect,
    LinkFacts,
    ListDemos,
    ListTabs,
    NavigationInfo,
    NetworkRequest,
    Observation,
    Observe,
    OpenTab,
    PageValue,
    Ping,
    Pong,
    ReadPage,
    ReleaseRequest,
    RequestHeld,
    RequestSent,
    ResumeRun,
    RunStarted,
    RunUpdate,
    ScrollInfo,
    StartRun,
    StopRun,
    TabEvent,
    TabInfo,
    TabOpened,
    Tabs,
    TreeNodeView,
    TreeUpdate,
    message_type,
)

SHOP = "http://127.0.0.1:8800"
TAB = TabInfo(tab_id=1842, index=0, title="Acme Outfitters", url=f"{SHOP}/", active=True)


def _node(node_id: str, role: str, name: str, backend: int, children: list[str], parent: str | None) -> AXNode:
    return AXNode(
        nodeId=node_id, role=AXValue(type="role", value=role), name=AXValue(type="computedString", value=name),
        childIds=children, parentId=parent, backendDOMNodeId=backend,
        properties=[AXProperty(name="focusable", value=AXValue(type="booleanOrUndefined", value=True))]
        if role == "link" else [],
    )


EXAMPLES: list[Envelope] = [
    Hello(id="a1", protocol_version=PROTOCOL_VERSION, nonce="q0Yt3Vb6Kx8w2LmZ4Rn7Pd1Hs9Jc5Fe",
          extension_version="0.1.0", user_agent="Mozilla/5.0 ... Chrome/156.0"),
    HelloOk(id="b1", reply_to="a1", backend_version="0.1.0", nonce="Tg2Wm8Xc4Ka6Nb0Qr3Vd7Lz1Py5Hs9Je",
            proof="3f5c0a8e9b1d2c4f6a7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b9a"),
    Auth(id="a1b", reply_to="b1", proof="9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b"),
    Ping(id="b2"),
    Pong(id="a2", reply_to="b2"),
    Error(id="b3", reply_to="a9", code="invalid_message",
          message="network_request.tab_id: Input should be a valid integer"),
    ListTabs(id="b4"),
    Tabs(id="a3", reply_to="b4", tabs=[TAB]),
    OpenTab(id="b5", url=f"{SHOP}/", active=True),
    TabOpened(id="a4", reply_to="b5", tab=TAB),
    CloseTab(id="b6", tab_id=1843),
    GuardTab(id="b12", tab_id=1843, guarded=False),
    ActivateTab(id="b7", tab_id=1842),
    Done(id="a5", reply_to="b7"),
    Observe(id="b8", tab_id=1842),
    Observation(
        id="a6", reply_to="b8", tab_id=1842, url=f"{SHOP}/", title="Acme Outfitters", tabs=[TAB],
        scroll=ScrollInfo(x=0, y=0, viewport_width=1280, viewport_height=900, page_width=1280, page_height=2400),
        navigation=NavigationInfo(can_go_back=True, http_status=200),
        frames=[FrameTree(frame_id="9A1F", url=f"{SHOP}/", nodes=[
            _node("1", "RootWebArea", "Acme Outfitters", 3, ["2"], None),
            _node("2", "link", "Garden", 41, [], "1"),
        ])],
        capture_ms=84.5,
    ),
    # The user approved this click: its form's POST to /cart/add may pass the network gate, once.
    Act(id="b9", tab_id=1842, action=ClickCmd(element=ElementRef(backend_node_id=57)),
        allow=[AllowedRequest(method="POST", url=f"{SHOP}/cart/add")]),
    ActResult(id="a7", reply_to="b9", ok=True, url=f"{SHOP}/cart"),
    Inspect(id="b14", tab_id=1842, elements=[ElementRef(backend_node_id=41), ElementRef(backend_node_id=57),
                                             ElementRef(backend_node_id=12, target="C0FFEE12")]),
    ReadPage(id="b21", tab_id=1907, expression="document.querySelector('.cart-count').outerText",
             prep=["document.querySelector('details.summary').open = true"]),
    PageValue(id="a19", reply_to="b21", ok=True, value="3"),
    ElementFactsReply(id="a13", reply_to="b14", facts=[
        ElementFacts(found=True, tag="a", link=LinkFacts(href=f"{SHOP}/category/garden", raw_href="/category/garden"),
                     document_url=f"{SHOP}/"),
        ElementFacts(found=True, tag="button", type="submit",
                     form=FormFacts(method="post", action=f"{SHOP}/cart/add", submits=True, submit_buttons=1,
                                    submitter_label="Add to cart"),
                     document_url=f"{SHOP}/product/7"),
        ElementFacts(found=False),
    ]),
    RunUpdate(id="b10", run_id="r42", task="Find the cheapest garden product", status="step", step=1,
              url=f"{SHOP}/", thought="The Garden category should list it.", action="click [41]"),
    TreeUpdate(
        id="b13", run_id="r42", strategy="best_first",
        nodes=[
            TreeNodeView(id=0, url=f"{SHOP}/", value=0.5, status="expanded", checkpoint=True),
            TreeNodeView(id=1, parent=0, action="click [41] Garden", url=f"{SHOP}/category/garden", value=0.72,
                         reward=0.1, action_class="safe", status="expanded", checkpoint=True),
            TreeNodeView(id=2, parent=0, action="click [7] Delete account", value=-1.0, reward=-1.0,
                         action_class="destructive", status="dead", note="failed: the button is disabled"),
        ],
        current=1,
        frontier=[FrontierItemView(node=1, action="click [14] Sort by price", action_class="safe", reward=0.2)],
        backtracks=[BacktrackView(source=2, target=0, mode="speculative", outcome="aborted",
                                  reason="the replay reached a different page")],
    ),
    NetworkRequest(id="a8", tab_id=1842, request_id="5310", method="POST", url=f"{SHOP}/cart/add",
                   resource_type="main_frame", time=1763750000123.4),
    GateTab(id="b20", tab_id=1842, on=True, hold_timeout_seconds=150),
    RequestHeld(id="a20", tab_id=1842, hold_id="h5f01c2", method="POST", url=f"{SHOP}/api/newsletter",
                resource_type="Fetch", initiator_url=f"{SHOP}/product/7", body_bytes=42),
    ReleaseRequest(id="b21", hold_id="h5f01c2", allow=False),
    RequestSent(id="a21", tab_id=1842, method="POST", url=f"{SHOP}/cart/add",
                allowed=AllowedRequest(method="POST", url=f"{SHOP}/cart/add")),
    TabEvent(id="a9", tab_id=1843, event="created", url=f"{SHOP}/help", opener_tab_id=1842),
    DialogEvent(id="a10", tab_id=1842, dialog=DialogInfo(dialog_type="confirm", message="Remove this item?",
                                                          url=f"{SHOP}/cart")),
    StartRun(id="a11", task="Find the cheapest garden product and tell me its price", tab_id=1842),
    RunStarted(id="b11", reply_to="a11", run_id="r42"),
    StopRun(id="a12", run_id="r42"),
    ResumeRun(id="a31", run_id="r41"),
    ListDemos(id="a32", url=f"{SHOP}/category/garden"),
    DemoList(id="b32", reply_to="a32", site="127.0.0.1:8800", demos=[
        DemoSummary(demo_id=7, instruction="Find the cheapest product in the Garden category", score=5, steps=4,
                    persona="a shopper comparing prices before buying a gift")]),
    ConfirmRequest(id="b15", run_id="r42", approval_id="ap7f3c", nonce="Qm9uY2UtZXhhbXBsZS0xMjM", kind="action",
                   tab_id=1842, action_text="click [57]", url=f"{SHOP}/product/7",
                   element_label="button 'Add to cart'", element=ElementRef(backend_node_id=57),
                   reasons=["the button 'Add to cart' submits a POST form to /cart/add"], timeout_s=120,
                   sends=[AllowedRequest(method="POST", url=f"{SHOP}/cart/add")]),
    ConfirmAnswer(id="a14", approval_id="ap7f3c", nonce="Qm9uY2UtZXhhbXBsZS0xMjM", approved=True),
    ConfirmClosed(id="b16", approval_id="ap7f3c", outcome="approved"),
]


def _dump(obj: object) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def generated_files() -> dict[str, str]:
    """Relative path → content of every generated file under protocol/."""
    files: dict[str, str] = {}
    for model in ALL_MESSAGES:
        files[f"schema/{message_type(model)}.json"] = _dump(model.model_json_schema())
    for example in EXAMPLES:
        files[f"examples/{example.type}.json"] = _dump(example.model_dump(mode="json", exclude_none=True))
    return files


def write_schema(root: Path) -> list[Path]:
    written = []
    for relative, content in generated_files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        written.append(path)
    return written
