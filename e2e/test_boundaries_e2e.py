"""Boundaries, in real Chromium with the extension: no tab that was not handed over, no browser or extension page, the
user's site allow and block lists (options page and `--block-site`), and typed passwords kept out of the model's
prompts, the logs, the run store and `--json`."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from selenium.webdriver.common.by import By
from selenium.webdriver.support.wait import WebDriverWait

from branchwise.actions import Click, GoBack, Goto
from branchwise.agent.env import BrowserEnv, EnvView
from branchwise.agent.records import RunResult
from branchwise.agent.reporting import Reporters
from branchwise.config import EXTENSION_ID
from branchwise.link import ExtensionError
from branchwise.llm import LLMClient, LLMConfig
from branchwise.protocol import ElementRef, ScrollCmd
from branchwise.safety.sites import SiteRefused, SiteRules
from branchwise.sandbox import ShopServer
from branchwise.sandbox.demo_users import DEMO_USER
from branchwise.sandbox.recording import Recorded, RecordingServer, Reply
from branchwise.scripted_model import Rule, Script, ScriptedModelServer
from branchwise.search.agent import SearchAgent, SearchConfig
from branchwise.search.roles import ModelRoles
from branchwise.store import default_store_path

from harness import Stack, in_extension
from test_cli_e2e import base_env

pytestmark = pytest.mark.e2e

OPTIONS = f"chrome-extension://{EXTENSION_ID}/options.html"


def cot(action: str, thought: str = "Let's think step-by-step.") -> str:
    return f"{thought} In summary, the next action I will perform is ```{action}```"


def start_page(request: Recorded, port: int) -> Reply | None:
    """Pages on 127.0.0.1 that link to the server's other name, localhost (another site for the lists)."""
    if request.route == "/start":
        return Reply(f"""<!doctype html><title>Start</title><main><h1>Start</h1>
            <a href="http://localhost:{port}/away?{request.path.partition('?')[2]}">Go elsewhere</a></main>""")
    return None


@pytest.fixture
def site() -> Iterator[RecordingServer]:
    with RecordingServer(start_page) as server:
        yield server


def set_site_lists(stack: Stack, allow: str = "", block: str = "") -> str:
    """Types the lists into the options page as a user does and saves; returns the page's complaint ("" if none)."""
    driver = stack.driver
    driver.switch_to.window(driver.window_handles[0])
    driver.switch_to.new_window("tab")
    driver.get(OPTIONS)
    try:
        wait = WebDriverWait(driver, 10)
        wait.until(lambda d: d.find_element(By.ID, "sites-form").get_attribute("data-loaded") == "true")
        for field_id, text in (("allow-sites", allow), ("block-sites", block)):
            box = driver.find_element(By.ID, field_id)
            box.clear()
            box.send_keys(text)
        driver.find_element(By.ID, "save-sites").click()
        wait.until(lambda d: d.find_element(By.ID, "sites-saved").text or d.find_element(By.ID, "sites-problem").text)
        return driver.find_element(By.ID, "sites-problem").text
    finally:
        driver.close()
        driver.switch_to.window(driver.window_handles[0])


@pytest.fixture(autouse=True)
def no_site_lists(stack: Stack) -> Iterator[None]:
    """The Chromium is shared by the module: every test leaves the lists empty."""
    yield
    in_extension(stack, "async () => chrome.storage.local.set({allowSites: [], blockSites: []})")


def user_tab(stack: Stack, url: str) -> int:
    """A tab the user opens themselves (never handed over); its extension tab id."""
    driver = stack.driver
    driver.switch_to.window(driver.window_handles[0])
    driver.switch_to.new_window("tab")
    driver.get(url)
    driver.switch_to.window(driver.window_handles[0])
    tab_id = in_extension(stack, f"async () => (await chrome.tabs.query({{url: {json.dumps(url)}}}))[0].id")
    assert isinstance(tab_id, int), tab_id
    return tab_id


def navigate_by_hand(stack: Stack, url_now: str, url_next: str) -> None:
    """The user (Selenium) takes the tab showing `url_now` to `url_next`, as typing in the address bar does."""
    driver = stack.driver
    for handle in driver.window_handles:
        driver.switch_to.window(handle)
        if driver.current_url == url_now:
            driver.get(url_next)
            driver.switch_to.window(driver.window_handles[0])
            return
    raise AssertionError(f"no tab shows {url_now}")


