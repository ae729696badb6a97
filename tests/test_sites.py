"""The user's site allow and block lists: the matcher, where the backend sets them, and where it enforces them
(planner validation, the environment, the CLI's start page). The extension's side is in e2e/test_boundaries_e2e.py."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import SecretStr

from branchwise.actions import Click, Goto, NewTab, TabFocus
from branchwise.agent.env import BrowserEnv, EnvConfig, EnvView
from branchwise.agent.reporting import Reporters, TerminalReporter
from branchwise.cli import RunOptions, UsageError, execute_run, parse_args, refused_run, site_rules
from branchwise.config import ServerConfig
from branchwise.link import ExtensionError, ExtensionHub
from branchwise.llm import LLMClient, LLMConfig
from branchwise.protocol import ActResult, BrowserCmd, Observation, TabInfo
from branchwise.safety.sites import SitePattern, SitePatternError, SiteRefused, SiteRules, host_of
from branchwise.scripted_model import Rule, Script, ScriptedModelServer
from branchwise.search.examples import site_of
from branchwise.search.urlcheck import UrlProbe
from branchwise.search.validate import ActionSpace, validate_action

from agents import greedy_agent
from extension_js import run_js

FIXTURES = Path(__file__).parent / "fixtures" / "axtree"

# ---------------------------------------------------------------------------------------------------------------------
# The matcher


@pytest.mark.parametrize(("pattern", "host", "matches"), [
    ("shop.example", "shop.example", True),
    ("shop.example", "www.shop.example", False),  # a plain host is that host only
    ("shop.example", "myshop.example", False),
    ("*.bank.example", "bank.example", True),  # the domain itself
    ("*.bank.example", "online.bank.example", True),
    ("*.bank.example", "a.b.bank.example", True),
    ("*.bank.example", "evilbank.example", False),  # a suffix of labels, not of characters
    ("*.bank.example", "bank.example.evil", False),
])
def test_pattern_semantics(pattern: str, host: str, matches: bool) -> None:
    assert SitePattern.parse(pattern).matches(host) is matches


@pytest.mark.parametrize(("text", "domain", "subdomains"), [
    ("  Shop.Example ", "shop.example", False),
    ("https://shop.example/cart?x=1", "shop.example", False),  # a pasted address counts as its host
    ("localhost:8080", "localhost", False),  # a port is no part of a site
    ("*.Bank.Example.", "bank.example", True),
    ("bücher.example", "xn--bcher-kva.example", False),  # hosts are compared as the browser writes them
    ("127.0.0.1", "127.0.0.1", False),
])
def test_patterns_are_normalized(text: str, domain: str, subdomains: bool) -> None:
    assert SitePattern.parse(text) == SitePattern(domain, subdomains)


@pytest.mark.parametrize("text", ["*.", "http://", "shop example", "shop_example", "-shop.example", "*"])
def test_bad_patterns_are_refused_with_the_entry_named(text: str) -> None:
    with pytest.raises(SitePatternError, match="shop.example or"):
        SitePattern.parse(text)


def test_block_wins_over_allow_and_the_reason_names_host_and_list() -> None:
    rules = SiteRules.parse(allow=["*.shop.example", "docs.example"], block=["admin.shop.example"])
    assert rules.refusal("https://www.shop.example/cart") is None
    assert rules.refusal("http://shop.example:8080/") is None
    assert rules.refusal("https://docs.example/a") is None
    assert rules.refusal("https://ADMIN.shop.example./users") == (
        "admin.shop.example is on the backend's block list (admin.shop.example): Branchwise does not work there")
    assert rules.refusal("https://other.example/") == (
        "other.example is not on the backend's allow list (*.shop.example, docs.example): Branchwise does not work "
        "there")


def test_empty_lists_allow_everything_and_hostless_addresses_are_no_site() -> None:
    assert SiteRules().refusal("https://anything.example/") is None
    only = SiteRules.parse(allow=["shop.example"])
    assert only.refusal("about:blank") is None
    assert only.refusal("blob:https://evil.example/1f0c") is not None  # a blob belongs to the site that made it


@pytest.mark.parametrize(("url", "host"), [
    ("https://blocked.example\\@allowed.example/", "blocked.example"),  # a backslash ends the host, as in Chrome
    ("https://blocked%2Eexample/", "blocked.example"),  # the browser decodes the host
    ("https://straße.example/", "xn--strae-oqa.example"),  # UTS 46 as Chrome writes it, not IDNA 2003's strasse
    ("HTTPS://Shop.Example.:8443/a", "shop.example"),
])
def test_the_host_is_read_as_the_browser_reads_it(url: str, host: str) -> None:
    # The expected hosts are what `new URL(url).hostname` gives in Chrome and Node (extension/lib/sites.js).
    assert host_of(url) == host


def test_a_block_list_holds_against_addresses_the_browser_reads_differently_from_urlsplit() -> None:
    rules = SiteRules.parse(allow=["allowed.example"], block=["blocked.example", "straße.example"])
    assert "block list" in (rules.refusal("https://blocked.example\\@allowed.example/") or "")
    assert "block list" in (rules.refusal("https://xn--strae-oqa.example/") or "")
    # A host that has no punycode form is refused, not an error.
    assert "not a valid host name" in (rules.refusal("https://\u2615.example/") or "")


def test_comments_blank_lines_and_duplicates() -> None:
    rules = SiteRules.parse(block=["# the bank", "", "*.bank.example  # all of it", "*.bank.example"])
    assert rules.block == (SitePattern("bank.example", True),)


def test_environment_and_flags_are_joined(tmp_path: Path) -> None:
    env = {"BRANCHWISE_ALLOW_SITES": "shop.example, *.docs.example", "BRANCHWISE_BLOCK_SITES": "evil.example",
           "XDG_DATA_HOME": str(tmp_path)}
    rules = site_rules(parse_args(["serve", "--allow-site", "extra.example", "--block-site", "*.bank.example"], env))
    assert [str(p) for p in rules.allow] == ["shop.example", "*.docs.example", "extra.example"]
    assert [str(p) for p in rules.block] == ["evil.example", "*.bank.example"]
    assert "the backend's block list" in (rules.refusal("https://evil.example/") or "")


def test_cli_flags_are_repeatable_and_a_bad_one_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRANCHWISE_ALLOW_SITES", raising=False)
    monkeypatch.setenv("BRANCHWISE_BLOCK_SITES", "env.example")
    args = parse_args(["run", "t", "--start-url", "http://shop.example/", "--allow-site", "shop.example",
                                      "--block-site", "*.bank.example", "--block-site", "ads.example"])
    rules = site_rules(args)
    assert [str(p) for p in rules.allow] == ["shop.example"]
    assert [str(p) for p in rules.block] == ["env.example", "*.bank.example", "ads.example"]
    bad = parse_args(["serve", "--block-site", "not a host"])
    with pytest.raises(UsageError, match="bad site pattern"):
        site_rules(bad)


# ---------------------------------------------------------------------------------------------------------------------
# Planner validation


BLOCKED = SiteRules.parse(block=["*.bank.example"])


@pytest.mark.parametrize("action", [Goto("https://online.bank.example/transfer"), NewTab("https://bank.example/")])
def test_validation_refuses_goto_and_new_tab_to_a_refused_site(action: Goto | NewTab) -> None:
    reason = validate_action(action, None, ActionSpace(sites=BLOCKED))
    assert reason is not None and "block list (*.bank.example)" in reason.reason
    assert validate_action(action, None, ActionSpace()) is None


def test_the_action_space_of_a_view_carries_the_lists() -> None:
    view = EnvView("", "https://shop.example/", "", 1, 0, sites=BLOCKED)
    assert ActionSpace.of(view).sites is BLOCKED


# ---------------------------------------------------------------------------------------------------------------------
# The environment: a refused page is never read, a refused address never opened


def shop_observation(url: str = "http://shop.test/") -> Observation:
    observation = Observation.model_validate_json((FIXTURES / "shop_home.json").read_text())
    return observation.model_copy(update={"url": url})


@dataclass
class FakeBrowser:
    """The extension as the environment sees it; `refuse` answers every command like a site the lists refuse."""

    url: str = "http://shop.test/"
    refuse: str = ""
    commands: list[BrowserCmd] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)

    async def observe(self, tab_id: int) -> Observation:
        if self.refuse:
            raise ExtensionError("site_not_allowed", self.refuse)
        return shop_observation(self.url)

    async def act(self, tab_id: int, command: BrowserCmd, *, allow: object = (), settle: object = None) -> ActResult:
        if self.refuse:
            raise ExtensionError("site_not_allowed", self.refuse)
        self.commands.append(command)
        return ActResult(ok=True, url=self.url)

    async def open_tab(self, url: str, active: bool = True, guarded: bool = False) -> TabInfo:
        if self.refuse:
            raise ExtensionError("site_not_allowed", self.refuse)
        self.opened.append(url)
        return TabInfo(tab_id=9, index=1, url=url)

    async def list_tabs(self) -> list[TabInfo]:
        return [TabInfo(tab_id=1, index=0, url=self.url), TabInfo(tab_id=9, index=1, url="https://bank.example/")]

    async def activate_tab(self, tab_id: int) -> None:
        pass


def env_with(browser: FakeBrowser, sites: SiteRules = BLOCKED) -> BrowserEnv:
    return BrowserEnv(browser, 1, EnvConfig(sites=sites))  # type: ignore[arg-type]


def test_goto_new_tab_and_tab_focus_to_a_refused_site_never_reach_the_browser() -> None:
    browser = FakeBrowser()
    env = env_with(browser)
    asyncio.run(env.observe())
    for action in (Goto("https://online.bank.example/"), NewTab("https://bank.example/x"), TabFocus(1)):
        result = asyncio.run(env.execute(action))
        assert not result.ok and "bank.example" in result.error and "block list (*.bank.example)" in result.error
    assert browser.commands == [] and browser.opened == [] and env.tab_id == 1


def test_a_page_on_a_refused_site_is_not_read() -> None:
    env = env_with(FakeBrowser(url="https://online.bank.example/account"))
    with pytest.raises(SiteRefused, match=r"online\.bank\.example is on the backend's block list"):
        asyncio.run(env.observe())
    assert env.last is None  # nothing of the page was processed or kept


def test_the_extensions_refusal_becomes_the_same_stop_or_a_failed_new_tab() -> None:
    why = "bank.example is on the extension's block list (bank.example): Branchwise does not work there"
    browser = FakeBrowser()
    env = env_with(browser, SiteRules())
    asyncio.run(env.observe())
    browser.refuse = why
    with pytest.raises(SiteRefused, match="extension's block list"):
        asyncio.run(env.observe())
    with pytest.raises(SiteRefused, match="extension's block list"):
        asyncio.run(env.execute(Click(next(iter(env.last.page.elements)))))  # type: ignore[union-attr]
    opened = asyncio.run(env.execute(NewTab("https://bank.example/")))
    assert not opened.ok and "extension's block list" in opened.error and env.tab_id == 1


@dataclass
class RedirectingProbeBrowser(FakeBrowser):
    """Every address the check tab opens ends on `self.url` (a redirect)."""

    closed: list[int] = field(default_factory=list)

    async def close_tab_quietly(self, tab_id: int) -> None:
        self.closed.append(tab_id)


def test_a_goto_that_redirects_onto_a_refused_site_is_not_a_candidate() -> None:
    browser = RedirectingProbeBrowser(url="https://online.bank.example/login")
    reason = asyncio.run(UrlProbe(browser, BLOCKED).check("https://short.example/x"))  # type: ignore[arg-type]
    assert reason == ("https://short.example/x leads to a site Branchwise does not work on: online.bank.example is on "
                      "the backend's block list (*.bank.example): Branchwise does not work there")
    assert browser.closed == [9]
    browser = RedirectingProbeBrowser(url="https://www.shop.example/")
    assert asyncio.run(UrlProbe(browser, BLOCKED).check("https://short.example/x")) is None  # type: ignore[arg-type]
    browser.refuse = "bank.example is on the extension's block list (bank.example): Branchwise does not work there"
    probe = UrlProbe(browser)  # type: ignore[arg-type]
    assert "cannot be opened: site_not_allowed: bank.example is on the extension's block list" in (
        asyncio.run(probe.check("https://bank.example/")) or "")


# ---------------------------------------------------------------------------------------------------------------------
# Runs


def cot(action: str) -> str:
    return f"Let's think step-by-step. In summary, the next action I will perform is ```{action}```"



def greedy_run(server: ScriptedModelServer, env: BrowserEnv) -> object:
    async def main() -> object:
        config = LLMConfig(base_url=server.base_url, api_key=SecretStr("t"), model="m", max_retries=0)
        async with LLMClient(config) as client:
            return await greedy_agent(client).run("Check my balance", env, Reporters(), run_id="r1")

    return asyncio.run(main())


def test_a_greedy_goto_to_a_blocked_site_is_refused_and_the_model_is_told() -> None:
    rules = [Rule(when_contains=["it cannot be done: online.bank.example is on the backend's block list"],
                  search_in="last_user", reply=cot("stop [N/A]")),
             Rule(reply=cot("goto [https://online.bank.example/balance]"))]
    browser = FakeBrowser()
    with ScriptedModelServer(Script(rules=rules)) as server:
        result = greedy_run(server, env_with(browser))
        second = server.requests()[1].last_user
    assert "block list (*.bank.example)" in second and "goto [https://online.bank.example/balance]" in second
    assert browser.commands == []  # never navigated
    assert result.status == "finished"  # type: ignore[attr-defined]
    assert result.steps[0].error.startswith("not run: online.bank.example")  # type: ignore[attr-defined]


def test_a_run_whose_page_lands_on_a_refused_site_stops_with_the_reason() -> None:
    rules = [Rule(reply=cot("press [PageDown]"))]

    class Redirecting(FakeBrowser):
        async def act(self, tab_id: int, command: BrowserCmd, *, allow: object = (),
                      settle: object = None) -> ActResult:
            self.url = "https://online.bank.example/login"  # the page took the tab there itself
            return ActResult(ok=True, url=self.url)

    browser = Redirecting()
    with ScriptedModelServer(Script(rules=rules)) as server:
        result = greedy_run(server, env_with(browser))
        calls = len(server.requests())
    assert result.status == "failed" and calls == 1  # type: ignore[attr-defined]
    assert result.reason.startswith("stopped: online.bank.example is on the backend's block list")  # type: ignore[attr-defined]


def test_a_cli_run_with_a_refused_start_page_stops_before_opening_anything() -> None:
    browser = FakeBrowser()
    session = SimpleNamespace(browser=browser, hub=ExtensionHub(ServerConfig()))
    model = SimpleNamespace(scripted=True, client=SimpleNamespace(config=SimpleNamespace(model="m")))
    options = RunOptions(max_steps=3, sites=SiteRules.parse(block=["*.bank.example"]))
    result = asyncio.run(execute_run(session, model, "Pay 4111 1111 1111 1111", "https://bank.example/",  # type: ignore[arg-type]
                                     options))
    assert browser.opened == [] and result.status == "failed"
    assert result.reason == ("stopped before the start page was opened: bank.example is on the backend's block list "
                             "(*.bank.example): Branchwise does not work there")
    assert "4111" not in result.task

    browser.refuse = "bank.example is on the extension's block list (bank.example): Branchwise does not work there"
    result = asyncio.run(execute_run(session, model, "t", "https://bank.example/", RunOptions(max_steps=3)))  # type: ignore[arg-type]
    assert result.status == "failed" and "extension's block list" in result.reason


def test_the_terminal_shows_the_refusal() -> None:
    out = io.StringIO()
    asyncio.run(refused_run("t", "bank.example is on the backend's block list (bank.example)",
                            Reporters(TerminalReporter(out))))
    assert "Run failed: stopped before the start page was opened: bank.example" in out.getvalue()


PARITY_JS = """
import(process.argv[1]).then((m) => {
  const [patterns, urls] = JSON.parse(process.argv[2]);
  const parsed = patterns.map((t) => { try { return m.patternText(m.parsePattern(t)); } catch { return null; } });
  process.stdout.write(JSON.stringify([parsed, urls.map((u) => m.hostOf(u))]));
});
"""


def test_the_extension_reads_patterns_and_hosts_as_the_backend_does() -> None:
    patterns = ["Shop.Example", "*.Straße.example", "https://BÜcher.example:8080/x", "blocked%2Eexample",
                "localhost:8080", "*.Bank.Example.", "127.0.0.1", "shop example", "*"]
    urls = ["https://blocked.example\\@allowed.example/", "https://blocked%2Eexample/", "https://straße.example/",
            "blob:https://a.example/u", "HTTPS://Shop.Example.:8443/a", "about:blank"]
    read_by_the_extension = run_js("sites.js", PARITY_JS, json.dumps([patterns, urls]))

    def python_pattern(text: str) -> str | None:
        try:
            return str(SitePattern.parse(text))
        except SitePatternError:
            return None

    assert read_by_the_extension == [[python_pattern(t) for t in patterns], [host_of(u) for u in urls]]


DEMO_ORIGIN_JS = """
import(process.argv[1]).then((m) => {
  const [lists, urls] = JSON.parse(process.argv[2]);
  process.stdout.write(JSON.stringify(urls.map((u) => m.demoOrigin(u, lists))));
});
"""


def test_the_side_panel_asks_about_a_sites_demonstrations_with_its_origin_only_and_never_for_a_blocked_site() -> None:
    lists = {"allow": [], "block": ["bank.example"]}
    urls = ["https://shop.example:8443/orders/1042?token=abc#top", "https://bank.example/account",
            "chrome://settings/", "about:blank"]
    origins = run_js("sites.js", DEMO_ORIGIN_JS, json.dumps([lists, urls]))
    assert origins == ["https://shop.example:8443", "", "", ""]
    # The backend names the same site from the origin as from the whole address.
    assert site_of(origins[0]) == site_of(urls[0]) == "shop.example:8443"
