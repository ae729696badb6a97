"""The wire contract between the extension and the backend.

Every message is a JSON object with `type` and `id`; answers carry `reply_to`. These pydantic models are the single
source of truth: `protocol/schema/` is generated from them and a test fails when the two drift apart.
AX nodes keep CDP's own camelCase field names so the extension can forward `Accessibility.getFullAXTree` untouched.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .gcpause import cyclic_gc_paused

PROTOCOL_VERSION = 14
SUBPROTOCOL = "branchwise"
# The extension sends at most this many clickable elements a target (extension/lib/observe.js, MAX_CLICKABLE).
MAX_CLICKABLE = 20_000


def new_id() -> str:
    return uuid.uuid4().hex[:12]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Envelope(Model):
    id: str = Field(default_factory=new_id, min_length=1, max_length=64)
    reply_to: str | None = Field(default=None, max_length=64)
    if TYPE_CHECKING:
        # Each message class declares its own `type: Literal[...]` with a default; only type checkers see this one.
        type: str


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
    # Elements of this target the DOM says respond to clicks (DOMSnapshot's isClickable: a click listener, a link):
    # kept in the text even when the AX tree gives them no role or name of their own.
    clickable_node_ids: list[int] = Field(default=[], max_length=MAX_CLICKABLE)
    # Where the elements of this target's top document are laid out, as flat triples (backend node id, top, height)
    # in CSS pixels from the top of the page (not of the viewport), so the backend can show the model the part of a
    # long page around the viewport. Empty for frames other than a target's top document, and for elements that are
    # not rendered.
    node_bounds: list[int] = Field(default=[], max_length=300_000)


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
    error_page: bool = Field(default=False,
                             description="Chromium shows its own error page (no connection, bad host...)")


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
    ClickCmd | HoverCmd | TypeCmd | PressCmd | ScrollCmd | SelectCmd | GotoCmd | GoBackCmd | GoForwardCmd | DialogCmd,
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------------------------------------------------------------
# Handshake and housekeeping


class Hello(Envelope):
    """Extension → backend, first message after connecting. `nonce` is the backend's challenge: its `hello_ok` must
    prove it holds the pairing token before the extension runs anything."""

    type: Literal["hello"] = "hello"
    protocol_version: int
    # Optional only so that an older extension, which sends none, hears of the version mismatch rather than this.
    nonce: str | None = Field(default=None, min_length=16, max_length=128)
    extension_version: str = ""
    user_agent: str = ""


class HelloOk(Envelope):
    """The backend's proof over the extension's nonce and its own, and its nonce for the extension's `auth`."""

    type: Literal["hello_ok"] = "hello_ok"
    protocol_version: int = PROTOCOL_VERSION
    backend_version: str
    nonce: str
    proof: str


class Auth(Envelope):
    """Extension → backend, after checking the backend's proof: the extension's proof over both nonces. The backend
    counts the extension as connected, and sends commands, only after it."""

    type: Literal["auth"] = "auth"
    proof: str = Field(max_length=128)


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
        # The tab's page (or an address to open) is on a site the user's allow/block lists keep Branchwise out of.
        "site_not_allowed",
        # read_page on a tab that is not guarded: evaluation reads only where mutating requests are blocked.
        "not_guarded",
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
        description="Block every mutating request (any method but GET, HEAD and OPTIONS) from this tab, from its first "
        "load on: used for throw-away tabs (speculative replay, reload checks)",
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


class GateTab(Envelope):
    """Turn the network gate of a tab on or off: while on, its mutating requests (any method but GET, HEAD and
    OPTIONS) that no approved action covers are held (`request_held`) until `release_request` answers. Tabs its pages
    open are gated too. Idempotent."""

    type: Literal["gate_tab"] = "gate_tab"
    tab_id: int
    on: bool
    hold_timeout_seconds: float = Field(
        default=150.0, gt=0, le=3600,
        description="A held request nobody answers within this long is failed (fail safe): the backend is gone",
    )


class ReleaseRequest(Envelope):
    """Backend → extension, answered by `done`: let a held request go (exactly once) or fail it (BlockedByClient).
    An unknown or already settled hold is `error {code: invalid_message}`."""

    type: Literal["release_request"] = "release_request"
    hold_id: str = Field(min_length=1, max_length=64)
    allow: bool


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
    reuse: str = Field(default="", max_length=64, description="The capture_id of the last observation the backend "
                       "holds for this tab: if the tab shows exactly what that capture saw, the extension answers "
                       "reused with no frames instead of capturing again")


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
    capture_id: str = Field(default="", max_length=64, description="Names this capture for a later `reuse`; empty "
                            "when the page changed while it was taken (it cannot be reused)")
    reused: bool = Field(default=False, description="Nothing changed since the capture `reuse` named: `frames` is "
                         "empty and that capture's frames stand")
    capture_ms: float = 0


