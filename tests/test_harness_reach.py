"""How near a failed run came: its right answer proposed on the way, shown on a page its model read, or neither; its
right page reached on the way or not. Told from the run store's pages, in the eval report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from branchwise.cli import main
from branchwise.harness.reach import answer_source, nearness, reach, reached
from branchwise.harness.report import build_report, load_nearness, load_results, render_html, render_markdown
from branchwise.harness.run import TaskResult
from branchwise.harness.tasks import TaskConfig
from branchwise.store import NodeRecord, RunRecord, RunStore, default_store_path

FORUM = "http://127.0.0.1:40631"
# A post page as the model is shown it: the tab and URL lines, then the tree with element ids.
POST = f"""Tab 0 (current): Best quiet coffee shops · Forum
URL: {FORUM}/f/boston/12/best-quiet-coffee-shops-harbor_lights

[763] RootWebArea 'Best quiet coffee shops'
\t[883] heading 'Best quiet coffee shops near Harvard Square?'
\t[884] StaticText 'Submitted by'
\t[885] link 'harbor_lights'
\t[890] StaticText '12 comments · -5 points'
"""


def task(eval_spec: dict[str, Any], task_id: int = 1) -> TaskConfig:
    return TaskConfig.model_validate({"task_id": task_id, "sites": ["reddit"], "start_url": "__REDDIT__",
                                      "intent": "Tell me the answer", "eval": eval_spec})


def answer_task(task_id: int = 1, **references: Any) -> TaskConfig:
    return task({"eval_types": ["string_match"], "reference_answers": references}, task_id)


def page(text: str, answer: str | None = None, url: str = FORUM + "/", node_id: int = 0) -> NodeRecord:
    return NodeRecord(run_id="r", node_id=node_id, url=url, observation_text=text, answer=answer)


def test_an_answer_proposed_on_the_way_is_told_before_one_shown() -> None:
    who = answer_task(exact_match="harbor_lights")
    assert reach(who, [page(POST), page(POST, answer="Harbor_Lights", node_id=1)]) == "proposed"
    assert reach(who, [page(POST), page(POST, answer="cosmic_pretzel", node_id=1)]) == "shown"


def test_an_answer_is_shown_only_as_whole_words_of_the_page_not_its_url_line() -> None:
    who = answer_task(exact_match="harbor_lights")
    without = POST.replace("link 'harbor_lights'", "link 'harbor_lights2'")
    # The name is still in the URL line, and "harbor_lights2" is another user.
    assert reach(who, [page(without)]) == "not shown"
    title = answer_task(must_include=["best quiet coffee shops near harvard"])
    assert reach(title, [page(POST)]) == "shown"


def test_every_item_the_answer_must_include_must_be_shown() -> None:
    colours = answer_task(must_include=["Coral", "Nude", "Berry", "Plum"])
    three = "[1] RootWebArea 'Nail polish'\n\t[2] option 'Coral'\n\t[3] option 'Nude'\n\t[4] option 'Berry'\n"
    assert reach(colours, [page(three)]) == "not shown"
    assert reach(colours, [page(three), page(three + "\t[5] option 'Plum'\n", node_id=1)]) == "shown"


def test_an_unachievable_tasks_na_proposed_on_the_way_is_told() -> None:
    """best_first on the real run proposed "N/A" and "$499.95" for a product the shop does not sell, and chose the
    made-up price."""
    cannot = answer_task(fuzzy_match="N/A")
    assert reach(cannot, [page(POST, answer=" n/a"), page(POST, answer="$499.95", node_id=1)]) == "proposed"


def test_a_number_is_not_looked_for_on_the_pages() -> None:
    """'12 comments' and '-5 points' are on the page: a count of 12 or 5 would be found there whatever it counts."""
    for count in ("12", "5", "$66.95"):
        assert reach(answer_task(exact_match=count), [page(POST)]) == "a number, not proposed"
    assert reach(answer_task(exact_match="12"), [page(POST, answer="12")]) == "proposed"
    # A number with words is looked for.
    assert reach(answer_task(exact_match="12 comments"), [page(POST)]) == "shown"


def test_the_right_page_reached_on_the_way_whatever_the_port() -> None:
    sort = task({"eval_types": ["url_match"], "reference_url": "__REDDIT__/f/linux?sort=top"})
    assert reached("__REDDIT__/f/linux?sort=top", "http://127.0.0.1:41000/f/linux?sort=top")
    assert reach(sort, [page(POST), page(POST, url="http://127.0.0.1:41000/f/linux?sort=top", node_id=1)]) == "reached"
    assert reach(sort, [page(POST, url="http://127.0.0.1:41000/f/linux?sort=new")]) == "not reached"
    assert reach(sort, [page(POST, url="http://127.0.0.1:41000/f/linux")]) == "not reached"


def test_what_a_judge_decides_is_not_told() -> None:
    assert reach(answer_task(fuzzy_match="N/A"), [page(POST, answer="$499.95")]) is None
    assert reach(answer_task(fuzzy_match=["a quiet place"]), [page(POST)]) is None
    change = task({"eval_types": ["db_check"], "db_check": [{"site": "reddit", "query": "SELECT 1",
                                                             "rows": [[1]]}]})
    assert reach(change, [page(POST)]) is None


def test_a_wrong_answer_on_a_page_shown_was_read_one_on_none_made_up() -> None:
    pages = [page("[1] RootWebArea 'Front page'\n"), page(POST, node_id=1)]
    assert answer_source("Harbor_lights", pages) == "on a page shown"
    assert answer_source("12 comments", pages) == "on a page shown"
    assert answer_source("$499.95", pages) == "on no page shown"
    assert answer_source("23", pages) == "on no page shown"
    # Numbers as the answer check reads them: an element's id is not on the page, 12.00 is 12.
    assert answer_source("883", pages) == "on no page shown"
    assert answer_source("12.00 comments", pages) == "on a page shown"
    # Its words in order, not some of them: "quiet coffee" is there, "coffee quiet" is not.
    assert answer_source("coffee quiet", pages) == "on no page shown"
    assert answer_source("", pages) is None and answer_source(" n/a ", pages) is None
    # Told for an information task whatever judges it (here an unachievable one), never for a navigation task.
    assert nearness(answer_task(fuzzy_match="N/A"), "$499.95", pages).answer_source == "on no page shown"
    sort = task({"eval_types": ["url_match"], "reference_url": "__REDDIT__/f/linux?sort=top"})
    assert nearness(sort, "done", pages).answer_source is None


def result(task_id: int, strategy: str, score: float, run_id: str) -> TaskResult:
    return TaskResult.model_validate(dict(
        task_id=task_id, intent=f"task {task_id}", sites=["reddit"], eval_types=["string_match"], unachievable=False,
        strategy=strategy, model="qwen", scripted_model=False, approvals="all", status="finished",
        answer="cosmic_pretzel", final_url=FORUM + "/", score=score, parts={}, run_id=run_id, steps=2, backtracks=0,
        approvals_asked=0, usage={}, wall_s=10.0))


def test_the_report_counts_how_near_each_strategys_failed_runs_came(tmp_path: Path) -> None:
    folder = tmp_path / "eval"
    folder.mkdir()
    with RunStore(default_store_path(folder)) as store:
        for run_id, nodes in {"bf": [page(POST), page(POST, answer="harbor_lights", node_id=1)],
                              "gr": [page(POST)], "gr2": [page("[1] RootWebArea 'Front page'\n")],
                              "aa": [page(POST, answer="harbor_lights")]}.items():
            store.start_run(RunRecord(run_id=run_id, task="task"))
            for node in nodes:
                store.upsert_node(node.model_copy(update={"run_id": run_id}))
    results = [result(1, "best_first", 0.0, "bf"), result(1, "greedy", 0.0, "gr"), result(2, "greedy", 0.0, "gr2"),
               result(1, "action_aware", 1.0, "aa"), result(3, "greedy", 0.0, "not-kept")]
    (folder / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
    tasks = [answer_task(1, exact_match="harbor_lights"), answer_task(2, exact_match="sunny_comet"),
             answer_task(3, exact_match="quiet_walrus")]

    report = build_report(load_results([folder]), ["x"], near=load_nearness([folder], tasks))
    rows = {s.label: s.reach for s in report.strategies}
    # The solved run and the run the store does not keep are not counted.
    assert rows == {"action_aware": {}, "best_first": {"proposed": 1}, "greedy": {"shown": 1, "not shown": 1}}
    table = render_markdown(report)
    assert "| came | action_aware | best_first | greedy |" in table
    assert "| proposed | 0 | 1 | 0 |" in table and "| not shown | 0 | 0 | 1 |" in table
    # greedy's wrong answer, cosmic_pretzel, is on none of the pages its two runs were shown.
    assert {s.label: s.answer_sources for s in report.strategies}["greedy"] == {"on no page shown": 2}
    assert "| on no page shown | 0 | 1 | 2 |" in table
    assert "How near the failed runs came" in render_html(report)
    assert "Where the wrong answers came from" in render_html(report)
    # Without the tasks nothing is told, and the table is left out.
    assert "How near" not in render_markdown(build_report(load_results([folder]), ["x"]))

    # From the command line, with the task configs given.
    configs = tmp_path / "tasks.json"
    configs.write_text(json.dumps([t.model_dump(exclude_defaults=True) for t in tasks]))
    assert main(["eval", "report", str(folder), "--tasks", str(configs), "--out", str(tmp_path / "out")]) == 0
    assert "| proposed | 0 | 1 | 0 |" in (tmp_path / "out" / "report.md").read_text()
    # Task configs that cannot be read stop it with the reason, before any report is written.
    assert main(["eval", "report", str(folder), "--tasks", str(tmp_path / "missing.json"),
                 "--out", str(tmp_path / "none")]) == 2
    assert not (tmp_path / "none").exists()


def test_a_later_result_of_the_same_run_key_replaces_how_near_the_earlier_came(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    for folder, score in ((first, 0.0), (second, 1.0)):
        folder.mkdir()
        with RunStore(default_store_path(folder)) as store:
            store.start_run(RunRecord(run_id="run", task="task"))
            store.upsert_node(page(POST).model_copy(update={"run_id": "run"}))
        (folder / "results.jsonl").write_text(result(1, "greedy", score, "run").model_dump_json() + "\n")
    tasks = [answer_task(1, exact_match="harbor_lights")]
    assert [n.reach for n in load_nearness([first], tasks).values()] == ["shown"]
    assert load_nearness([first, second], tasks) == {}
    # The later result replaces the earlier one's even from a folder without a run store.
    (second / "runs.sqlite3").unlink()
    assert load_nearness([first, second], tasks) == {}
