"""Typed actions: canonical text, both parse syntaxes, chain-of-thought extraction and the error messages."""

from __future__ import annotations

import re

import pytest

from branchwise.actions import (
    ACTION_TYPES,
    VALID_ACTIONS,
    VALID_CALLS,
    Action,
    ActionParseError,
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
    normalize_keys,
    parse_action,
    parse_response,
)

EVERY_ACTION: list[Action] = [
    Click(12),
    Hover(3),
    Type(12, "hello world", True),
    Type(5, "size [L]", False),
    Type(5, "a] [0", True),
    Type(7, "", False),
    Type(8, "line one\nline two", True),
    Type(8, "Hello.\n  click [3] here;\n\nbye", False),
    Press("Control+a"),
    Press("Enter", 4),
    Press("Meta+Shift+T"),
    Scroll("up"),
    Scroll("down"),
    SelectOption(12, ("Blue",)),
    SelectOption(12, ("Blue", "Red")),
    SelectOption(2, ("Size [L]",)),
    Goto("https://example.com/a?b=[1]"),
    GoBack(),
    GoForward(),
    NewTab(),
    NewTab("https://example.com"),
    TabFocus(1),
    CloseTab(),
    Stop("42"),
    Stop(""),
    Stop("N/A"),
]


# --- formatting and round-trips -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "text"),
    [
        (Click(12), "click [12]"),
        (Hover(12), "hover [12]"),
        (Type(12, "hello world", True), "type [12] [hello world] [1]"),
        (Type(12, "hello world", False), "type [12] [hello world] [0]"),
        (Press("Control+a"), "press [Control+a]"),
        (Press("Enter", 12), "press [12] [Enter]"),
        (Scroll("down"), "scroll [down]"),
        (SelectOption(12, ("Blue",)), "select_option [12] [Blue]"),
        (SelectOption(12, ("Blue", "Red")), "select_option [12] [Blue] [Red]"),
        (Goto("http://x"), "goto [http://x]"),
        (GoBack(), "go_back"),
        (GoForward(), "go_forward"),
        (NewTab(), "new_tab"),
        (NewTab("http://x"), "new_tab [http://x]"),
        (TabFocus(1), "tab_focus [1]"),
        (CloseTab(), "close_tab"),
        (Stop("answer"), "stop [answer]"),
        (Stop(), "stop []"),
    ],
)
def test_to_text_is_webarena_syntax(action: Action, text: str) -> None:
    assert action.to_text() == text


@pytest.mark.parametrize("action", EVERY_ACTION, ids=lambda a: a.to_text())
def test_round_trip(action: Action) -> None:
    assert parse_action(action.to_text()) == action


def test_round_trip_covers_every_type() -> None:
    assert {type(a) for a in EVERY_ACTION} == set(ACTION_TYPES)


def test_element_id_property() -> None:
    targeted = (Click, Hover, Type, SelectOption)
    for action in EVERY_ACTION:
        if isinstance(action, targeted):
            assert isinstance(action.element_id, int)
        elif not isinstance(action, Press):
            assert action.element_id is None
    assert Type(9, "x", True).element_id == 9
    assert Press("Enter").element_id is None
    assert Press("Enter", 4).element_id == 4
    assert Stop("x").element_id is None


def test_actions_are_immutable_and_hashable() -> None:
    action = Click(1)
    with pytest.raises(AttributeError):
        action.element_id = 2  # type: ignore[misc]
    assert len({Click(1), Click(1), SelectOption(1, ["a"]), SelectOption(1, ("a",))}) == 2  # type: ignore[arg-type]


def test_invalid_construction() -> None:
    with pytest.raises(ValueError, match="up' or 'down"):
        Scroll("left")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one value"):
        SelectOption(1, ())