def refused(stack: Stack, coro: Any) -> ExtensionError:
    with pytest.raises(ExtensionError) as caught:
        stack.call(coro)
    return caught.value


# ---------------------------------------------------------------------------------------------------------------------
# Tabs not handed over, browser pages


def test_every_command_on_a_tab_not_handed_over_is_refused(stack: Stack, site: RecordingServer) -> None:
    browser = stack.session.browser
    private = user_tab(stack, f"{site.base_url}/private?who=user")
    ref = ElementRef(backend_node_id=1)
    for name, coro in [("observe", browser.observe(private)),
                       ("act", browser.act(private, ScrollCmd(direction="down"))),
                       ("inspect", browser.inspect(private, [ref])), ("activate", browser.activate_tab(private)),
                       ("guard", browser.guard_tab(private, True)), ("gate", browser.gate_tab(private, True)),
                       ("close", browser.close_tab(private))]:
        error = refused(stack, coro)
        assert error.code == "tab_not_handed_over", name
        assert error.message == f"tab {private} is not handed over to Branchwise", name
    assert private not in {t.tab_id for t in stack.call(browser.list_tabs())}


@pytest.mark.parametrize("page", ["chrome://version/", f"chrome-extension://{EXTENSION_ID}/options.html",
                                  "devtools://devtools/bundled/inspector.html"])
def test_a_handed_tab_that_goes_to_a_browser_or_extension_page_is_refused(stack: Stack, site: RecordingServer,
                                                                          page: str) -> None:
    browser = stack.session.browser
    start = f"{site.base_url}/handed?page={len(page)}{page[:6]}"
    tab = stack.call(browser.open_tab(start))
    assert stack.call(browser.observe(tab.tab_id)).url == start
    navigate_by_hand(stack, start, page)
    ref = ElementRef(backend_node_id=1)
    deadline = time.time() + 10
    while True:  # the address bar's navigation commits a moment later
        try:
            stack.call(browser.observe(tab.tab_id))
        except ExtensionError as exc:
            error = exc
            break
        assert time.time() < deadline, f"{page} was read"
        time.sleep(0.1)
    for err in (error, refused(stack, browser.act(tab.tab_id, ScrollCmd(direction="down"))),
                refused(stack, browser.inspect(tab.tab_id, [ref]))):
        assert err.code == "tab_not_handed_over" and err.message.startswith("Branchwise does not read or act on ")
        assert page.split("/")[2] in err.message
    stack.call(browser.close_tab(tab.tab_id))


def test_open_tab_refuses_browser_pages(stack: Stack) -> None:
    error = refused(stack, stack.session.browser.open_tab("chrome://settings/"))
    assert error.code == "invalid_message" and "only http(s) pages" in error.message


# ---------------------------------------------------------------------------------------------------------------------
# The user's site lists, set on the options page


def test_block_list_on_the_options_page_refuses_the_site(stack: Stack, site: RecordingServer) -> None:
    browser = stack.session.browser
    assert "is not a host name" in set_site_lists(stack, block="not a host!")  # nothing saved
    assert set_site_lists(stack, block="# never the other name\nlocalhost") == ""
    assert in_extension(stack, "async () => (await chrome.storage.local.get('blockSites')).blockSites") == ["localhost"]

    away = f"http://localhost:{site.port}/away?who=open"
    error = refused(stack, browser.open_tab(away))
    assert error.code == "site_not_allowed"
    assert error.message == ("localhost is on the extension's block list (localhost): Branchwise does not work "
                             "there")
    assert not any(r.who == "open" for r in site.requests), "the refused address was never loaded"

    tab = stack.call(browser.open_tab(f"{site.base_url}/start?who=click"))
    env = BrowserEnv(browser, tab.tab_id)
    view = stack.call(env.observe())
    goto = stack.call(env.execute(Goto(f"http://localhost:{site.port}/away?who=goto")))
    assert not goto.ok and "localhost is on the extension's block list" in goto.error
    assert not any(r.who == "goto" for r in site.requests)

    # The page takes the tab there itself (a link): from then on the tab is not read, nor driven.
    assert stack.call(env.execute(Click(element(view, "link", "Go elsewhere")))).ok
    with pytest.raises(SiteRefused, match=r"^localhost is on the extension's block list \(localhost\)"):
        stack.call(env.observe())
    for err in (refused(stack, browser.observe(tab.tab_id)),
                refused(stack, browser.act(tab.tab_id, ScrollCmd(direction="down"))),
                refused(stack, browser.inspect(tab.tab_id, [ElementRef(backend_node_id=1)]))):
        assert err.code == "site_not_allowed" and "localhost" in err.message
    stack.call(browser.close_tab(tab.tab_id))


