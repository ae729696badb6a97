"""How the environment turns the model's actions into extension commands, on a saved page and a dialog."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from branchwise.actions import Click, GoBack, Goto, Hover, Press, Scroll, SelectOption, Stop, Type
from branchwise.agent.env import (
    DIALOG_CANCEL_ID,
    DIALOG_INPUT_ID,
    DIALOG_OK_ID,
    ActionRejected,
    BrowserEnv,
    EnvConfig,
    EnvView,
    SettleConfig,
    dialog_text,
)
from branchwise.browser import Browser
from branchwise.config import ServerConfig
from branchwise.link import ExtensionHub
from branchwise.observation import process
from branchwise.protocol import (
    ActResult,
    AllowedRequest,
    BrowserCmd,
    ClickCmd,
    DialogCmd,
    DialogInfo,
    GoBackCmd,
    GotoCmd,
    HoverCmd,
    Observation,
    PressCmd,
    ScrollCmd,
    SelectCmd,
    Settle,
    TypeCmd,
)

FIXTURES = Path(__file__).parent / "fixtures" / "axtree"


def env_on(observation: Observation) -> BrowserEnv:
    env = BrowserEnv(Browser(ExtensionHub(ServerConfig())), observation.tab_id)
    page = process(observation)
    env.last = EnvView(page.text, page.url, page.title, observation.tab_id, page.node_count_raw, page=page)
    return env


@pytest.fixture
def shop() -> BrowserEnv:
    return env_on(Observation.model_validate_json((FIXTURES / "shop_home.json").read_text()))


def first(env: BrowserEnv, role: str) -> int:
    assert env.last is not None and env.last.page is not None
    return next(e.id for e in env.last.page.elements.values() if e.role == role)


def test_element_actions_carry_the_elements_reference(shop: BrowserEnv) -> None:
    link, box = first(shop, "link"), first(shop, "searchbox")
    assert shop.last is not None and shop.last.page is not None
    ref = shop.last.page.ref(link)
    assert shop.command_for(Click(link)) == ClickCmd(element=ref)
    assert shop.command_for(Hover(link)) == HoverCmd(element=ref)
    assert shop.command_for(Type(box, "tent", press_enter=True)) == TypeCmd(
        element=shop.last.page.ref(box), text="tent", press_enter=True)
    assert shop.command_for(SelectOption(box, ("Blue", "Red"))) == SelectCmd(
        element=shop.last.page.ref(box), values=["Blue", "Red"])
    assert shop.command_for(Press("Control+a")) == PressCmd(keys="Control+a")
    assert shop.command_for(Scroll("down")) == ScrollCmd(direction="down")
    assert shop.command_for(Goto("http://x.test/")) == GotoCmd(url="http://x.test/")
    assert shop.command_for(GoBack()) == GoBackCmd()


def test_unknown_ids_are_rejected_with_a_message_for_the_model(shop: BrowserEnv) -> None:
    with pytest.raises(ActionRejected, match=r"no element \[999999\] on the current page"):
        shop.command_for(Click(999999))
    result = asyncio.run(shop.execute(SelectOption(999999, ("Blue",))))
    assert not result.ok and "[999999]" in result.error
    assert not asyncio.run(shop.execute(Stop("done"))).ok


def dialog_env(kind: str) -> BrowserEnv:
    observation = Observation(tab_id=3, url="http://x.test/", title="X", frames=[],
                              dialog=DialogInfo(dialog_type=kind, message="Delete it?", default_prompt="Paris"))  # type: ignore[arg-type]
    env = BrowserEnv(Browser(ExtensionHub(ServerConfig())), 3)
    env.last = EnvView(dialog_text(observation, observation.dialog), observation.url, "X", 3, 0,  # type: ignore[arg-type]
                       dialog=observation.dialog)
    return env


def test_a_dialog_becomes_nodes_the_model_can_answer() -> None:
    prompt = dialog_env("prompt")
    assert prompt.last is not None
    lines = prompt.last.text.splitlines()
    assert f"[{DIALOG_OK_ID}] button 'OK'" in lines[-3] and f"[{DIALOG_INPUT_ID}] textbox '' value: Paris" in lines[-1]
    assert prompt.command_for(Click(DIALOG_OK_ID)) == DialogCmd(accept=True)
    assert prompt.command_for(Click(DIALOG_CANCEL_ID)) == DialogCmd(accept=False)
    assert prompt.command_for(Type(DIALOG_INPUT_ID, "Berlin", press_enter=True)) == DialogCmd(accept=True,
                                                                                           prompt_text="Berlin")
    alert = dialog_env("alert")
    assert alert.last is not None and "Cancel" not in alert.last.text
    with pytest.raises(ActionRejected, match=r"alert dialog is open: click \[2\] \(OK\)$"):
        alert.command_for(Scroll("down"))


class SettleRecorder(Browser):
    """A browser whose extension answers every act at once, as if the tab had taken 640 ms and stayed busy."""

    def __init__(self) -> None:
        super().__init__(ExtensionHub(ServerConfig()))
        self.asked: list[Settle] = []

    async def act(self, tab_id: int, command: BrowserCmd, *, allow: Sequence[AllowedRequest] = (),
                  settle: Settle | None = None) -> ActResult:
        assert settle is not None
        self.asked.append(settle)
        return ActResult(ok=True, settle_ms=640, settled=False)


def test_typing_waits_longer_for_quiet_and_the_wait_comes_back_with_the_result(shop: BrowserEnv) -> None:
    browser = SettleRecorder()
    env = BrowserEnv(browser, shop.tab_id, EnvConfig(settle=SettleConfig(quiet_ms=150, typing_quiet_ms=450,
                                                                         max_ms=2000)))
    env.last = shop.last
    typed = asyncio.run(env.execute(Type(first(shop, "searchbox"), "tent", press_enter=False)))
    asyncio.run(env.execute(Click(first(shop, "link"))))
    asyncio.run(env.execute(Press("Enter")))
    # A debounced autocomplete reacts to keys: after typing and key presses the quiet window is the longer one.
    assert browser.asked == [Settle(quiet_ms=450, max_ms=2000), Settle(quiet_ms=150, max_ms=2000),
                             Settle(quiet_ms=450, max_ms=2000)]
    assert (typed.ok, typed.settle_ms, typed.settled) == (True, 640, False)