class AllowedRequest(Model):
    """One mutating request an approved action may send: a request matches when its method is this one and its URL has
    the same scheme, host, port, path and query (the fragment is ignored)."""

    method: Literal["POST", "PUT", "PATCH", "DELETE"]
    url: str = Field(min_length=1, max_length=8192, description="Absolute URL")


class Settle(Model):
    """How the extension waits after an action before it answers: until the tab has loaded, no request it started
    since the action began is in flight and its DOM has not changed for `quiet_ms`; never longer than `max_ms`."""

    quiet_ms: int = Field(default=200, ge=0, le=10_000)
    max_ms: int = Field(default=3000, ge=0, le=60_000)


class Act(Envelope):
    type: Literal["act"] = "act"
    tab_id: int
    action: BrowserCmd
    settle: Settle = Settle()
    allow: list[AllowedRequest] = Field(
        default=[], max_length=16,
        description="Requests the user approved with this very action: while this command runs (its load wait "
        "included) each entry lets one matching mutating request of the tab through the network gate, and is used up; "
        "every other mutating request is held as usual",
    )


class LinkFacts(Model):
    href: str = Field(description="Absolute address the link points at")
    raw_href: str = Field(description="The href attribute as written ('#', 'javascript:...', a relative path)")
    target: str = ""


class FormFacts(Model):
    """The form an element belongs to, as submitting it through this element would send it."""

    method: Literal["get", "post", "dialog"] = Field(
        description="Effective method: the submitter's formmethod when it has one, else the form's")
    action: str = Field(description="Absolute action URL, the submitter's formaction honoured")
    target: str = ""
    submits: bool = Field(description="Activating this element submits the form: a submit button, or a field in a "
                                      "form that Enter submits (implicit submission)")
    submit_buttons: int = Field(default=0, description="Enabled submit buttons in the form")
    submitter_label: str = Field(default="", description="Label of the button that submits: the element itself, or "
                                                         "for a field the form's default button")
    validates: bool = Field(default=True, description="The browser checks the fields before sending (no novalidate on "
                                                      "the form, no formnovalidate on the submitter)")
    invalid_fields: int = Field(default=0, ge=0, description="Fields other than this element the browser would refuse "
                                                             "to send as they are (required and empty, wrong format)")
    element_invalid: bool = Field(default=False, description="This element is itself such a field")


class ElementFacts(Model):
    """What the DOM says about an element that the accessibility tree does not: its form, its link target, handlers."""

    found: bool = Field(description="False when the element is gone (detached, frame gone): nothing else is set")
    tag: str = ""
    type: str = Field(default="", description="Effective type of an input or button ('submit', 'search', ...)")
    role: str = Field(default="", description="The role attribute as written")
    link: LinkFacts | None = Field(default=None, description="The link the element is or sits in")
    form: FormFacts | None = None
    disabled: bool = False
    contenteditable: bool = False
    inline_handlers: list[str] = Field(default=[], description="Inline on* attributes of the element and its "
                                                               "ancestors up to the form or body (a hint only)")
    document_url: str = Field(default="", description="URL of the document (frame) the element is in")
    gated: bool = Field(default=False, description="The network gate holds the tab's mutating requests now")
    ungated_channels: list[str] = Field(
        default=[], max_length=10,
        description="What the page has open that the gate cannot hold ('WebSocket', 'WebTransport', 'service worker')")


class Inspect(Envelope):
    """Read the DOM facts of elements in one round trip (all candidates of one planner step)."""

    type: Literal["inspect"] = "inspect"
    tab_id: int
    elements: list[ElementRef] = Field(max_length=500)


class ElementFactsReply(Envelope):
    type: Literal["element_facts"] = "element_facts"
    facts: list[ElementFacts] = Field(description="One entry per requested element, in request order")


class ReadPage(Envelope):
    """The value of a JavaScript expression on a guarded tab's page, as text (the evaluation harness's program_html
    locators: `document.querySelector(...).outerText`); `prep` expressions run first, their errors ignored. An empty
    expression reads the page's HTML. Refused on a tab that is not guarded: evaluation reads, it never acts."""

    type: Literal["read_page"] = "read_page"
    tab_id: int
    expression: str = Field(default="", max_length=8000)
    prep: list[str] = Field(default=[], max_length=20)