def test_going_back_to_a_blocked_site_is_refused_as_opening_it_is(stack: Stack, site: RecordingServer) -> None:
    browser = stack.session.browser
    # The tab was on a site before the user blocked it: its history still holds it.
    tab = stack.call(browser.open_tab(f"http://localhost:{site.port}/away?who=before"))
    env = BrowserEnv(browser, tab.tab_id)
    assert stack.call(env.execute(Goto(f"{site.base_url}/start?who=now"))).ok
    assert set_site_lists(stack, block="localhost") == ""
    back = stack.call(env.execute(GoBack()))
    assert not back.ok and "localhost is on the extension's block list" in back.error
    assert [r.who for r in site.requests].count("before") == 1, "the blocked page was not loaded again"
    stack.call(browser.close_tab(tab.tab_id))


def test_going_back_to_a_page_that_is_not_http_is_refused(stack: Stack, site: RecordingServer) -> None:
    """The tab's history holds a `data:` page the user opened in it: going back there is opening it, and Branchwise
    opens only http(s) pages."""
    browser = stack.session.browser
    start = f"{site.base_url}/start?who=history"
    tab = stack.call(browser.open_tab(start))
    driver = stack.driver
    for handle in driver.window_handles:
        driver.switch_to.window(handle)
        if driver.current_url == start:
            break
    driver.get("data:text/html,<title>Local note</title><p>written here")
    driver.get(f"{site.base_url}/start?who=after")
    env = BrowserEnv(browser, tab.tab_id)
    back = stack.call(env.execute(GoBack()))
    assert not back.ok and "cannot go to data:text/html" in back.error
    assert "only http(s) addresses are allowed" in back.error
    assert driver.current_url == f"{site.base_url}/start?who=after", "the tab stayed where it was"
    stack.call(browser.close_tab(tab.tab_id))


PARITY = [  # (allow, block, url)
    ([], ["shop.example"], "https://shop.example/cart"),
    ([], ["shop.example"], "https://www.shop.example/"),
    ([], ["*.bank.example"], "https://bank.example/"),
    ([], ["*.bank.example"], "https://a.b.bank.example:8443/x"),
    ([], ["*.bank.example"], "https://evilbank.example/"),
    (["shop.example"], [], "https://other.example/"),
    (["shop.example"], [], "about:blank"),
    (["*.shop.example"], ["admin.shop.example"], "https://ADMIN.shop.example./"),
    (["*.shop.example"], ["admin.shop.example"], "https://www.shop.example/"),
    ([], ["xn--bcher-kva.example"], "https://bücher.example/"),
    (["127.0.0.1"], [], "http://127.0.0.1:8080/"),
    (["127.0.0.1"], [], "blob:http://localhost:8080/1f0c"),
]


def test_the_extension_and_the_backend_read_the_lists_alike(stack: Stack) -> None:
    """The same lists mean the same sites on both sides: the extension's lib/sites.js against safety/sites.py."""
    verdicts = in_extension(stack, f"""async () => {{
        const {{ siteRefusal, parseSiteList }} = await import("./lib/sites.js");
        return {json.dumps(PARITY)}.map(([allow, block, url]) => Boolean(siteRefusal(url, {{
            allow: parseSiteList(allow.join("\\n")).patterns, block: parseSiteList(block.join("\\n")).patterns }})));
    }}""")
    expected = [SiteRules.parse(allow, block).refusal(url) is not None for allow, block, url in PARITY]
    assert verdicts == expected
    assert expected == [True, False, True, True, False, True, False, True, False, True, False, True]