# --- WebArena bracket syntax --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("click [12]", Click(12)),
        ("CLICK [ 12 ]", Click(12)),
        ("click[12]", Click(12)),
        ("  click   [12]  ", Click(12)),
        ("click [12] where [12] is the Submit button", Click(12)),
        ("click ['12']", Click(12)),
        ("hover [7]", Hover(7)),
        ("type [12] [hello] [0]", Type(12, "hello", False)),
        ("type [12] [hello]", Type(12, "hello", True)),
        ("type [12] [hello] [press_enter_after=0]", Type(12, "hello", False)),
        ("type [12] [hello] [true]", Type(12, "hello", True)),
        ("type [5] [size [L]] [0]", Type(5, "size [L]", False)),
        ("type [5] [1]", Type(5, "1", True)),
        ("type [5] [1] [0]", Type(5, "1", False)),
        ("type [5] [a] [2]", Type(5, "a] [2", True)),
        ("type [5] [ padded ] [1]", Type(5, " padded ", True)),
        ("press [Control+a]", Press("Control+a")),
        ("press [ctrl+A]", Press("Control+A")),
        ("press [enter]", Press("Enter")),
        ("press [12] [Enter]", Press("Enter", 12)),
        ("scroll [down]", Scroll("down")),
        ("scroll [UP]", Scroll("up")),
        ("scroll [direction=down]", Scroll("down")),
        ("scroll [direction='up']", Scroll("up")),
        ("scroll down", Scroll("down")),
        ("scroll UP", Scroll("up")),
        ("scroll down [1]", Scroll("down")),
        ("scroll up [1] [500]", Scroll("up")),
        ("scroll [down] [1]", Scroll("down")),
        ("select_option [12] [Blue]", SelectOption(12, ("Blue",))),
        ("select_option [12] [Blue] [Red]", SelectOption(12, ("Blue", "Red"))),
        ("select_option [12] [Size [L]]", SelectOption(12, ("Size [L]",))),
        ("select_option [12] [a]]", SelectOption(12, ("a]",))),
        ("goto [https://example.com]", Goto("https://example.com")),
        ("goto https://example.com", Goto("https://example.com")),
        ("go_back", GoBack()),
        ("go_back []", GoBack()),
        ("Go_Forward", GoForward()),
        ("new_tab", NewTab()),
        ("tab_focus [2]", TabFocus(2)),
        ("tab_focus 1", TabFocus(1)),
        ("close_tab", CloseTab()),
        ("stop [The answer is 42]", Stop("The answer is 42")),
        ("stop [answer [with] brackets]", Stop("answer [with] brackets")),
        ("stop []", Stop("")),
        ("stop", Stop("")),
        ("stop 42", Stop("42")),
        ("stop [N/A]", Stop("N/A")),
    ],
)
def test_bracket_syntax(text: str, action: Action) -> None:
    assert parse_action(text) == action


# --- BrowserGym call syntax ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("click('12')", Click(12)),
        ('click("12", button="left")', Click(12)),
        ("click('12', modifiers=['Control'])", Click(12)),
        ("click(12)", Click(12)),
        ("Click('12')", Click(12)),
        ("dblclick('12')", Click(12)),
        ("hover('12')", Hover(12)),
        ("fill('12', 'text')", Type(12, "text", False)),
        ("fill('12', 'size [L]')", Type(12, "size [L]", False)),
        ("fill('12', 'text', press_enter=True)", Type(12, "text", True)),
        ("fill('12', 'text', press_enter=true)", Type(12, "text", True)),
        ("fill('12', 'true story', enable_autocomplete_menu=false)", Type(12, "true story", False)),
        ("fill('12', 42)", Type(12, "42", False)),
        ("select_option('12', 'Blue')", SelectOption(12, ("Blue",))),
        ("select_option('12', ['Blue', 'Red'])", SelectOption(12, ("Blue", "Red"))),
        ("press('12', 'Enter')", Press("Enter", 12)),
        ("press('12', 'ControlOrMeta+a')", Press("ControlOrMeta+a", 12)),
        ("press('Enter')", Press("Enter")),
        ("keyboard_press('Enter')", Press("Enter")),
        ("keyboard_press('cmd+shift+T')", Press("Meta+Shift+T")),
        ("scroll(0, 200)", Scroll("down")),
        ("scroll(0, -200.5)", Scroll("up")),
        ("scroll('down')", Scroll("down")),
        ("goto('https://example.com')", Goto("https://example.com")),
        ("go_back()", GoBack()),
        ("go_forward()", GoForward()),
        ("new_tab()", NewTab()),
        ("tab_focus(1)", TabFocus(1)),
        ("tab_close()", CloseTab()),
        ("send_msg_to_user('answer')", Stop("answer")),
        ("report_infeasible('no such product')", Stop("N/A")),
        ("type('5', 'hi', 0)", Type(5, "hi", False)),
        ("stop('done')", Stop("done")),
        ("close_tab()", CloseTab()),
        ("click ('12')", Click(12)),
        ("click('12')  # the submit button", Click(12)),
        ("click('12');", Click(12)),
    ],
)
def test_call_syntax(text: str, action: Action) -> None:
    assert parse_action(text) == action