class PageValue(Envelope):
    type: Literal["page_value"] = "page_value"
    ok: bool = Field(description="False when the expression threw; `error` says what")
    value: str = ""
    error: str = ""


class ActResult(Envelope):
    type: Literal["act_result"] = "act_result"
    ok: bool
    error: str = ""
    url: str = ""
    dialog: DialogInfo | None = None
    settle_ms: int = Field(default=0, ge=0, description="How long the extension waited for the tab to settle")
    settled: bool = Field(default=True, description="False: the tab was still busy when the wait reached its cap")


class RunUpdate(Envelope):
    """Backend → extension: what a run is doing, for the side panel."""

    type: Literal["run_update"] = "run_update"
    run_id: str
    task: str = ""
    # "progress": one line of the run's log in `message` (search progress, a denial and what the planner does next).
    # "interrupted": a run the backend's exit cut short, offered on connect; `resumable` when resume_run can go on
    # with it (its tab is still open), else `message` says why not.
    status: Literal["started", "step", "progress", "finished", "failed", "stopped", "interrupted"]
    step: int = 0
    url: str = ""
    thought: str = ""
    action: str = ""
    answer: str = ""
    message: str = ""
    scripted_model: bool = False
    resumable: bool = False


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
    # Why a dead or invalid node is so (a refused or failed action, a revisit).
    note: str = ""


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


class RequestHeld(Envelope):
    """A gated tab's page tried to send a mutating request that no approval covers: the browser holds it (CDP Fetch)
    until `release_request`, or fails it after the gate's hold timeout."""

    type: Literal["request_held"] = "request_held"
    tab_id: int
    hold_id: str = Field(min_length=1, max_length=64)
    method: str
    url: str
    resource_type: str = Field(default="", description="CDP's resource type: Document, XHR, Fetch, Ping, ...")
    initiator_url: str | None = Field(default=None, description="The sending page, as its Referer/Origin says")
    body_bytes: int = Field(default=0, ge=0, description="Size of the request body (0 when none or unknown)")
    opener_tab_id: int | None = Field(default=None, description="When the extension gated the tab because a gated "
                                                                "tab's page opened it: the tab the backend gated "
                                                                "whose page, or whose opened tabs' pages, opened it "
                                                                "(protocol 13)")


class RequestSent(Envelope):
    """A gated tab's mutating request went to the network: released (`hold_id`), let go by the browser while held
    (`hold_id` and `detached`), covered by an entry of an approved action's allowance (`allowed`), or a same-origin
    307/308 redirect of a request let through either way
    (`redirected_from`, with the original's `hold_id` or `allowed`); a redirect to another origin is held instead."""

    type: Literal["request_sent"] = "request_sent"
    tab_id: int
    method: str
    url: str
    hold_id: str | None = Field(default=None, description="Set when it was held and then released")
    detached: str | None = Field(
        default=None, max_length=64,
        description="Set (with hold_id) when nobody released it: the browser ended the extension's debugger session "
                    "while it was held, and Chromium lets held requests go then; the reason the browser gave, e.g. "
                    "'canceled_by_user' (protocol 14)")
    allowed: AllowedRequest | None = Field(default=None, description="The entry of `act {allow}` it used up")
    redirected_from: str | None = Field(default=None, description="URL of the let-through request it redirects")
    status: int | None = Field(default=None, description="HTTP status when known; the extension reports the request "
                                                        "as it lets it go, before any answer, so usually absent")


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


class ResumeRun(Envelope):
    """From the side panel: go on with an interrupted run the backend offered (a run_update `interrupted`,
    `resumable`), in the tab it worked in. Answered with run_started, or an error saying why not."""

    type: Literal["resume_run"] = "resume_run"
    run_id: str = Field(min_length=1, max_length=64)


class ListDemos(Envelope):
    """From the side panel: what `branchwise explore` learnt about the site of the tab the panel is on ("Learnt about
    this site"). Answered with demo_list, or an error."""

    type: Literal["list_demos"] = "list_demos"
    url: str = Field(min_length=1, max_length=4000,
                     description="The tab's origin (the extension sends no path or query): the backend names its site")


class DemoSummary(BaseModel):
    demo_id: int
    instruction: str
    score: float = Field(description="The outcome reward model's score, 1-5")
    steps: int = Field(description="Actions, the closing stop included")
    persona: str = ""


