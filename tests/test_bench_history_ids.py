"""The history-ids benchmark's pieces (bench/history_ids.py): which stored states qualify, how each layout writes a
step, and how a reply is sorted."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

from branchwise.bench.history_ids import (
    LAYOUTS,
    Step,
    elements_of,
    load_states,
    messages_for,
    outcome,
    reply_record,
)
from branchwise.search.generate import GenerationConfig, HistoryEntry
from branchwise.store import NodeRecord, RunRecord, RunStore, default_store_path

HOME = "[1] RootWebArea 'Forum'\n\t[88] link 'Forums'\n\t[89] link \"Bob's page\""
FORUMS = "[200] RootWebArea 'Forums'\n\t[201] link 'f/nyc'\n\t[202] StaticText '12 subscribers'"
T0 = datetime(2026, 11, 29, tzinfo=UTC)


def store_with(tmp_path: Path, nodes: list[NodeRecord]) -> Path:
    path = default_store_path(tmp_path)
    with RunStore(path) as store:
        store.start_run(RunRecord(run_id="r1", task="How many subscribers has f/nyc?", started_at=T0,
                                  status="running"))
        for node in nodes:
            store.upsert_node(node)
    return path


def node(node_id: int, parent: int | None, page: str, action: str = "", status: str = "expanded") -> NodeRecord:
    return NodeRecord.model_validate({"run_id": "r1", "node_id": node_id, "parent_id": parent, "status": status,
                                      "url": f"http://forum.test/{node_id}", "action_text": action,
                                      "thought": "Forums lists them.", "observation_text": page})


def test_a_state_qualifies_when_a_step_on_its_way_acted_on_an_id_its_page_lacks(tmp_path: Path) -> None:
    path = store_with(tmp_path, [
        node(0, None, HOME),
        node(1, 0, FORUMS, "click [88]"),
        # Asked nowhere (no children), or reached by a step that never ran: not states.
        node(2, 1, FORUMS, "click [201]", status="dead"),
        node(3, 0, HOME, "click [5]", status="invalid"),
        node(4, 3, FORUMS, "click [88]"),
    ])
    [state] = load_states(path)
    gzipped = path.with_suffix(".sqlite3.gz")
    gzipped.write_bytes(gzip.compress(path.read_bytes()))
    assert load_states(gzipped) == [state]
    assert (state.node_id, state.steps) == (1, (Step("click [88]", "link 'Forums'", "Forums lists them."),))
    assert state.step_ids - state.page_ids == {88}


def test_the_layouts_write_a_step_with_its_id_with_both_or_with_the_element_alone() -> None:
    step = Step("type [88] [nyc] [1]", "searchbox 'Search'", "")
    assert {name: layout(step).action for name, layout in LAYOUTS.items()} == {
        "as recorded": "type [88] [nyc] [1]",
        "WebArena's": "type [88] [nyc] [1] where [88] is searchbox 'Search'",
        "element, no id": "type searchbox 'Search' [nyc] [1]",
        "past tense": "typed 'nyc' into searchbox 'Search' and pressed Enter",
    }
    scroll = Step("scroll [down]", "", "I will scroll past [12].")
    assert {name: layout(scroll) for name, layout in LAYOUTS.items()} == {
        **{name: HistoryEntry("I will scroll past [12].", "scroll [down]") for name in LAYOUTS},
        "past tense": HistoryEntry("I will scroll past.", "scrolled down")}


def test_elements_are_read_with_either_quote() -> None:
    assert elements_of(HOME) == {1: "RootWebArea 'Forum'", 88: "link 'Forums'", 89: "link \"Bob's page\""}
    both = "[5] link 'Say \\'hi\\' \"now\"'"
    assert elements_of(both) == {5: "link 'Say \\'hi\\' \"now\"'"}, "read back as quote() wrote it"


def test_replies_are_sorted_by_what_their_action_targets(tmp_path: Path) -> None:
    [state] = load_states(store_with(tmp_path, [node(0, None, HOME), node(1, 0, FORUMS, "click [88]")]))
    say = "In summary, the next action I will perform is ```{}```".format
    assert [outcome(say(a), state) for a in ("click [201]", "click [88]", "click [7]", "scroll [down]")] == [
        "on the page", "a step's id", "another id", "no element"]
    assert outcome("I do not know.", state) == "unparseable"


def test_the_prompt_differs_between_layouts_only_in_its_history(tmp_path: Path) -> None:
    [state] = load_states(store_with(tmp_path, [node(0, None, HOME), node(1, 0, FORUMS, "click [88]")]))
    prompts = {name: messages_for(state, layout, GenerationConfig()) for name, layout in LAYOUTS.items()}
    last = {name: messages[-1].content for name, messages in prompts.items()}
    assert last["as recorded"].endswith("1. click [88] (seen: Forums lists them.)")
    assert last["element, no id"].endswith("1. click link 'Forums' (seen: Forums lists them.)")
    heads = {text[: text.index("PREVIOUS ACTION:")] for text in last.values()}
    assert len(heads) == 1 and FORUMS in heads.pop()
    assert len({str(messages[:-1]) for messages in prompts.values()}) == 1


def test_a_reply_is_kept_with_its_state_layout_and_outcome(tmp_path: Path) -> None:
    [state] = load_states(store_with(tmp_path, [node(0, None, HOME), node(1, 0, FORUMS, "click [88]")]))
    line = reply_record(state, "past tense", "unparseable", "I clicked link 'f/nyc'.")
    assert line.endswith("\n") and json.loads(line) == {
        "run_id": "r1", "node_id": 1, "layout": "past tense", "outcome": "unparseable",
        "reply": "I clicked link 'f/nyc'."}