# --- key combinations ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("Enter", "Enter"),
        ("ctrl+a", "Control+a"),
        ("Control+a", "Control+a"),
        ("cmd+shift+t", "Meta+Shift+t"),
        ("META+Shift+T", "Meta+Shift+T"),
        ("option+esc", "Alt+Escape"),
        ("Alt + Tab", "Alt+Tab"),
        ("Control++", "Control++"),
        ("+", "+"),
        ("pagedown", "PageDown"),
        ("ArrowDown", "ArrowDown"),
        ("KeyA", "a"),
        ("shift+Digit1", "Shift+1"),
        ("ControlOrMeta+a", "ControlOrMeta+a"),
    ],
)
def test_normalize_keys(raw: str, canonical: str) -> None:
    assert normalize_keys(raw) == canonical


@pytest.mark.parametrize(("raw", "error"), [
    # A real Qwen2.5-Coder-1.5B answer, `press [171]`: sent as it was, the extension refused the key and the run
    # stopped. Refused here, it is fed back like any invalid action.
    ("171", "unknown key '171' in press [171]: press takes a key such as Enter"),
    ("Submit", "unknown key 'Submit' in press [Submit]"),
    ("a+b", "'a' is not a modifier key in 'a+b'"),
    ("Enter+Tab", "'Enter' is not a modifier key"),
])
def test_keys_the_browser_cannot_press_are_refused_before_they_are_sent(raw: str, error: str) -> None:
    with pytest.raises(ActionParseError, match=re.escape(error)):
        normalize_keys(raw)
    with pytest.raises(ActionParseError, match=re.escape(error)):
        parse_action(f"press [{raw}]")
    assert "click [171]" in str(pytest.raises(ActionParseError, parse_action, "press [171]").value)


# --- chain of thought and auto-correction -------------------------------------------------------------------------

COT = (
    "Let's think step-by-step. The page lists ```[1234] link 'Orders'``` and the search box.\n"
    "I should open the orders. In summary, the next action I will perform is ```click [1234]```"
)


def test_cot_takes_fence_after_phrase() -> None:
    parsed = parse_response(COT)
    assert parsed.action == Click(1234)
    assert parsed.action_text == "click [1234]"
    assert parsed.thought.startswith("Let's think step-by-step.")
    assert parsed.thought.endswith("I should open the orders.")
    assert "next action" not in parsed.thought


# Two real Qwen2.5-Coder-1.5B replies (bench-real, task 3002): a plan of later steps, each with the phrase, cut at the
# token limit; and a second reply after the first. The first phrase's action is the one for this step.
RUN_ON_PLAN = (
    "Let's think step-by-step. The objective is to find the Rate Limiter project and count its open issues.\n\n"
    "1. Navigate to the \"Projects\" page:\n"
    "   - In summary, the next action I will perform is ```goto http://127.0.0.1:40681/projects```\n\n"
    "2. Find the Rate Limiter project:\n   - In summary, the next action I will perform is ```click [411]```\n\n"
    "3. Count the open issues:\n   - In summary, the next action I will perform is ```click [438]```\n\n"
    "4. Count the open issues:\n    -"
)
SECOND_REPLY = (
    "Let's think step-by-step. The project is not on this screen. In summary, the next action I will perform is "
    "```scroll [down]```\n\nLet's think step-by-step. We need to find the Rate Limiter project.\n"
    "I will stop when I have counted them. In summary, the next action I will perform is ```stop [52]```"
)


