"""Reading an action out of a model's reply, in either syntax, with WebOperator-style auto-correction."""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass

from .brackets import VALID_ACTIONS, parse_bracket_action
from .calls import parse_call
from .model import Action, ActionParseError

logger = logging.getLogger(__name__)

_FENCE = "```"
_PHRASE = re.compile(r"(?:in summary,?\s*)?the next action i will perform is\s*:?", re.IGNORECASE)
# Dotted names are matched only so that `page.click('1')` gets a precise error instead of "unknown action 'page'".
_NAME = re.compile(r"([A-Za-z_][\w.]*)(.*)", re.DOTALL)
_LABEL = re.compile(r"^(?:next\s+)?action\s*:\s*", re.IGNORECASE)
_LANGUAGE_TAG = re.compile(r"[ \t]*([A-Za-z][\w+-]*)[ \t]*\r?\n")
_ACTION_WORDS = frozenset(
    "click dblclick hover type fill press keyboard_press scroll select_option goto go_back go_forward new_tab "
    "tab_focus close_tab tab_close stop send_msg_to_user report_infeasible noop".split()
)
# A second action after a complete one on the same line: `type [3] [a] [1] hover [31]`. Free text is read to the
# last ']', so without this cut the rest would be typed.
_SECOND_ACTION = re.compile(r"\]\s*(?=(?:" + "|".join(sorted(_ACTION_WORDS)) + r")\s*[\[(]|(?:go_back|go_forward|"
                            r"new_tab|close_tab)\s*$)", re.IGNORECASE)
_NO_ACTION = (
    "No action found. End your reply with: In summary, the next action I will perform is ```click [12]```. "
    f"Valid actions: {VALID_ACTIONS}"
)


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    thought: str  # the reasoning before the action
    action: Action
    action_text: str  # the snippet the action was read from, for logs and error feedback
    # What followed the action on its line and was dropped (a second action: `first_of_several`); empty: nothing.
    dropped: str = ""


def parse_action(text: str) -> Action:
    """One action in WebArena bracket syntax or BrowserGym call syntax; see `read_action`."""
    return read_action(text)[0]


def read_action(text: str) -> tuple[Action, str]:
    """Parse one action in WebArena bracket syntax or BrowserGym call syntax, with what was dropped after it on its
    line (a second action, `first_of_several`; empty when nothing was).

    A surrounding ``` fence is removed. When the text has several lines, the first line that parses wins
    (WebOperator's auto-correction). A line that does not parse alone may continue on the next lines (`type` text with
    newlines), so the shortest run of lines starting there that parses is taken. The error raised is the one for the
    first non-empty line on its own.
    """
    body = _fence_body(text) if text.strip().startswith(_FENCE) else text
    lines = body.split("\n")  # not splitlines(): keep any '\r' or form feed inside typed text
    first_error: ActionParseError | None = None
    for start, line in enumerate(lines):
        if not _clean(line):
            continue
        # Only a line that starts with an action word may continue; this keeps long prose blocks linear.
        last = len(lines) if _starts_with_action_word(line) else start + 1
        for end in range(start + 1, last + 1):
            candidate = _clean("\n".join(lines[start:end]))
            first = first_of_several(candidate)
            try:
                action = _parse_line(first)
            except ActionParseError as exc:
                if end == start + 1:
                    first_error = first_error or exc
                continue
            if start or end > start + 1:
                logger.debug("auto-correction: read the action from lines %d-%d of %r", start + 1, end, body)
            return action, candidate[len(first):].strip()
    if first_error is None:
        raise ActionParseError(f"The action is empty. Write exactly one action. Valid actions: {VALID_ACTIONS}")
    raise first_error


