"""Typed secrets (passwords, card numbers) never reach the model, the logs or the store: the decision, the masking, and
a greedy run over real HTTP that types a password into a saved sign-in form."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic import SecretStr

from branchwise.actions import SECRET_MASK, Click, Stop, Type
from branchwise.agent.env import BrowserEnv
from branchwise.agent.records import RunResult, StepRecord
from branchwise.core.classes import ActionClass, Classification
from branchwise.llm import LLMClient, LLMConfig
from branchwise.observation import PageView, process
from branchwise.observation.locator import Locator
from branchwise.protocol import ActResult, BrowserCmd, ElementRef, Observation, TypeCmd
from branchwise.safety.secrets import (
    SecretKeeper,
    contains_card_number,
    mask_card_numbers,
    mask_task,
    task_secrets,
    types_secret,
)
from branchwise.scripted_model import Rule, Script, ScriptedModelServer
from branchwise.search.context import words_for
from branchwise.search.generate import GenerationConfig, GenerationInput, Variation, generate_candidates
from branchwise.search.roles import RoleModel
from branchwise.search.trace import SearchTrace
from branchwise.search.tree import Node
from branchwise.store import RunRecord, RunStore, default_store_path

from agents import greedy_agent
from fake_models import FakeModel

FIXTURES = Path(__file__).parent / "fixtures" / "axtree"
PASSWORD = "correct-horse-battery"


def form_observation() -> Observation:
    return Observation.model_validate_json((FIXTURES / "form.json").read_text())


def element(page: PageView, role: str, name: str) -> int:
    return next(e.id for e in page.elements.values() if e.role == role and e.name == name)


@pytest.fixture(scope="module")
def form() -> PageView:
    return process(form_observation())


# ---------------------------------------------------------------------------------------------------------------------
# Card numbers in free text


@pytest.mark.parametrize(("text", "masked"), [
    ("pay with 4111 1111 1111 1111 please", f"pay with {SECRET_MASK} please"),
    ("4111-1111-1111-1111", SECRET_MASK),
    ("amex 378282246310005.", f"amex {SECRET_MASK}."),
    ("card 4111 1111 1111 1111 12", f"card {SECRET_MASK} 12"),  # the card number, not the digits after it
    ("order 1234567890123 of 2025", "order 1234567890123 of 2025"),  # 13 digits, Luhn fails
    ("call +49 30 1234 5678", "call +49 30 1234 5678"),
    ("", ""),
])
def test_card_numbers_are_masked_in_text(text: str, masked: str) -> None:
    assert mask_card_numbers(text) == masked
    assert contains_card_number(text) is (masked != text)


# ---------------------------------------------------------------------------------------------------------------------
# Which typing is secret


def test_password_and_card_fields_are_sensitive_filled_or_not(form: PageView) -> None:
    sensitive = {e.name for e in form.elements.values() if e.sensitive}
    assert {"Password", "Card number", "Gift code"} <= sensitive
    assert not {"Full name", "Email", "Notes", "Payment reference"} & sensitive
    # An empty field named like a password is sensitive too: typing into it types a secret.
    assert form.elements[element(form, "textbox", "Email")].value == ""
    marked = process(form_observation(), sensitive=[ElementRef(backend_node_id=element(form, "textbox", "Email"))])
    email = marked.elements[element(form, "textbox", "Email")]
    assert email.sensitive and not email.redacted and "textbox 'Email'\n" in marked.text + "\n"  # nothing to mask


def test_types_secret(form: PageView) -> None:
    password, notes = element(form, "textbox", "Password"), element(form, "textbox", "Notes")
    assert types_secret(Type(password, "x", False), form)
    assert types_secret(Type(notes, "use 4242 4242 4242 4242", False), form)  # a card number anywhere
    assert not types_secret(Type(notes, "leave it at the door", False), form)
    assert not types_secret(Click(password), form)
    assert not types_secret(Type(password, "x", False), None)  # no page, no field to know


def test_a_secret_type_shows_masked_but_acts_with_the_real_text(form: PageView) -> None:
    password = element(form, "textbox", "Password")
    action = Type(password, PASSWORD, True, secret=True)
    assert action.to_text() == f"type [{password}] [{SECRET_MASK}] [1]"
    assert PASSWORD not in repr(action) and PASSWORD not in str(action)
    assert action == Type(password, PASSWORD, True)  # the same keystrokes are the same action
    moved = dataclasses.replace(action, element_id=99)  # retargeting keeps the mark
    assert moved.secret and PASSWORD not in moved.to_text()
    env = BrowserEnv(None, 1)  # type: ignore[arg-type]
    env.last = type("V", (), {"page": form, "dialog": None})()
    assert env.command_for(action) == TypeCmd(element=form.ref(password), text=PASSWORD, press_enter=True)


def test_the_keeper_seals_actions_and_scrubs_what_follows(form: PageView) -> None:
    keeper = SecretKeeper()
    password = element(form, "textbox", "Password")
    action, thought = keeper.seal(Type(password, PASSWORD, False), f"I type {PASSWORD} as the task says", form)
    assert isinstance(action, Type) and action.secret and action.text == PASSWORD
    assert PASSWORD not in thought and SECRET_MASK in thought
    # Later text of the run: thoughts, answers.
    stop, later = keeper.seal(Stop(f"Signed in with {PASSWORD}"), f"{PASSWORD} worked", form)
    assert isinstance(stop, Stop) and stop.answer == f"Signed in with {SECRET_MASK}"
    assert later == f"{SECRET_MASK} worked"
    assert keeper.scrub("card 4111111111111111") == f"card {SECRET_MASK}"
    # A very short secret is masked in the action too.
    short, _ = SecretKeeper().seal(Type(password, "ab1", False), "typing", form)
    assert SECRET_MASK in short.to_text()


def test_generated_candidates_carry_the_masked_text(form: PageView) -> None:
    password = element(form, "textbox", "Password")
    answer = (f"I will type {PASSWORD}. "
              f"In summary, the next action I will perform is ```type [{password}] [{PASSWORD}] [0]```")

    keeper = SecretKeeper()
    data = GenerationInput(task="Sign in", observation=form.text, url=form.url, history=[])
    config = GenerationConfig(variations=(Variation(name="one", history=0),))
    model = RoleModel(FakeModel.always(answer), "policy")
    candidates, failures = asyncio.run(generate_candidates(model, data, config, form, secrets=keeper))
    assert not failures and len(candidates) == 1
    candidate = candidates[0]
    assert candidate.action_text == f"type [{password}] [{SECRET_MASK}] [0]"
    assert PASSWORD not in candidate.thought and candidate.action.text == PASSWORD  # type: ignore[union-attr]
    assert keeper.scrub(PASSWORD) == SECRET_MASK


# ---------------------------------------------------------------------------------------------------------------------
# A whole greedy run: the model is told nothing it should not see, and nothing is kept


@dataclass
class FormBrowser:
    """The extension on the saved sign-in form: records every command it is sent."""

    commands: list[BrowserCmd] = field(default_factory=list)

    async def observe(self, tab_id: int) -> Observation:
        return form_observation()

    async def act(self, tab_id: int, command: BrowserCmd, *, allow: object = (), settle: object = None) -> ActResult:
        self.commands.append(command)
        return ActResult(ok=True, url="http://shop.test/checkout")


@dataclass
class Collected:
    lines: list[str] = field(default_factory=list)

    async def started(self, run_id: str, task: str) -> None:
        self.lines.append(task)

    async def step(self, run_id: str, record: StepRecord) -> None:
        self.lines.append(record.model_dump_json())

    async def finished(self, result: RunResult) -> None:
        self.lines.append(result.model_dump_json())

    async def progress(self, run_id: str, text: str) -> None:
        self.lines.append(text)

    async def tree(self, update: object) -> None:
        self.lines.append(str(update))


def dump_store(path: Path) -> str:
    """Every row of every table of the run store, as text."""
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for table in tables for row in db.execute(f"SELECT * FROM {table}"))


def test_a_greedy_run_that_types_a_password_keeps_it_from_model_logs_and_store(
        form: PageView, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    password, card = element(form, "textbox", "Password"), element(form, "textbox", "Notes")
    rules = [
        Rule(name="done", when_contains=[f"PREVIOUS ACTION: typed '{SECRET_MASK}' into textbox 'Notes'"],
             search_in="last_user",
             reply=f"Both typed. In summary, the next action I will perform is ```stop [Signed in with {PASSWORD}]```"),
        Rule(name="card", when_contains=[f"PREVIOUS ACTION: typed '{SECRET_MASK}' into textbox 'Password'"],
             search_in="last_user", reply=f"Now the card. In summary, the next action I will perform is "
                   f"```type [{card}] [4111 1111 1111 1111] [0]```"),
        Rule(name="password", reply=f"The password is {PASSWORD}. In summary, the next action I will perform is "
                                    f"```type [{password}] [{PASSWORD}] [0]```"),
    ]
    browser = FormBrowser()
    reporter = Collected()
    caplog.set_level(logging.DEBUG)

    async def main(server: ScriptedModelServer, store: RunStore) -> RunResult:
        async with LLMClient(LLMConfig(base_url=server.base_url, api_key=SecretStr("t"), model="m",
                                       max_retries=0)) as client:
            agent = greedy_agent(client, store=store)
            env = BrowserEnv(browser, 1)  # type: ignore[arg-type]
            return await agent.run("Sign in and note card 5555 5555 5555 4444", env, reporter, run_id="r1")

    store_path = default_store_path(tmp_path)
    with ScriptedModelServer(Script(rules=rules)) as server, RunStore.open(store_path) as store:
        result = asyncio.run(main(server, store))
        prompts = [request.last_user for request in server.requests()]
        all_prompts = [request.prompt_text for request in server.requests()]
    assert result.status == "finished" and len(prompts) == 3

    # The extension got the real text: that command is the only place it goes.
    typed = [c.text for c in browser.commands if isinstance(c, TypeCmd)]
    assert typed == [PASSWORD, "4111 1111 1111 1111"]

    # What the model reads after each typing step: the step in words, masked, never the secret.
    assert f"PREVIOUS ACTION: typed '{SECRET_MASK}' into textbox 'Password'" in prompts[1]
    assert f"PREVIOUS ACTION: typed '{SECRET_MASK}' into textbox 'Notes'" in prompts[2]
    for later in all_prompts[1:]:
        assert PASSWORD not in later and "4111 1111 1111 1111" not in later
    # The user's task reaches the model as written (it is the user's own text for their model) ...
    assert "5555 5555 5555 4444" in prompts[0]

    # ... but nowhere else: not the result (--json), the reporters, the logs or any table of the store.
    kept = {
        "--json result": result.model_dump_json(),
        "reporters": "\n".join(reporter.lines),
        "logs": caplog.text,
        "store": dump_store(store_path),
    }
    for where, text in kept.items():
        for secret in (PASSWORD, "4111 1111 1111 1111", "4111111111111111", "5555 5555 5555 4444"):
            assert secret not in text, f"{secret!r} leaked into the {where}"
    assert f"type [{password}] [{SECRET_MASK}] [0]" in kept["store"]
    assert result.answer == f"Signed in with {SECRET_MASK}"
    assert result.task == f"Sign in and note card {SECRET_MASK}"


@pytest.mark.parametrize(("task", "secrets"), [
    ("Log in as alice with password hunter2 and buy a mug", ["hunter2"]),
    ("Sign in. Password: s3cr3t! Then open my orders", ["s3cr3t!"]),
    ('Use the password "correct horse battery" to log in', ["correct horse battery"]),
    ("My PIN is 4821.", ["4821"]),
    ("Change my password to Tr0ub4dor&3 please", ["Tr0ub4dor&3"]),
    ("Melde dich an, das Passwort ist geheim99", ["geheim99"]),
    ("Reset the password field and leave", []),
    ("Click 'Forgot password' on the login page", []),
    ("Find the password policy page", []),
])
def test_passwords_written_in_the_task_are_found(task: str, secrets: list[str]) -> None:
    assert task_secrets(task) == secrets
    shown = mask_task(task)
    assert all(secret not in shown for secret in secrets)
    assert (SECRET_MASK in shown) == bool(secrets)


def test_a_short_secret_is_scrubbed_as_a_whole_word_only(form: PageView) -> None:
    keeper = SecretKeeper()
    password = element(form, "textbox", "Password")
    _, thought = keeper.seal(Type(password, "ab1", False), "typing ab1, not cab12", form)
    assert thought == f"typing {SECRET_MASK}, not cab12"


def test_the_tasks_password_is_scrubbed_from_what_the_model_writes(form: PageView) -> None:
    keeper = SecretKeeper(task_secrets("Sign in with password Pw9 and check the balance"))
    stop, thought = keeper.seal(Stop("Signed in with Pw9"), "The password Pw9 worked", form)
    assert isinstance(stop, Stop) and stop.answer == f"Signed in with {SECRET_MASK}"
    assert thought == f"The password {SECRET_MASK} worked"


def test_a_password_written_in_the_task_is_kept_from_the_result_logs_and_store(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    task = "Sign in with password Pw9 and tell me my balance"
    rules = [Rule(name="answer", reply="I will use Pw9 to sign in. In summary, the next action I will perform is "
                                       "```stop [Signed in with Pw9; the balance is $12]```")]
    reporter = Collected()
    caplog.set_level(logging.DEBUG)

    async def main(server: ScriptedModelServer, store: RunStore) -> RunResult:
        async with LLMClient(LLMConfig(base_url=server.base_url, api_key=SecretStr("t"), model="m",
                                       max_retries=0)) as client:
            env = BrowserEnv(FormBrowser(), 1)  # type: ignore[arg-type]
            return await greedy_agent(client, store=store).run(task, env, reporter, run_id="r2")

    store_path = default_store_path(tmp_path)
    with ScriptedModelServer(Script(rules=rules)) as server, RunStore.open(store_path) as store:
        result = asyncio.run(main(server, store))
        first_prompt = server.requests()[0].last_user
    assert "password Pw9 and" in first_prompt  # the model reads the task as the user wrote it
    assert result.task == f"Sign in with password {SECRET_MASK} and tell me my balance"
    assert result.answer == f"Signed in with {SECRET_MASK}; the balance is $12"
    for where, text in {"--json result": result.model_dump_json(), "reporters": "\n".join(reporter.lines),
                        "logs": caplog.text, "store": dump_store(store_path)}.items():
        assert "Pw9" not in text, f"the task's password leaked into the {where}"


@dataclass
class WatchedFormBrowser(FormBrowser):
    """The form, noting at each command how many of run r3's model calls the store holds by then, and whether the
    store shows the password."""

    store: RunStore | None = None
    store_path: Path | None = None
    stored_calls: list[int] = field(default_factory=list)
    password_stored: list[bool] = field(default_factory=list)

    async def act(self, tab_id: int, command: BrowserCmd, *, allow: object = (), settle: object = None) -> ActResult:
        assert self.store is not None and self.store_path is not None
        self.stored_calls.append(len(self.store.model_calls("r3")))
        self.password_stored.append(PASSWORD in dump_store(self.store_path))
        return await super().act(tab_id, command, allow=allow, settle=settle)


def test_model_calls_are_stored_as_the_run_goes_and_a_password_named_early_is_scrubbed_before_it_is_typed(
        form: PageView, tmp_path: Path) -> None:
    password, notes = element(form, "textbox", "Password"), element(form, "textbox", "Notes")
    rules = [
        Rule(name="done", when_contains=[f"PREVIOUS ACTION: typed '{SECRET_MASK}' into textbox 'Password'"],
             search_in="last_user", reply="Signed in. In summary, the next action I will perform is ```stop [done]```"),
        Rule(name="password", when_contains=["PREVIOUS ACTION: typed 'hello' into textbox 'Notes'"],
             search_in="last_user",
             reply=f"In summary, the next action I will perform is ```type [{password}] [{PASSWORD}] [0]```"),
        Rule(name="note", reply=f"The task's note says the password is {PASSWORD}; first the note. "
                                f"In summary, the next action I will perform is ```type [{notes}] [hello] [0]```"),
    ]
    store_path = default_store_path(tmp_path)
    with ScriptedModelServer(Script(rules=rules)) as server, RunStore.open(store_path) as store:
        browser = WatchedFormBrowser(store=store, store_path=store_path)

        async def main() -> RunResult:
            async with LLMClient(LLMConfig(base_url=server.base_url, api_key=SecretStr("t"), model="m",
                                           max_retries=0)) as client:
                env = BrowserEnv(browser, 1)  # type: ignore[arg-type]
                return await greedy_agent(client, store=store).run("Sign in", env, Collected(), run_id="r3")

        result = asyncio.run(main())
        calls, stored = store.model_calls("r3"), store.load_run("r3")
    assert result.status == "finished"
    # A backend killed while an action runs keeps the calls that led to it.
    assert browser.stored_calls == [1, 2]
    # The first reply and its thought were stored before the run knew the password was one: on record while the note
    # is typed, scrubbed before the password is (a backend killed then keeps no password), and the result shows them
    # scrubbed.
    assert browser.password_stored == [True, False]
    said = f"The task's note says the password is {SECRET_MASK}"
    assert calls[0].replies[0].startswith(said) and stored.nodes[1].thought.startswith(said)
    assert PASSWORD not in dump_store(store_path) and PASSWORD not in result.model_dump_json()


def test_a_node_written_again_after_the_run_learns_a_secret_is_scrubbed_of_it(form: PageView, tmp_path: Path) -> None:
    password = element(form, "textbox", "Password")
    keeper = SecretKeeper()
    _, thought = keeper.seal(Click(element_id=password), f"The note says the password is {PASSWORD}.", form)
    node = Node(id=1, parent_id=0, depth=1, url="http://site/login", action_text=f"click [{password}]",
                thought=thought)

    async def main(store: RunStore) -> None:
        trace = SearchTrace("r4", "greedy", Collected(), store, secrets=keeper)
        await trace.node(node)
        keeper.seal(Type(element_id=password, text=PASSWORD, press_enter=True), "", form)
        node.status = "expanded"
        await trace.node(node)

    with RunStore.open(default_store_path(tmp_path)) as store:
        store.start_run(RunRecord(run_id="r4", task="Sign in"))
        asyncio.run(main(store))
        assert store.load_run("r4").nodes[0].thought == f"The note says the password is {SECRET_MASK}."


def test_an_answer_proposed_before_the_run_learns_a_secret_is_stored_scrubbed_of_it_everywhere(form: PageView,
                                                                                    tmp_path: Path) -> None:
    password = element(form, "textbox", "Password")
    keeper = SecretKeeper()
    said = f"The password is {PASSWORD}"
    stop = Node(id=1, parent_id=0, depth=1, url="http://site/login", action_text=f"stop [{said}]", answer=said)
    refused = Node(id=2, parent_id=0, depth=1, url="http://site/login", action_text="click [3]", status="invalid",
                   note=f"not run: {said} is not on the page")

    async def main(store: RunStore) -> None:
        trace = SearchTrace("r5", "best_first", Collected(), store, secrets=keeper)
        # A candidate stop, classified and stored while the password was not yet known to be one.
        await trace.classified(0, stop.action_text, Classification(ActionClass.TERMINATING, ("it ends the run",)))
        await trace.node(stop)
        await trace.node(refused)
        keeper.seal(Type(element_id=password, text=PASSWORD, press_enter=True), "", form)  # a sibling types it
        await trace.writer.finish("finished", said, scrub=keeper.scrub)

    store_path = default_store_path(tmp_path)
    with RunStore.open(store_path) as store:
        store.start_run(RunRecord(run_id="r5", task="Sign in"))
        asyncio.run(main(store))
        run = store.load_run("r5")
    assert run.nodes[0].answer == run.run.answer == f"The password is {SECRET_MASK}"
    assert run.nodes[1].note == f"not run: The password is {SECRET_MASK} is not on the page"
    assert run.classifications[0].action_text == run.nodes[0].action_text == f"stop [The password is {SECRET_MASK}]"
    assert PASSWORD not in dump_store(store_path)


def test_a_secret_typed_again_is_masked_in_the_history_though_quoting_would_escape_it(form: PageView) -> None:
    """A password holding both quote kinds, once typed into its field, is typed again into a field that is not a
    secret one: the history tells that step in words, and quoting the text would escape it out of scrub's reach."""
    secret = "a'b\"c-9f"
    keeper = SecretKeeper()
    keeper.seal(Type(element(form, "textbox", "Password"), secret, press_enter=False), "", form)
    notes = Locator(role="textbox", name="Notes", occurrence=0)
    told = words_for(Type(element(form, "textbox", "Notes"), f"pw {secret}", press_enter=False), notes, keeper.scrub)
    assert told == f"typed 'pw {SECRET_MASK}' into textbox 'Notes'"
    assert "b\\'" not in told and "9f" not in told