@pytest.mark.parametrize(("text", "action", "rest"), [
    (RUN_ON_PLAN, Goto("http://127.0.0.1:40681/projects"), "In summary, the next action I will perform is ```click"),
    (SECOND_REPLY, Scroll("down"), "In summary, the next action I will perform is ```stop [52]```"),
])
def test_cot_takes_the_first_phrase_and_drops_the_rest(text: str, action: Action, rest: str) -> None:
    parsed = parse_response(text)
    assert parsed.action == action
    assert parsed.dropped.startswith(rest)
    assert "next action" not in parsed.thought


def test_cot_skips_a_phrase_whose_action_does_not_read() -> None:
    text = (
        "I must end with the next action I will perform is ```<action>```. The search box is [5], so in summary, "
        "the next action I will perform is ```type [5] [shoes] [1]``` which submits ```shoes```."
    )
    parsed = parse_response(text)
    assert parsed.action == Type(5, "shoes", True)
    assert parsed.dropped == ""


def test_cot_fence_belongs_to_its_own_phrase() -> None:
    text = "The next action I will perform is: `scroll [down]`.\nOr the next action I will perform is ```click [3]```"
    assert parse_response(text).action == Scroll("down")


def test_cot_phrase_without_fence_reads_rest_of_line() -> None:
    parsed = parse_response("Thinking.\nIn summary, the next action I will perform is: `scroll [down]`.\nDone.")
    assert parsed.action == Scroll("down")
    assert parsed.thought == "Thinking."


def test_without_phrase_last_fence_wins() -> None:
    parsed = parse_response("Options: ```click [1]``` or ```hover [2]```.\nI pick:\n```\nclick [3]\n```\n")
    assert parsed.action == Click(3)
    assert parsed.thought == "Options: ```click [1]``` or ```hover [2]```.\nI pick:"


def test_unclosed_last_fence() -> None:
    assert parse_response("thinking ```click [1]``` then ```go_back").action == GoBack()
    assert parse_response("In summary, the next action I will perform is ```stop [7]").action == Stop("7")


def test_language_tag_is_stripped() -> None:
    assert parse_response("Plan.\n```python\nfill('3', 'hi')\n```").action == Type(3, "hi", False)
    assert parse_response("```go_back\n```").action == GoBack()
    assert parse_action("```text\nclick [4]\n```") == Click(4)


def test_no_fence_uses_last_line() -> None:
    parsed = parse_response("I will go back now.\nAction: go_back")
    assert parsed.action_text == "Action: go_back"
    assert parsed.action == parse_response("I will go back now.\n  go_back  \n\n").action
    assert parsed.action == GoBack()
    assert parsed.thought == "I will go back now."


def test_several_actions_take_first_valid() -> None:
    text = "In summary, the next action I will perform is ```\nI'll click it\nclick [5]\ntype [6] [x] [0]\n```"
    assert parse_response(text).action == Click(5)
    assert parse_action("clik [1]\nhover [2]") == Hover(2)


@pytest.mark.parametrize(
    ("text", "action", "dropped"),
    [
        # A real Qwen2.5-Coder-1.5B answer: before the cut it typed "The Left Hand of Darkness] [1] hover [31".
        ("type [3] [The Left Hand of Darkness] [1] hover [31] [1]", Type(3, "The Left Hand of Darkness", True),
         "hover [31] [1]"),
        ("click [12] click [13]", Click(12), "click [13]"),
        ("click [12] go_back", Click(12), "go_back"),
        ("stop [done]stop [done]", Stop("done"), "stop [done]"),
        ("select_option [4] [Blue] type [5] [x]", SelectOption(4, ("Blue",)), "type [5] [x]"),
        # Brackets and action words inside one argument are not a second action.
        ("stop [see [5] then click [3]]", Stop("see [5] then click [3]"), ""),
        ("type [5] [click [here]] [1]", Type(5, "click [here]", True), ""),
        ("stop [It costs $5 [approx]]", Stop("It costs $5 [approx]"), ""),
    ],
)
def test_a_second_action_on_the_same_line_is_cut_off(text: str, action: Action, dropped: str) -> None:
    assert parse_action(text) == action
    parsed = parse_response(f"Let's think. In summary, the next action I will perform is ```{text}```")
    # What was cut off is said, so it can be counted as the model's mistake.
    assert (parsed.action, parsed.dropped) == (action, dropped)