def parse_response(text: str) -> ParsedResponse:
    """Split a model reply into its reasoning and its action.

    The action is taken from the fence right after the first "the next action I will perform is" whose action reads
    (or, with no fence there, the rest of that line); without the phrase, from the last ``` fence; without fences, from
    the last line. An unclosed final fence (a reply cut at a stop sequence) counts as a fence.

    The first phrase, not the last: a small model goes on after its answer, with a plan of later steps that each end
    in the phrase, or with a second reply (Qwen2.5-Coder-1.5B did both). The action for now is the first one, as
    WebArena's parser takes the first fence; the later ones are `dropped`.
    """
    phrases = list(_PHRASE.finditer(text))
    first_error: ActionParseError | None = None
    for index, phrase in enumerate(phrases):
        following = phrases[index + 1].start() if index + 1 < len(phrases) else len(text)
        snippet = _after_phrase(text[phrase.end():following])
        if not snippet.strip():
            continue
        try:
            action, dropped = read_action(snippet)
        except ActionParseError as exc:
            first_error = first_error or exc
            continue
        if index + 1 < len(phrases) and not dropped:
            dropped = text[phrases[index + 1].start():].strip()
        return ParsedResponse(text[: phrase.start()].strip(), action, snippet.strip(), dropped)
    if first_error is not None:
        raise first_error
    if phrases:
        raise ActionParseError(_NO_ACTION)
    thought, snippet = _split_unphrased(text)
    if not snippet.strip():
        raise ActionParseError(_NO_ACTION)
    try:
        action, dropped = read_action(snippet)
    except ActionParseError:
        if _FENCE not in text and _is_prose(snippet):
            # "I apologize, but …" is no action named 'i': told "Unknown action 'i'", a real 1.5B model gave that
            # message back as its answer (stop [Unknown action 'i'. Valid actions: …]) in 2 of 35 greedy runs.
            raise ActionParseError(_NO_ACTION) from None
        raise
    return ParsedResponse(thought.strip(), action, snippet.strip(), dropped)


def _is_prose(line: str) -> bool:
    """A line whose first word is neither an action's name nor a misspelling of one."""
    word = _first_word(line)
    return word not in _ACTION_WORDS and not difflib.get_close_matches(word, _ACTION_WORDS, n=1)


def _after_phrase(after: str) -> str:
    """What the phrase introduces (`after`: the text up to the next phrase): the fence after it, or the rest of its
    line."""
    parts = after.split(_FENCE)
    if len(parts) > 1:
        return _strip_language_tag(parts[1])
    return next((line for line in after.splitlines() if line.strip()), "")


def _split_unphrased(text: str) -> tuple[str, str]:
    parts = text.split(_FENCE)
    if len(parts) > 1:
        # An even number of fences leaves the last closed block at parts[-2]; an odd one means the last is unclosed.
        index = len(parts) - 2 if len(parts) % 2 == 1 else len(parts) - 1
        return _FENCE.join(parts[:index]), _strip_language_tag(parts[index])
    lines = text.rstrip().splitlines()
    return "\n".join(lines[:-1]), lines[-1] if lines else ""


def _fence_body(text: str) -> str:
    parts = text.strip().split(_FENCE)
    return _strip_language_tag(parts[1])


def _strip_language_tag(block: str) -> str:
    tag = _LANGUAGE_TAG.match(block)
    if tag and tag.group(1).lower() not in _ACTION_WORDS and block[tag.end() :].strip():
        return block[tag.end() :]
    return block


def _clean(line: str) -> str:
    """Drop the wrapping models add around an action: `Action:` labels, inline backticks, a final full stop."""
    line = _LABEL.sub("", line.strip())
    line = line.rstrip(" .;").strip("`").strip()
    return line


def first_of_several(line: str) -> str:
    """The first action of a line that holds several (WebOperator's "first of several actions"): a small model's
    `type [3] [The Left Hand of Darkness] [1] hover [31] [1]` is `type [3] [The Left Hand of Darkness] [1]`, never
    typing the rest. A cut is logged; a line with one action comes back as it is."""
    match = _SECOND_ACTION.search(line)
    if match is None:
        return line
    logger.info("several actions in one answer; taking the first and dropping %r", line[match.start() + 1:].strip())
    return line[: match.start() + 1]


def _first_word(line: str) -> str:
    """The word a line would name its action with, lower-cased ("" when it starts with none)."""
    match = _NAME.match(_clean(line))
    return match.group(1).lower() if match else ""


def _starts_with_action_word(line: str) -> bool:
    return _first_word(line) in _ACTION_WORDS


def _parse_line(line: str) -> Action:
    match = _NAME.match(line)
    if match is None:
        raise ActionParseError(
            f"Could not find an action name in '{line}'. Start with the action, e.g. click [12]. "
            f"Valid actions: {VALID_ACTIONS}"
        )
    name, rest = match.group(1), match.group(2)
    if rest.lstrip().startswith("("):
        return parse_call(name.lower() + rest.lstrip())
    return parse_bracket_action(name.lower(), rest)