def test_allow_list_keeps_branchwise_to_the_listed_sites(stack: Stack, site: RecordingServer) -> None:
    browser = stack.session.browser
    assert set_site_lists(stack, allow="127.0.0.1\n*.shop.example") == ""
    tab = stack.call(browser.open_tab(f"{site.base_url}/start?who=allowed"))
    assert stack.call(browser.observe(tab.tab_id)).title == "Start"
    error = refused(stack, browser.open_tab(f"http://localhost:{site.port}/away?who=other"))
    assert error.code == "site_not_allowed" and error.message == (
        "localhost is not on the extension's allow list (127.0.0.1, *.shop.example): Branchwise does not work there")
    # The block list wins over the allow list.
    assert set_site_lists(stack, allow="127.0.0.1", block="127.0.0.1") == ""
    error = refused(stack, browser.observe(tab.tab_id))
    assert error.code == "site_not_allowed" and "127.0.0.1 is on the extension's block list" in error.message
    stack.call(browser.close_tab(tab.tab_id))


def test_a_run_cannot_be_started_from_the_side_panel_on_a_blocked_site(stack: Stack, site: RecordingServer) -> None:
    assert set_site_lists(stack, block="localhost") == ""
    tab_id = user_tab(stack, f"http://localhost:{site.port}/away?who=panel")
    reply = in_extension(stack, f"async () => chrome.runtime.sendMessage("
                                f"{{kind: 'start_run', tabId: {tab_id}, task: 'Read this page'}})")
    assert reply == {"error": "Branchwise cannot work here: localhost is on the extension's block list (localhost): "
                              "Branchwise does not work there. Change the lists on the options page."}
    error = refused(stack, stack.session.browser.observe(tab_id))
    assert error.code == "tab_not_handed_over"  # and it was not handed over


def element(view: EnvView, role: str, name: str) -> int:
    assert view.page is not None
    found = [e.id for e in view.page.elements.values() if e.role == role and e.name == name]
    assert found, f"no {role} '{name}' in:\n{view.text}"
    return found[0]


def test_a_run_whose_page_leaves_for_a_blocked_site_stops_with_the_reason(stack: Stack, site: RecordingServer) -> None:
    assert set_site_lists(stack, block="localhost") == ""
    tab = stack.call(stack.session.browser.open_tab(f"{site.base_url}/start?who=run"))
    rules = [Rule(reply=cot("click [{{id: link 'Go elsewhere'}}]"))]

    async def run(server: ScriptedModelServer) -> RunResult:
        config = LLMConfig(base_url=server.base_url, api_key=SecretStr("t"), model="m", max_retries=0)
        async with LLMClient(config) as client:
            agent = SearchAgent(ModelRoles.shared(client), stack.session.browser, SearchConfig(strategy="greedy"))
            return await agent.run("Find the other page", BrowserEnv(stack.session.browser, tab.tab_id), Reporters())

    with ScriptedModelServer(Script(rules=rules)) as server:
        result = stack.call(run(server))
        asked = len(server.requests())
    assert result.status == "failed" and asked == 1, result
    assert result.reason == ("stopped: localhost is on the extension's block list (localhost): Branchwise does not "
                             "work there")
    assert [s.action.split(" ")[0] for s in result.steps] == ["click"]



# ---------------------------------------------------------------------------------------------------------------------
# `branchwise run --block-site`