def test_multi_line_type_text() -> None:
    assert parse_action("type [5] [hello\nstop] [0]") == Type(5, "hello\nstop", False)
    # The shortest run of lines that parses wins, so a following action is not swallowed into the text.
    assert parse_action("type [5] [a\nb] [0]\nclick [3]") == Type(5, "a\nb", False)
    assert parse_action("type [5] [a\r\nb] [0]") == Type(5, "a\r\nb", False)


def test_cot_json_booleans_in_calls() -> None:
    text = "In summary, the next action I will perform is ```fill('8', 'false alarm', press_enter=false)```"
    assert parse_response(text).action == Type(8, "false alarm", False)


# --- errors: each message must say what was wrong and the valid syntax ---------------------------------------------


def _error(text: str) -> str:
    with pytest.raises(ActionParseError) as info:
        parse_action(text)
    return str(info.value)


def test_unknown_action_names_valid_ones() -> None:
    message = _error("clik [12]")
    assert message.startswith("Unknown action 'clik'. Did you mean 'click'? Valid actions: click [id], hover [id], ")
    assert "type [id] [text] [0|1]" in message
    assert message.endswith(VALID_ACTIONS)
    assert "Did you mean" not in _error("frobnicate [1]")


def test_a_reply_in_prose_is_told_the_format_not_an_unknown_action() -> None:
    """Told "Unknown action 'i'" for "I apologize, …", a real 1.5B model answered stop [Unknown action 'i'. …]."""
    for prose in ("I apologize, but there is no element with the id 767 on this page.",
                  "Therefore, the answer is on the next page."):
        with pytest.raises(ActionParseError) as info:
            parse_response(prose)
        assert str(info.value).startswith("No action found. End your reply with: In summary, the next action I will")
    # A misspelt action keeps its hint, and an action in prose's place still parses.
    with pytest.raises(ActionParseError, match="Did you mean 'click'"):
        parse_response("clik [12]")
    assert parse_response("Going on.\nscroll [down]").action == parse_action("scroll [down]")


