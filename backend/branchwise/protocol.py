"""The wire contract between the extension and the backend.

Every message is a JSON object with `type` and `id`; answers carry `reply_to`. These pydantic models are the single
source of truth: `protocol/schema/` is generated from them and a test fails when the two drift apart.
AX nodes keep CDP's own camelCase field names so the extension can forward `Accessibility.getFullAXTree` untouched.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .gcpause import cyclic_gc_paused

PROTOCOL_VERSION = 3
SUBPROTOCOL = "branchwise"
TOKEN_SUBPROTOCOL_PREFIX = "bw-token."


def new_id() -> str:
    return uuid.uuid4().hex[:12]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Envelope(Model):
    id: str = Field(default_factory=new_id, min_length=1, max_length=64)
    reply_to: str | None = Field(default=None, max_length=64)


# ---------------------------------------------------------------------------------------------------------------------
# Shared payload types


class AXValue(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: str
    value: Any = None


class AXProperty(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str
    value: AXValue


class AXNode(BaseModel):
    """One node of CDP `Accessibility.getFullAXTree`, as Chromium sends it."""

    model_config = ConfigDict(extra="ignore")
    nodeId: str
    ignored: bool = False
    role: AXValue | None = None
    name: AXValue | None = None
    description: AXValue | None = None
    value: AXValue | None = None
    properties: list[AXProperty] = []
    childIds: list[str] = []
    parentId: str | None = None
    backendDOMNodeId: int | None = None
    frameId: str | None = None


class FrameTree(Model):
    """The AX tree of one frame. `owner_node_id` is the iframe element hosting it in its parent frame."""

    frame_id: str
    url: str = ""
    parent_frame_id: str | None = None
    owner_node_id: int | None = None
    # The CDP target that owns this frame's DOM: None for the tab itself, else the frame id of an out-of-process
    # iframe root. Node ids are only unique within one target.
    target: str | None = None
    nodes: list[AXNode]
    # Password and payment-card inputs of this target (by backendDOMNodeId): the AX tree cannot tell an
    # `autocomplete="cc-number"` field under a neutral label, so the extension asks the DOM and the backend masks them.
    sensitive_node_ids: list[int] = []


class TabInfo(Model):
    tab_id: int
    index: int
    title: str = ""
    url: str = ""
    active: bool = False


class ScrollInfo(Model):
    x: float = 0
    y: float = 0
    viewport_width: float = 0
    viewport_height: float = 0
    page_width: float = 0
    page_height: float = 0


class NavigationInfo(Model):
    """Where the tab stands in its history and how its document loaded: the planner's dynamic action space needs it
    (go_back only with a page behind, a goto target that answers 4xx/5xx or fails to load is not worth a branch)."""

    # None: not known (the planner then forbids nothing).
    can_go_back: bool | None = None
    can_go_forward: bool | None = None
    http_status: int | None = Field(default=None, description="The main document's HTTP status, when the page knows it")
    error_page: bool = Field(default=False, description="Chromium shows its own error page (no connection, bad host...)")


class DialogInfo(Model):
    dialog_type: Literal["alert", "confirm", "prompt", "beforeunload"]
    message: str = ""
    default_prompt: str = ""
    url: str = ""


class ElementRef(Model):
    """Where the extension finds an element: a DOM backend node id within a CDP target (None = the tab's own)."""

    backend_node_id: int
    target: str | None = None


# ---------------------------------------------------------------------------------------------------------------------
# Browser-level actions the extension executes (ids are already resolved by the backend)


class ClickCmd(Model):
    kind: Literal["click"] = "click"
    element: ElementRef


class HoverCmd(Model):
    kind: Literal["hover"] = "hover"
    element: ElementRef


class TypeCmd(Model):
    kind: Literal["type"] = "type"
    element: ElementRef
    text: str
    press_enter: bool = False
    clear: bool = True


class PressCmd(Model):
    kind: Literal["press"] = "press"
    keys: str = Field(description="Key combination such as 'Enter', 'Control+a', 'Shift+Tab'")


class ScrollCmd(Model):
    kind: Literal["scroll"] = "scroll"
    direction: Literal["up", "down"]


class SelectCmd(Model):
    kind: Literal["select"] = "select"
    element: ElementRef
    values: list[str] = Field(min_length=1, description="Option labels or values")


class GotoCmd(Model):
    kind: Literal["goto"] = "goto"
    url: str


class GoBackCmd(Model):
    kind: Literal["go_back"] = "go_back"


class GoForwardCmd(Model):
    kind: Literal["go_forward"] = "go_forward"


class DialogCmd(Model):
    kind: Literal["dialog"] = "dialog"
    accept: bool
    prompt_text: str | None = None


BrowserCmd = Annotated[
    Union[
        ClickCmd, HoverCmd, TypeCmd, PressCmd, ScrollCmd, SelectCmd, GotoCmd, GoBackCmd, GoForwardCmd, DialogCmd
    ],
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------------------------------------------------------------
# Handshake and housekeeping


class Hello(Envelope):
    """Extension → backend, first message after connecting."""

    type: Literal["hello"] = "hello"
    protocol_version: int
    extension_version: str = ""
    user_agent: str = ""


class HelloOk(Envelope):
    type: Literal["hello_ok"] = "hello_ok"
    protocol_version: int = PROTOCOL_VERSION
    backend_version: str


class Ping(Envelope):
    """Data keepalive (either direction): the MV3 worker only stays up while data flows."""

    type: Literal["ping"] = "ping"


class Pong(Envelope):
    type: Literal["pong"] = "pong"


class Error(Envelope):
    type: Literal["error"] = "error"
    code: Literal[
        "invalid_message",
        "too_large",
        "version_mismatch",
        "not_paired",
        "unknown_command",
        "tab_not_handed_over",
        "tab_closed",
        "cdp_error",
        "timeout",
        "internal",
    ]
    message: str


# ---------------------------------------------------------------------------------------------------------------------
# Backend → extension commands and their replies


class ListTabs(Envelope):
    type: Literal["list_tabs"] = "list_tabs"


class Tabs(Envelope):
    type: Literal["tabs"] = "tabs"
    tabs: list[TabInfo]


class OpenTab(Envelope):
    """Open a tab (handed over to Branchwise at once) and wait for its first load."""

    type: Literal["open_tab"] = "open_tab"
    url: str
    active: bool = True
    guarded: bool = Field(
        default=False,
        description="Block every mutating request (POST, PUT, PATCH, DELETE) from this tab, from its first load on: "
        "used for throw-away tabs (speculative replay, reload checks)",
    )


class TabOpened(Envelope):
    type: Literal["tab_opened"] = "tab_opened"
    tab: TabInfo


class CloseTab(Envelope):
    type: Literal["close_tab"] = "close_tab"
    tab_id: int


class GuardTab(Envelope):
    """Turn the mutating-request block of a tab on or off; a committed speculative tab becomes a normal working tab."""

    type: Literal["guard_tab"] = "guard_tab"
    tab_id: int
    guarded: bool


class ActivateTab(Envelope):
    type: Literal["activate_tab"] = "activate_tab"
    tab_id: int


class Done(Envelope):
    """Plain acknowledgement of a command that returns nothing."""

    type: Literal["done"] = "done"


class Observe(Envelope):
    type: Literal["observe"] = "observe"
    tab_id: int
    include_frames: bool = True


class Observation(Envelope):
    type: Literal["observation"] = "observation"
    tab_id: int
    url: str
    title: str = ""
    tabs: list[TabInfo] = []
    scroll: ScrollInfo = ScrollInfo()
    navigation: NavigationInfo = NavigationInfo()
    dialog: DialogInfo | None = None
    frames: list[FrameTree]
    capture_ms: float = 0


class Act(Envelope):
    type: Literal["act"] = "act"
    tab_id: int
    action: BrowserCmd


class ActResult(Envelope):
    type: Literal["act_result"] = "act_result"
    ok: bool
    error: str = ""
    url: str = ""
    dialog: DialogInfo | None = None


class RunUpdate(Envelope):
    """Backend → extension: what a run is doing, for the side panel."""

    type: Literal["run_update"] = "run_update"
    run_id: str
    task: str = ""
    status: Literal["started", "step", "finished", "failed", "stopped"]
    step: int = 0
    url: str = ""
    thought: str = ""
    action: str = ""
    answer: str = ""
    message: str = ""
    scripted_model: bool = False


class TreeNodeView(Model):
    id: int
    parent: int | None = None
    action: str = ""
    url: str = ""
    value: float | None = None
    reward: float | None = None
    action_class: str | None = None
    status: Literal["open", "expanded", "terminal", "dead", "invalid"] = "open"
    checkpoint: bool | None = None


class FrontierItemView(Model):
    node: int
    action: str
    action_class: str
    reward: float


class BacktrackView(Model):
    source: int
    target: int
    mode: Literal["speculative", "naive"]
    outcome: Literal["committed", "aborted", "failed"]
    reason: str = ""


class TreeUpdate(Envelope):
    """Backend → extension: the whole search tree of a run, for the side panel to draw (small: tens of nodes)."""

    type: Literal["tree_update"] = "tree_update"
    run_id: str
    strategy: str
    nodes: list[TreeNodeView]
    current: int | None = None
    frontier: list[FrontierItemView] = []
    backtracks: list[BacktrackView] = []
    trajectory: list[int] = Field(default=[], description="The chosen path, root first, once the run has one")


# ---------------------------------------------------------------------------------------------------------------------
# Extension → backend events and user commands


class NetworkRequest(Envelope):
    type: Literal["network_request"] = "network_request"
    tab_id: int
    request_id: str
    method: str
    url: str
    resource_type: str = ""
    time: float = Field(description="Milliseconds since the epoch")


class TabEvent(Envelope):
    type: Literal["tab_event"] = "tab_event"
    tab_id: int
    event: Literal["created", "updated", "closed", "activated"]
    url: str = ""
    opener_tab_id: int | None = None


class DialogEvent(Envelope):
    type: Literal["dialog_event"] = "dialog_event"
    tab_id: int
    dialog: DialogInfo


class StartRun(Envelope):
    """From the side panel: start a run on a tab the user just handed over."""

    type: Literal["start_run"] = "start_run"
    task: str = Field(min_length=1, max_length=4000)
    tab_id: int


class RunStarted(Envelope):
    type: Literal["run_started"] = "run_started"
    run_id: str


class StopRun(Envelope):
    type: Literal["stop_run"] = "stop_run"
    run_id: str


# ---------------------------------------------------------------------------------------------------------------------

ToExtension = Union[
    HelloOk, Ping, Pong, Error, ListTabs, OpenTab, CloseTab, GuardTab, ActivateTab, Observe, Act, RunUpdate,
    TreeUpdate, RunStarted, Done,
]
FromExtension = Union[
    Hello, Ping, Pong, Error, Tabs, TabOpened, Done, Observation, ActResult, NetworkRequest, TabEvent, DialogEvent,
    StartRun, StopRun,
]

ALL_MESSAGES: tuple[type[Envelope], ...] = (
    Hello, HelloOk, Ping, Pong, Error, ListTabs, Tabs, OpenTab, TabOpened, CloseTab, GuardTab, ActivateTab, Done,
    Observe, Observation, Act, ActResult, RunUpdate, TreeUpdate, NetworkRequest, TabEvent, DialogEvent, StartRun, RunStarted, StopRun,
)

incoming_adapter: TypeAdapter[FromExtension] = TypeAdapter(
    Annotated[FromExtension, Field(discriminator="type")]
)


def parse_incoming(raw: str | bytes) -> FromExtension:
    """Validate one message from the extension; raises pydantic.ValidationError naming the bad field."""
    with cyclic_gc_paused():
        return incoming_adapter.validate_json(raw)


def message_type(model: type[Envelope]) -> str:
    return model.model_fields["type"].default
