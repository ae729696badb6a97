"""The agent's environment: one browser session seen as text, driven by typed actions.

It turns ids the model saw into element references for the extension, tab numbers into tab ids, and a JavaScript
dialog into a few synthetic nodes (as WebOperator does) so the model can answer it with ordinary actions.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from pydantic import BaseModel, Field

from ..actions import (
    Action,
    Click,
    CloseTab,
    GoBack,
    GoForward,
    Goto,
    Hover,
    NewTab,
    Press,
    Scroll,
    SelectOption,
    Stop,
    TabFocus,
    Type,
)
from ..browser import Browser
from ..core.requests import ActionWatch, ExpectedRequest, GatedRequest
from ..link import ExtensionError
from ..observation import ObservationConfig, PageView, process
from ..observation.render import header_lines, ordered_tabs, quote
from ..observation.viewport import windowed_text
from ..protocol import (
    BrowserCmd,
    ClickCmd,
    DialogCmd,
    DialogInfo,
    ElementFacts,
    ElementRef,
    FrameTree,
    GoBackCmd,
    GoForwardCmd,
    GotoCmd,
    HoverCmd,
    NavigationInfo,
    Observation,
    PressCmd,
    ScrollCmd,
    ScrollInfo,
    SelectCmd,
    Settle,
    TabInfo,
    TypeCmd,
)
from ..safety.sites import SiteRefused, SiteRules

log = logging.getLogger(__name__)

# Synthetic ids for an open dialog; the page's own tree is unreadable while it is open, so nothing can collide.
DIALOG_ID, DIALOG_OK_ID, DIALOG_CANCEL_ID, DIALOG_INPUT_ID = 1, 2, 3, 4


class SettleConfig(BaseModel):
    """How long the tab must be quiet (no DOM change, no request in flight) after an action before it is observed."""

    quiet_ms: int = Field(default=200, ge=0, le=10_000)
    # After typing or a key press: long enough for the usual 300 ms debounce of an autocomplete or a live search.
    typing_quiet_ms: int = Field(default=500, ge=0, le=10_000)
    max_ms: int = Field(default=3000, ge=0, le=60_000, description="A page still busy after this is observed as is")

    def for_action(self, action: Action) -> Settle:
        quiet = self.typing_quiet_ms if isinstance(action, (Type, Press)) else self.quiet_ms
        return Settle(quiet_ms=quiet, max_ms=self.max_ms)


class EnvConfig(BaseModel):
    observation: ObservationConfig = ObservationConfig()
    settle: SettleConfig = SettleConfig()
    # The user's site lists: a page on a refused site is never read, an address on one never opened.
    sites: SiteRules = SiteRules()


@dataclass(frozen=True)
class EnvView:
    """What the agent sees at one step."""

    text: str
    url: str
    title: str
    tab_id: int
    raw_node_count: int
    page: PageView | None = None
    dialog: DialogInfo | None = None
    # The agent's tabs in `tab_focus` order; the page above is in tab `active_tab`.
    tabs: tuple[TabInfo, ...] = ()
    scroll: ScrollInfo = field(default_factory=ScrollInfo)
    navigation: NavigationInfo = field(default_factory=NavigationInfo)
    # The sites the agent may go to from here (validation tells the model before a goto is tried).
    sites: SiteRules = field(default_factory=SiteRules)

    @property
    def active_tab(self) -> int:
        return next((i for i, tab in enumerate(self.tabs) if tab.tab_id == self.tab_id), 0)


@dataclass(frozen=True)
class ExecResult:
    ok: bool
    error: str = ""
    # The mutating requests the page made while the action ran, as the network gate saw them; None: no gate watched.
    requests: tuple[GatedRequest, ...] | None = None
    # How long the tab took to settle after the action (None: nothing ran in a page), and whether it did before the cap.
    settle_ms: int | None = None
    settled: bool = True


class ActionRejected(Exception):
    """The action cannot run here (unknown id, no such tab...); the message is fit to show the model."""


def dialog_text(observation: Observation, dialog: DialogInfo) -> str:
    lines = [*header_lines(observation), f"[{DIALOG_ID}] alertdialog {quote(dialog.message)} modal: True"]
    lines.append(f"\t[{DIALOG_OK_ID}] button 'OK'")
    if dialog.dialog_type != "alert":
        lines.append(f"\t[{DIALOG_CANCEL_ID}] button 'Cancel'")
    if dialog.dialog_type == "prompt":
        lines.append(f"\t[{DIALOG_INPUT_ID}] textbox '' value: {dialog.default_prompt}")
    return "\n".join(lines)


@dataclass
class BrowserEnv:
    browser: Browser
    tab_id: int
    config: EnvConfig = field(default_factory=EnvConfig)
    last: EnvView | None = None
    # Sees each action run here (the network gate: safety/gate.py); None runs them unwatched.
    watch: ActionWatch | None = field(default=None, repr=False)
    # The most text one observation shows the model (a run sizes it to its model's prompt); a longer page is shown
    # around its viewport (observation/viewport.py). None: all of it.
    text_chars: int | None = None
    # The last capture processed (its frames, the rest of the observation, the result).
    _processed: tuple[list[FrameTree], dict[str, object], PageView] | None = field(default=None, repr=False)

    async def observe(self) -> EnvView:
        """The page in the working tab. Raises SiteRefused when it is on a site the user's lists refuse (the
        extension's or the backend's): the agent must not read it, and the run stops with the reason."""
        try:
            observation = await self.browser.observe(self.tab_id)
        except ExtensionError as exc:
            if exc.code == "site_not_allowed":
                raise SiteRefused(exc.message) from exc
            raise
        refusal = self.config.sites.refusal(observation.url)
        if refusal is not None:
            raise SiteRefused(refusal)  # dropped unread: nothing of the page is processed or kept
        sites = self.config.sites
        tabs = tuple(ordered_tabs(observation))
        if observation.dialog is not None:
            view = EnvView(dialog_text(observation, observation.dialog), observation.url, observation.title,
                           self.tab_id, 0, dialog=observation.dialog, tabs=tabs, navigation=observation.navigation,
                           sites=sites)
        else:
            page = self._process(observation)
            view = EnvView(self._shown(page, observation.scroll), page.url, page.title, self.tab_id,
                           page.node_count_raw, page=page, tabs=tabs, scroll=observation.scroll,
                           navigation=observation.navigation, sites=sites)
        self.last = view
        return view

    def _shown(self, page: PageView, scroll: ScrollInfo) -> str:
        """The page's text, or the part around its viewport when the whole is over `text_chars`."""
        if self.text_chars is None or len(page.text) <= self.text_chars:
            return page.text
        return windowed_text(page, scroll, self.text_chars) or page.text

    def _process(self, observation: Observation) -> PageView:
        """The page's text and elements; a capture the browser reused (the very frames processed last time) with the
        same header is not processed again."""
        header = observation.model_dump(include={"tab_id", "url", "title", "tabs", "scroll", "navigation", "dialog"})
        if self._processed is not None:
            frames, seen, page = self._processed
            if frames is observation.frames and seen == header:
                return page
        sensitive = [ElementRef(backend_node_id=node_id, target=frame.target)
                     for frame in observation.frames for node_id in frame.sensitive_node_ids]
        page = process(observation, self.config.observation, sensitive)
        self._processed = (observation.frames, header, page)
        return page

    async def inspect(self, element_ids: Iterable[int]) -> dict[int, ElementFacts]:
        """DOM facts of elements of the last observed page, in one round trip; ids not on that page are left out."""
        page = self.last.page if self.last is not None else None
        if page is None:
            return {}
        ids = [i for i in dict.fromkeys(element_ids) if i in page.elements]
        facts = await self.browser.inspect(self.tab_id, [page.ref(i) for i in ids])
        return dict(zip(ids, facts, strict=True))

    def _ref(self, element_id: int) -> ElementRef:
        view = self.last
        if view is None or view.page is None or element_id not in view.page.elements:
            raise ActionRejected(f"there is no element [{element_id}] on the current page; use an id from the "
                                 "observation")
        return view.page.ref(element_id)

    def _dialog_command(self, action: Action) -> BrowserCmd:
        assert self.last is not None and self.last.dialog is not None
        match action:
            case Click(element_id=eid) if eid == DIALOG_OK_ID:
                return DialogCmd(accept=True)
            case Click(element_id=eid) if eid == DIALOG_CANCEL_ID:
                return DialogCmd(accept=False)
            case Type(element_id=eid, text=text) if eid == DIALOG_INPUT_ID:
                return DialogCmd(accept=True, prompt_text=text)
            case Press(keys="Enter"):
                return DialogCmd(accept=True)
            case Press(keys="Escape"):
                return DialogCmd(accept=False)
        kind = self.last.dialog.dialog_type
        cancel = f" or [{DIALOG_CANCEL_ID}] (Cancel)" if kind != "alert" else ""
        raise ActionRejected(f"a {kind} dialog is open: click [{DIALOG_OK_ID}] (OK){cancel}")

    def command_for(self, action: Action) -> BrowserCmd:
        """The extension command for an action that acts inside the current tab."""
        if self.last is not None and self.last.dialog is not None:
            return self._dialog_command(action)
        match action:
            case Click(element_id=eid):
                return ClickCmd(element=self._ref(eid))
            case Hover(element_id=eid):
                return HoverCmd(element=self._ref(eid))
            case Type(element_id=eid, text=text, press_enter=enter):
                return TypeCmd(element=self._ref(eid), text=text, press_enter=enter)
            case Press(keys=keys, element_id=eid):
                if eid is not None:
                    self._ref(eid)  # the id must exist, though the keys go to the focused element
                return PressCmd(keys=keys)
            case Scroll(direction=direction):
                return ScrollCmd(direction=direction)
            case SelectOption(element_id=eid, values=values):
                return SelectCmd(element=self._ref(eid), values=list(values))
            case Goto(url=url):
                return GotoCmd(url=url)
            case GoBack():
                return GoBackCmd()
            case GoForward():
                return GoForwardCmd()
        raise ActionRejected(f"{action.to_text()} does not act inside a tab")

    async def execute(self, action: Action, *, allow: Sequence[ExpectedRequest] | None = None) -> ExecResult:
        """Run one action. A failure the model can fix comes back as ok=False with the reason. `allow`: None when
        nobody approved the action; else the user approved it, and while it runs the network gate lets one request
        through per entry (what the action was known to send). Any other mutating request it makes, and every one of
        an approved action whose requests were not known (an empty `allow`), is held and asked about."""
        if self.watch is None:
            return await self._execute(action, allow or ())
        async with self.watch.acting(self, action.to_text(), allow) as seen:
            result = await self._execute(action, allow or ())
        return replace(result, requests=tuple(seen))

    async def _execute(self, action: Action, allow: Sequence[ExpectedRequest]) -> ExecResult:
        try:
            match action:
                case Stop():
                    raise ActionRejected("stop ends the run; it is not executed")
                case Goto(url=url) | NewTab(url=url) if url and (refusal := self.config.sites.refusal(url)):
                    raise ActionRejected(f"cannot open {url}: {refusal}")
                case NewTab(url=url):
                    tab = await self._open_tab(url or "about:blank")
                    self.tab_id = tab.tab_id
                    return ExecResult(True)
                case TabFocus(index=index):
                    return await self._focus_tab(index)
                case CloseTab():
                    return await self._close_tab()
            try:
                result = await self.browser.act(self.tab_id, self.command_for(action),
                                                allow=[r.allowed() for r in allow],
                                                settle=self.config.settle.for_action(action))
            except ExtensionError as exc:
                if exc.code == "site_not_allowed":  # the tab went to a refused site since it was observed
                    raise SiteRefused(exc.message) from exc
                raise
        except ActionRejected as exc:
            return ExecResult(False, str(exc))
        return ExecResult(result.ok, result.error, settle_ms=result.settle_ms, settled=result.settled)

    async def _open_tab(self, url: str) -> TabInfo:
        try:
            return await self.browser.open_tab(url)
        except ExtensionError as exc:
            if exc.code == "site_not_allowed":  # the extension's own lists: nothing was opened
                raise ActionRejected(f"cannot open {url}: {exc.message}") from exc
            raise

    async def _focus_tab(self, index: int) -> ExecResult:
        tabs = await self.browser.list_tabs()
        if not 0 <= index < len(tabs):
            return ExecResult(False, f"there is no tab {index}; open tabs are 0 to {len(tabs) - 1}")
        refusal = self.config.sites.refusal(tabs[index].url)
        if refusal is not None:
            return ExecResult(False, f"tab {index} shows a page Branchwise does not work on: {refusal}")
        self.tab_id = tabs[index].tab_id
        await self.browser.activate_tab(self.tab_id)
        return ExecResult(True)

    async def _close_tab(self) -> ExecResult:
        tabs = await self.browser.list_tabs()
        if len(tabs) <= 1:
            return ExecResult(False, "this is the only tab; closing it would end the session")
        await self.browser.close_tab(self.tab_id)
        remaining = [t for t in tabs if t.tab_id != self.tab_id]
        self.tab_id = remaining[-1].tab_id
        await self.browser.activate_tab(self.tab_id)
        return ExecResult(True)