def test_unknown_call_names_valid_calls() -> None:
    message = _error("clik('12')")
    assert message == f"Unknown action 'clik'. Did you mean 'click'? Valid actions: {VALID_CALLS}"
    assert "fill('id', 'text')" in message and "send_msg_to_user('answer')" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click", "click needs an element id in brackets, e.g. click [12]"),
        ("click 12", "click needs an element id in brackets, e.g. click [12]"),
        ("hover [12", "hover needs an element id in brackets, e.g. hover [12]"),
        ("click [abc]", "element id must be a number, got 'abc'"),
        ("click [-3]", "element id must be a number, got '-3'"),
        ("type [a1] [x] [1]", "element id must be a number, got 'a1', e.g. type [12] [hello] [1]"),
        ("type [12]", "type needs the text in brackets after the element id, then 1 to press Enter or 0 not to"),
        ("type [12] hello", "e.g. type [12] [hello] [1]"),
        ("press", "press needs a key combination in brackets, e.g. press [Enter] or press [Control+a]"),
        ("press []", "press needs a key combination in brackets"),
        ("press [Control+]", "key combination 'Control+' has an empty key between '+' signs"),
        ("scroll", "scroll needs a direction in brackets: scroll [down] or scroll [up]"),
        ("scroll [left]", "scroll direction must be up or down, got 'left'"),
        ("scroll left", "scroll needs a direction in brackets"),
        ("scroll down to the footer", "scroll needs a direction in brackets"),
        ("scroll down [1", "scroll needs a direction in brackets"),
        ("select_option [12]", "select_option needs the option text in brackets after the element id"),
        ("select_option [12] []", "e.g. select_option [12] [Blue]"),
        ("goto", "goto needs a URL in brackets, e.g. goto [https://example.com]"),
        ("goto []", "goto needs a URL in brackets"),
        ("go_back [1]", "go_back takes no arguments, got '[1]'; write just go_back"),
        ("close_tab now", "close_tab takes no arguments, got 'now'"),
        ("new_tab []x", "new_tab takes nothing or a URL in brackets, got '[]x'"),
        ("tab_focus", "tab_focus needs a tab index in brackets, e.g. tab_focus [0]"),
        ("tab_focus [first]", "tab index must be a number, got 'first'"),
        ("tab_focus first", "tab index must be a number, got 'first'"),
        ("tab_focus []", "tab_focus needs a tab index in brackets, e.g. tab_focus [0]"),
        ("stop] [1]", "stop needs the answer in brackets, e.g. stop [42]"),
        ("[12] click", "Could not find an action name in '[12] click'. Start with the action, e.g. click [12]."),
        ("", "The action is empty. Write exactly one action. Valid actions: click [id]"),
        ("```\n```", "The action is empty."),
    ],
)
def test_bracket_errors(text: str, expected: str) -> None:
    assert expected in _error(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click('12'", "could not read 'click('12'' as a function call"),
        ("click(bid)", "argument bid of click() must be a literal: a quoted string, a number, True or False"),
        ("click(os.system('x'))", "argument os.system('x') of click() must be a literal"),
        ("click('abc')", "element id must be a number, got 'abc', e.g. click('12')"),
        ("click()", "click() is missing its 'bid' argument; e.g. click('id')"),
        ("fill('12')", "fill() is missing its 'value' argument; e.g. fill('id', 'text')"),
        ("hover('1', '2')", "hover() takes at most 1 arguments, got 2; e.g. hover('id')"),
        ("click('1', colour='red')", "click() got an unexpected argument 'colour'; its arguments are (bid, button"),
        ("click('1', bid='2')", "click() got argument 'bid' twice"),
        ("click(*ids)", "click() arguments must be written out, not unpacked with *"),
        ("click(**kw)", "click() arguments must be written out, not unpacked with **"),
        ("fill('1', None)", "fill() expects a quoted string, got None"),
        ("fill('1', 'x', press_enter='yes')", "fill() expects True or False, got 'yes'"),
        ("select_option('1', [])", "select_option() needs the option text, e.g. select_option('12', 'Blue')"),
        ("scroll(0, 0)", "scroll() needs a non-zero vertical amount: scroll(0, 200) scrolls down"),
        ("scroll(100)", "scroll() needs a non-zero vertical amount"),
        ("tab_focus(-1)", "tab_focus() needs a tab index (0, 1, ...), got -1"),
        ("goto('')", "goto() needs a URL, e.g. goto('https://example.com')"),
        ("noop()", "noop() is not supported: choose an action that changes the page"),
        ("browser.click('1')", "expected a single call such as click('12'), got 'browser.click('1')'"),
        ("keyboard_press('')", "press needs a key combination"),
    ],
)
def test_call_errors(text: str, expected: str) -> None:
    assert expected in _error(text)


def test_attribute_call_is_rejected() -> None:
    # `page.click('1')` parses as Python but is an attribute call, not one of ours.
    assert "expected a single call such as click('12'), got 'page.click('1')'" in _error("page.click ('1')")


def test_several_invalid_lines_report_the_first_error() -> None:
    assert _error("clik [1]\nhover [x]").startswith("Unknown action 'clik'")


def test_response_without_action() -> None:
    with pytest.raises(ActionParseError) as info:
        parse_response("In summary, the next action I will perform is")
    assert str(info.value).startswith("No action found. End your reply with: In summary, the next action I will")
    assert VALID_ACTIONS in str(info.value)
    with pytest.raises(ActionParseError, match="No action found"):
        parse_response("   \n ")


def test_response_with_bad_action_explains_it() -> None:
    with pytest.raises(ActionParseError, match="element id must be a number, got 'Submit'"):
        parse_response("In summary, the next action I will perform is ```click [Submit]```")