def cli(tmp_path: Path, model: ScriptedModelServer, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = base_env(tmp_path) | {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test",
                                "BRANCHWISE_MODEL": "scripted"}
    return subprocess.run([sys.executable, "-m", "branchwise.cli", *args, "--launch", "--headless",
                           "--data-dir", str(tmp_path / "data"), "--json", str(tmp_path / "result.json")],
                          env=env, input=stdin, capture_output=True, text=True, timeout=240)


def test_cli_block_site_refuses_a_goto_and_the_model_is_told_why(tmp_path: Path, site: RecordingServer) -> None:
    target = f"http://localhost:{site.port}/secret?who=goto"
    rules = [Rule(when_contains=["it cannot be done: localhost is on the backend's block list"], search_in="last_user",
                  reply=cot("stop [N/A]")),
             Rule(reply=cot(f"goto [{target}]"))]
    with ScriptedModelServer(Script(rules=rules)) as model:
        proc = cli(tmp_path, model, "run", "Open the secret page", "--start-url", f"{site.base_url}/start?who=cli",
                   "--block-site", "localhost", "--block-site", "*.bank.example")
        prompts = [r.last_user for r in model.requests()]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    reason = "localhost is on the backend's block list (localhost): Branchwise does not work there"
    # Refused before anything ran (greedy validates an action before it runs it), and the model told why.
    assert result["steps"][0]["error"] == f"not run: {reason}"
    assert f"PREVIOUS ACTION: goto [{target}] (it cannot be done: {reason})" in prompts[1]
    assert not any(r.who == "goto" for r in site.requests), "the blocked page was never loaded"
    assert any(r.who == "cli" for r in site.requests)


def test_cli_run_on_a_blocked_start_page_stops_at_once(tmp_path: Path, site: RecordingServer) -> None:
    with ScriptedModelServer(Script(rules=[Rule(reply=cot("stop [x]"))])) as model:
        proc = cli(tmp_path, model, "run", "Read it", "--start-url", f"http://localhost:{site.port}/start?who=blocked",
                   "--block-site", "localhost")
        asked = len(model.requests())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    reason = ("stopped before the start page was opened: localhost is on the backend's block list (localhost): "
              "Branchwise does not work there")
    assert f"Run failed: {reason}" in proc.stdout
    assert json.loads((tmp_path / "result.json").read_text())["reason"] == reason
    assert asked == 0 and not any(r.who == "blocked" for r in site.requests)


# ---------------------------------------------------------------------------------------------------------------------
# A typed password


def dump_store(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path)) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for table in tables for row in db.execute(f"SELECT * FROM {table}"))  # noqa: S608


def test_a_typed_password_reaches_the_page_but_not_the_model_logs_store_or_json(tmp_path: Path,
                                                                                shop: ShopServer) -> None:
    password = DEMO_USER.password
    rules = [
        Rule(name="account", when_regex=r"URL: \S*/account", search_in="last_user",
             reply=cot("stop [{{match: Emma Lopez}}]", "I am signed in and the account page names the user.")),
        Rule(name="password", when_contains=["PREVIOUS ACTION: type"], search_in="last_user",
             reply=cot(f"type [{{{{id: textbox 'Password'}}}}] [{password}] [1]",
                       f"The email is in. Now the password {password}, then Enter to sign in.")),
        Rule(name="email", when_contains=["textbox 'Email address'"], search_in="last_user",
             reply=cot(f"type [{{{{id: textbox 'Email address'}}}}] [{DEMO_USER.email}] [0]")),
    ]
    with ScriptedModelServer(Script(rules=rules)) as model:
        # -v: the backend logs at INFO; the sign-in POST is held by the network gate and approved on stdin.
        proc = cli(tmp_path, model, "-v", "run", "Sign in as Emma and tell me the name on her account",
                   "--start-url", f"{shop.base_url}/login", "--confirm", "ask", stdin="y\n")
        requests = model.requests()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["status"] == "finished" and result["answer"] == "Emma Lopez"  # the password really signed in
    assert [r.rule for r in requests] == ["email", "password", "account"]
    typed = result["steps"][1]["action"]
    assert typed.startswith("type [") and typed.endswith("] [••••••] [1]")
    assert "the page tried to send POST to" in proc.stdout and "[••••••]" in proc.stdout  # the gate's question

    seen = {
        "prompts": "\n".join(r.prompt_text for r in requests),  # every prompt, before and after the typing step
        "--json result": (tmp_path / "result.json").read_text(),
        "terminal and logs": proc.stdout + proc.stderr,
        "run store": dump_store(default_store_path(tmp_path / "data")),
    }
    for where, text in seen.items():
        assert password not in text, f"the password leaked into the {where}"
    assert "type [" in seen["run store"] and "[••••••]" in seen["run store"]
    assert "request_held" in seen["run store"]  # the audit rows are there, and clean


def test_a_card_number_in_the_task_is_masked_where_it_is_kept(tmp_path: Path, site: RecordingServer) -> None:
    card = "4242 4242 4242 4242"
    with ScriptedModelServer(Script(rules=[Rule(reply=cot("stop [done]"))])) as model:
        proc = cli(tmp_path, model, "-v", "run", f"Pay with card {card}", "--start-url", f"{site.base_url}/start")
        prompts = [r.last_user for r in model.requests()]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert card in prompts[0]  # the user's own task goes to their model as written
    for text in (proc.stdout + proc.stderr, (tmp_path / "result.json").read_text(),
                 dump_store(default_store_path(tmp_path / "data"))):
        assert card not in text and "4242424242424242" not in text