class DemoList(Envelope):
    type: Literal["demo_list"] = "demo_list"
    site: str = Field(description="What the demonstrations are kept by (the host with its port)")
    demos: list[DemoSummary] = Field(default=[], description="Newest first, at most 20")


# ---------------------------------------------------------------------------------------------------------------------
# Confirmations: the user approves or denies one flagged action (or held request) in the side panel


ConfirmOutcome = Literal["approved", "denied", "timeout"]


class ConfirmRequest(Envelope):
    """Backend → extension, no reply: show a confirmation card (and highlight the element) until `confirm_closed`."""

    type: Literal["confirm_request"] = "confirm_request"
    run_id: str
    approval_id: str = Field(min_length=1, max_length=64)
    nonce: str = Field(min_length=1, max_length=128, description="One-time secret the answer must echo")
    kind: Literal["action", "request"] = Field(
        default="action", description="A flagged action before it runs, or a held mutating network request")
    tab_id: int | None = None
    action_text: str = ""
    url: str = Field(default="", description="The page the action would run on")
    element_label: str = Field(default="", description="The element as the user sees it, e.g. button 'Add to cart'")
    element: ElementRef | None = Field(default=None, description="The element to highlight on the page")
    reasons: list[str] = Field(default=[], description="Why it was flagged")
    timeout_s: float = Field(gt=0, description="Unanswered after this long, the backend denies it")
    request_method: str | None = Field(default=None, description="kind=request: the held request's method")
    request_url: str | None = Field(default=None, description="kind=request: the held request's URL")
    sends: list[AllowedRequest] = Field(
        default=[], description="kind=action: what approving lets through the network gate, once each; empty when "
        "it is not known before the action runs (each mutating request it makes is then asked about)")


class ConfirmAnswer(Envelope):
    """Extension → backend: the user's click. Counts once, and only with the request's approval_id and nonce."""

    type: Literal["confirm_answer"] = "confirm_answer"
    approval_id: str = Field(min_length=1, max_length=64)
    nonce: str = Field(min_length=1, max_length=128)
    approved: bool


class ConfirmClosed(Envelope):
    """Backend → extension: the confirmation is over (answered, timed out, run stopped); the card goes away."""

    type: Literal["confirm_closed"] = "confirm_closed"
    approval_id: str = Field(min_length=1, max_length=64)
    outcome: ConfirmOutcome


# ---------------------------------------------------------------------------------------------------------------------

ToExtension: TypeAlias = (
    HelloOk | Ping | Pong | Error | ListTabs | OpenTab | CloseTab | GuardTab | ActivateTab | Observe | Act | Inspect
    | ReadPage | RunUpdate | TreeUpdate | RunStarted | Done | GateTab | ReleaseRequest | ConfirmRequest | ConfirmClosed
    | DemoList
)
FromExtension: TypeAlias = (
    Hello | Auth | Ping | Pong | Error | Tabs | TabOpened | Done | Observation | ActResult | ElementFactsReply
    | PageValue | NetworkRequest | TabEvent | DialogEvent | StartRun | StopRun | ResumeRun | RequestHeld | RequestSent
    | ConfirmAnswer | ListDemos
)

ALL_MESSAGES: tuple[type[Envelope], ...] = (
    Hello, HelloOk, Auth, Ping, Pong, Error, ListTabs, Tabs, OpenTab, TabOpened, CloseTab, GuardTab, ActivateTab, Done,
    Observe, Observation, Act, ActResult, Inspect, ElementFactsReply, RunUpdate, TreeUpdate, NetworkRequest, TabEvent,
    DialogEvent, StartRun, RunStarted, StopRun, ResumeRun, GateTab, ReleaseRequest, RequestHeld, RequestSent,
    ConfirmRequest, ConfirmAnswer, ConfirmClosed, ReadPage, PageValue, ListDemos, DemoList,
)

incoming_adapter: TypeAdapter[FromExtension] = TypeAdapter(
    Annotated[FromExtension, Field(discriminator="type")]
)


def parse_incoming(raw: str | bytes) -> FromExtension:
    """Validate one message from the extension; raises pydantic.ValidationError naming the bad field."""
    with cyclic_gc_paused():
        return incoming_adapter.validate_json(raw)


def message_type(model: type[Envelope]) -> str:
    default = model.model_fields["type"].default
    if not isinstance(default, str):
        raise TypeError(f"{model.__name__} names no message type")
    return default
