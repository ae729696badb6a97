"""`type` types as a keyboard does: a trusted key press per character, so date and time inputs, number fields, masked
fields, keydown-driven widgets and editors all get the text; what no key types (emoji, accented letters) is inserted.

Each result is read through Selenium, independently of Branchwise's own observation.
"""

from __future__ import annotations

import pytest

from branchwise.actions import Type
from branchwise.agent.env import BrowserEnv, EnvView

from harness import Stack, in_page

pytestmark = pytest.mark.e2e


@pytest.fixture
def lab(stack: Stack, pages_port: int, request: pytest.FixtureRequest) -> tuple[BrowserEnv, str]:
    url = f"http://127.0.0.1:{pages_port}/typing.html?test={request.node.name}"
    tab = stack.call(stack.session.browser.open_tab(url))
    return BrowserEnv(stack.session.browser, tab.tab_id), url


def observe(stack: Stack, env: BrowserEnv) -> EnvView:
    return stack.call(env.observe())


def element(view: EnvView, name: str, role: str | None = None) -> int:
    assert view.page is not None
    found = [e.id for e in view.page.elements.values() if e.name == name and role in (None, e.role)]
    assert found, f"no {role or 'element'} '{name}' in:\n{view.text}"
    return found[0]


def type_into(stack: Stack, env: BrowserEnv, name: str, text: str, role: str | None = None,
              press_enter: bool = False) -> None:
    target = element(observe(stack, env), name, role)
    result = stack.call(env.execute(Type(target, text, press_enter=press_enter)))
    assert result.ok, result.error


def keydowns(stack: Stack, url: str, element_id: str) -> int:
    count: int = in_page(stack, url, f"return window.keydowns[{element_id!r}] || 0")
    return count


def test_a_date_input_takes_an_iso_date_and_its_fields_take_keys(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    type_into(stack, env, "Start date", "2024-03-15")
    assert in_page(stack, url, "return document.getElementById('start').value") == "2024-03-15"
    # Chromium shows a date input as Month / Day / Year spinbuttons; typing into each one goes key by key.
    view = observe(stack, env)
    assert view.page is not None
    elements = view.page.elements
    arrival = element(view, "Arrival date")

    def under_arrival(element_id: int | None) -> bool:
        while element_id is not None and element_id != arrival:
            element_id = elements[element_id].parent
        return element_id == arrival

    # Chromium names them "Month Month", "Day Day", "Year Year".
    fields = {e.name.split()[0]: e.id for e in elements.values() if e.role == "spinbutton" and under_arrival(e.parent)}
    assert set(fields) == {"Month", "Day", "Year"}, view.text
    for name, text in (("Month", "07"), ("Day", "04"), ("Year", "2025")):
        result = stack.call(env.execute(Type(fields[name], text, press_enter=False)))
        assert result.ok, result.error
    assert in_page(stack, url, "return document.getElementById('arrival').value") == "2025-07-04"


def test_a_time_input_and_a_number_field(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    type_into(stack, env, "Alarm", "09:30")
    type_into(stack, env, "Quantity", "12")
    assert in_page(stack, url, "return [document.getElementById('alarm').value,"
                               " document.getElementById('quantity').value]") == ["09:30", "12"]
    assert keydowns(stack, url, "quantity") == 2


def test_a_masked_field_that_reads_keydown_gets_every_digit(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    type_into(stack, env, "Phone", "5551234567")
    assert in_page(stack, url, "return document.getElementById('phone').value") == "(555) 123-4567"
    # Typing again clears first: the field is selected, and the mask starts over.
    type_into(stack, env, "Phone", "2125550100")
    assert in_page(stack, url, "return document.getElementById('phone').value") == "(212) 555-0100"


def test_a_keydown_console_and_a_custom_spinbutton(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    type_into(stack, env, "Console", "echo hi", press_enter=True)
    assert in_page(stack, url, "return document.getElementById('output').textContent") == "ran: echo hi\n"
    type_into(stack, env, "Guests", "4", role="spinbutton")
    assert in_page(stack, url, "return document.getElementById('guests').getAttribute('aria-valuenow')") == "4"


def test_an_editor_gets_keys_and_what_no_key_types_is_inserted(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, url = lab
    type_into(stack, env, "Editor", "Hello, world!")
    assert in_page(stack, url, "return document.getElementById('editor').innerText.trim()") == "Hello, world!"
    assert keydowns(stack, url, "editor") == len("Hello, world!")
    text = "Tea 🍵 naïve\nsecond line"
    type_into(stack, env, "Note", text)
    assert in_page(stack, url, "return document.getElementById('note').value") == text
    # Keys for what a US keyboard types; the emoji, the ï and the newline are inserted, never pressed.
    assert keydowns(stack, url, "note") == sum(1 for c in text if c.isascii() and c != "\n")


def test_typing_into_a_button_is_refused(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, _ = lab
    result = stack.call(env.execute(Type(element(observe(stack, env), "OK", "button"), "hello", press_enter=False)))
    assert not result.ok
    assert "not a text field" in result.error


def test_the_next_observation_waits_for_a_debounced_autocomplete(stack: Stack, lab: tuple[BrowserEnv, str]) -> None:
    env, _ = lab
    target = element(observe(stack, env), "City", "combobox")
    result = stack.call(env.execute(Type(target, "Ber", press_enter=False)))
    assert result.ok, result.error
    # The suggestions come 300 ms after the last key and a request: the wait saw both and says how long it took.
    assert result.settled and result.settle_ms is not None and result.settle_ms >= 300
    text = observe(stack, env).text
    assert all(f"option '{city}'" in text for city in ("Bergen", "Berlin", "Bern")), text
    assert "option 'Boston'" not in text
