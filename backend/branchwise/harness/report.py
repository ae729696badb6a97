"""The evaluation report: success rates with 95 % intervals and what they cost, per strategy, from results.jsonl files.

SR is the mean score over all tasks, SR_AC over the achievable ones, SR_UA over the unachievable ones (WebArena's
definitions; a score is 0 or 1). Intervals are Wilson score intervals. Written as JSON and as one self-contained HTML
page (inline SVG charts, no scripts, nothing fetched).
"""

from __future__ import annotations

import html
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ..core.mistakes import MISTAKE_NAMES, MistakeKind
from ..core.status import ROLES, Role
from ..store import RunNotFound, RunStore, default_store_path
from .endings import ENDING_NOTES, ENDINGS, Ending, count_endings
from .paired import HeadToHead, head_to_head
from .reach import ANSWER_SOURCE_NOTES, ANSWER_SOURCES, REACH_NOTES, REACHES, AnswerSource, Nearness, Reach, nearness
from .run import RESULTS_FILE, ResultKey, TaskResult, model_seconds, model_wait_s, read_results
from .tasks import TaskConfig

Z95 = 1.96
_Kind = TypeVar("_Kind", bound=str)



class Rate(BaseModel):
    value: float
    low: float
    high: float
    successes: float
    tasks: int


def wilson(successes: float, n: int, z: float = Z95) -> Rate:
    """The Wilson score interval of a success rate (sound for small n and for rates near 0 or 1)."""
    if n == 0:
        return Rate(value=0.0, low=0.0, high=0.0, successes=0.0, tasks=0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Rate(value=p, low=max(0.0, centre - half), high=min(1.0, centre + half), successes=successes, tasks=n)


def task_type(result: TaskResult) -> str:
    """WebArena's three kinds: information seeking (an answer), navigation (a page), or a change to the site."""
    if {"program_html", "db_check"} & set(result.eval_types):
        return "state change"
    if "string_match" in result.eval_types:
        return "information"
    return "navigation"


class Costs(BaseModel):
    """Means per task."""

    calls: dict[str, float]
    prompt_tokens: dict[str, float]
    completion_tokens: dict[str, float]
    total_tokens: float
    # Of the prompt tokens, those the server took from its prompt cache (where it says).
    cached_prompt_tokens: dict[str, float] = {}
    wall_s: float
    steps: float
    backtracks: float
    approvals_asked: float
    # The models' mistakes per task, by role and kind (core/mistakes.py).
    mistakes: dict[Role, dict[MistakeKind, float]] = {}
    # The seconds the run waited on each role's calls and on any call, over the results that kept them (`timed` of
    # the tasks).
    model_seconds: dict[str, float] = {}
    model_wait_s: float = 0.0
    timed: int = 0

    @property
    def mistakes_total(self) -> float:
        return sum(sum(kinds.values()) for kinds in self.mistakes.values())

    @property
    def cached_share(self) -> float:
        """The share of all prompt tokens the server took from its cache."""
        prompt = sum(self.prompt_tokens.values())
        return sum(self.cached_prompt_tokens.values()) / prompt if prompt else 0.0


class StrategyReport(BaseModel):
    """One strategy with one model: a column of the report."""

    # The strategy, with the model when the results hold more than one (an E sweep of the simulated model).
    label: str
    strategy: str
    models: list[str]
    # True when any result came from a scripted or simulated model: its figures prove plumbing, not planning quality.
    scripted: bool
    approvals: list[str]
    sr: Rate
    sr_ac: Rate
    sr_ua: Rate
    by_site: dict[str, Rate]
    by_type: dict[str, Rate]
    costs: Costs
    # Tasks that could not be set up or evaluated (TaskResult.eval_error): out of the rates, counted here.
    not_evaluated: int = 0
    # How many of its runs ended each way (endings.py).
    endings: dict[Ending, int] = {}
    # Of its failed runs whose nearness the report could tell (reach.py), how many came how near, and where those
    # that answered an information task wrong took their answers from.
    reach: dict[Reach, int] = {}
    answer_sources: dict[AnswerSource, int] = {}


class Report(BaseModel):
    sources: list[str]
    strategies: list[StrategyReport]
    # task id -> label -> score.
    scores: dict[int, dict[str, float]]
    intents: dict[int, str]
    # Tasks some row has no result for, left out so every row is measured on the same tasks (`eval report --common`).
    left_out: list[int] = []
    # (task, label, why) of the results that could not be set up or evaluated: out of the rates.
    not_evaluated: list[tuple[int, str, str]] = []
    # Every two rows on the tasks both ran and had evaluated (paired.py).
    head_to_head: list[HeadToHead] = []


@dataclass(frozen=True)
class _Folder:
    """One results folder's results (model times measured again) and the run store beside them."""

    store: Path
    results: list[TaskResult]


@dataclass(frozen=True)
class Source:
    """A results folder (or file) under a name: its results are a version of their own, beside the same strategies'
    from other folders, instead of being merged with them (`eval report 887dbd2=DIR 2ccc8e1=DIR`)."""

    path: Path
    version: str


_VERSION_NAME = re.compile(r"[\w.-]+")


def report_source(word: str) -> Source:
    """FOLDER, or NAME=FOLDER: that folder's results as a version of their own (a name of letters, digits, . _ -)."""
    name, sep, path = word.partition("=")
    if sep and path and _VERSION_NAME.fullmatch(name):
        return Source(Path(path), name)
    return Source(Path(word), "")


def _source(folder: Path | Source) -> Source:
    return folder if isinstance(folder, Source) else Source(folder, "")


def _read(folders: Iterable[Path | Source]) -> list[_Folder]:
    read = []
    for source in map(_source, folders):
        path = source.path / RESULTS_FILE if source.path.is_dir() else source.path
        store = default_store_path(path.parent)
        results = read_results(path)
        if source.version:
            results = [r.model_copy(update={"version": source.version}) for r in results]
        read.append(_Folder(store, _timed(results, store)))
    return read


def _latest(read: Sequence[_Folder]) -> list[TaskResult]:
    latest: dict[ResultKey, TaskResult] = {}
    for folder in read:
        for result in folder.results:
            latest[result.key] = result
    return list(latest.values())


def load_results(folders: Iterable[Path | Source]) -> list[TaskResult]:
    """Every result in each folder's results.jsonl; when a (strategy, model, examples or not, temperature, task)
    appears more than once, the last wins. Model times are measured again from the folder's run store, where the
    runs' calls are kept (results written before `model_wait_s` summed calls made at once)."""
    return _latest(_read(folders))


def load_nearness(folders: Iterable[Path | Source], tasks: Iterable[TaskConfig]) -> dict[ResultKey, Nearness]:
    """How near each failed run came to its task (reach.py), read from its folder's run store; the last result of a
    key wins, as in load_results. Runs the store does not keep, and runs of tasks not given, are left out."""
    return _nearness(_read(folders), tasks)


def _nearness(read: Sequence[_Folder], tasks: Iterable[TaskConfig]) -> dict[ResultKey, Nearness]:
    by_id = {task.task_id: task for task in tasks}
    told: dict[ResultKey, Nearness] = {}
    for folder in read:
        for result in folder.results:
            told.pop(result.key, None)  # a later result of the key replaces an earlier one's, told or not
        if not by_id or not folder.store.exists():
            continue
        with RunStore(folder.store) as store:
            for result in folder.results:
                task = by_id.get(result.task_id)
                if task is None or not result.evaluated or result.score >= 1:
                    continue
                try:
                    nodes = store.load_run(result.run_id).nodes
                except RunNotFound:
                    continue
                told[result.key] = nearness(task, result.answer, nodes)
    return told


def _timed(results: list[TaskResult], store_path: Path) -> list[TaskResult]:
    """The results with their model times from the store's calls, where it keeps the run; a result that has
    `model_wait_s` was timed so when written."""
    if not store_path.exists() or all(r.model_wait_s for r in results):
        return results
    timed = []
    with RunStore(store_path) as store:
        for result in results:
            if result.model_wait_s:
                timed.append(result)
                continue
            try:
                # The store resolves a prefix: only the run itself counts.
                calls = [c for c in store.model_calls(result.run_id) if c.run_id == result.run_id]
            except RunNotFound:
                calls = []
            timed.append(result.model_copy(update={"model_seconds": model_seconds(calls),
                                                   "model_wait_s": model_wait_s(calls)}) if calls else result)
    return timed


def common_tasks(results: Sequence[TaskResult]) -> tuple[list[TaskResult], list[int]]:
    """The results of the tasks every (strategy, model, examples, temperature, version) has a result for, and the tasks
    left out: a run stopped part way compares its strategies on the same tasks."""
    tasks: dict[tuple[object, ...], set[int]] = defaultdict(set)
    for result in results:
        tasks[result.key[:-1]].add(result.task_id)
    common = set.intersection(*tasks.values()) if tasks else set()
    return ([r for r in results if r.task_id in common],
            sorted({r.task_id for r in results} - common))


def _rate(results: Sequence[TaskResult]) -> Rate:
    """Over the tasks that were evaluated: one that could not be is not the agent's failure."""
    scored = [r for r in results if r.evaluated]
    return wilson(sum(r.score for r in scored), len(scored))


def _grouped(results: Sequence[TaskResult], key: Callable[[TaskResult], Iterable[str]]) -> dict[str, Rate]:
    groups: dict[str, list[TaskResult]] = defaultdict(list)
    for result in results:
        for name in key(result):
            groups[name].append(result)
    return {name: _rate(group) for name, group in sorted(groups.items())}


def _costs(results: Sequence[TaskResult]) -> Costs:
    n = max(1, len(results))

    def per_role(field: str) -> dict[str, float]:
        return {role: sum(getattr(r.usage[role], field) for r in results if role in r.usage) / n for role in ROLES
                if any(role in r.usage for r in results)}

    prompt, completion = per_role("prompt_tokens"), per_role("completion_tokens")
    mistakes: dict[Role, dict[MistakeKind, float]] = defaultdict(lambda: defaultdict(float))
    for result in results:
        for role, kinds in result.mistakes.items():
            for kind, count in kinds.items():
                mistakes[role][kind] += count / n
    timed = [r for r in results if r.model_wait_s]
    waited: dict[str, float] = {role: sum(r.model_seconds.get(role, 0.0) for r in timed) / len(timed)
                                for role in ROLES if any(role in r.model_seconds for r in timed)}
    return Costs(calls=per_role("calls"), prompt_tokens=prompt, completion_tokens=completion,
                 model_seconds=waited, timed=len(timed),
                 model_wait_s=sum(r.model_wait_s for r in timed) / len(timed) if timed else 0.0,
                 cached_prompt_tokens=per_role("cached_prompt_tokens"),
                 mistakes={role: dict(kinds) for role, kinds in mistakes.items()},
                 total_tokens=sum(prompt.values()) + sum(completion.values()),
                 wall_s=sum(r.wall_s for r in results) / n, steps=sum(r.steps for r in results) / n,
                 backtracks=sum(r.backtracks for r in results) / n,
                 approvals_asked=sum(r.approvals_asked for r in results) / n)


def build_report(results: Sequence[TaskResult], sources: Sequence[str], common: bool = False,
                 near: Mapping[ResultKey, Nearness] | None = None) -> Report:
    """The report of the results; `common`: only the tasks every row has a result for; `near`: how near failed runs
    came (load_nearness)."""
    near = near or {}
    left_out: list[int] = []
    if common:
        results, left_out = common_tasks(results)
    several_models = len({r.model for r in results}) > 1

    def label(result: TaskResult) -> str:
        name = result.strategy + (" + examples" if result.examples else "") + (
            f" at T={result.temperature:g}" if result.temperature is not None else "") + (
            f" @ {result.version}" if result.version else "")
        return f"{name} · {result.model}" if several_models else name

    by_label: dict[str, list[TaskResult]] = defaultdict(list)
    for result in results:
        by_label[label(result)].append(result)
    strategies = [
        StrategyReport(
            label=name, strategy=group[0].strategy, models=sorted({r.model for r in group}),
            scripted=any(r.scripted_model or r.model.startswith(("scripted", "simulated")) for r in group),
            approvals=sorted({r.approvals for r in group}), sr=_rate(group),
            sr_ac=_rate([r for r in group if not r.unachievable]), sr_ua=_rate([r for r in group if r.unachievable]),
            by_site=_grouped(group, lambda r: r.sites), by_type=_grouped(group, lambda r: [task_type(r)]),
            costs=_costs(group), not_evaluated=sum(not r.evaluated for r in group), endings=count_endings(group),
            reach=_count([near[r.key].reach for r in group if r.key in near], REACHES),
            answer_sources=_count([near[r.key].answer_source for r in group if r.key in near], ANSWER_SOURCES))
        for name, group in sorted(by_label.items())
    ]
    scores: dict[int, dict[str, float]] = defaultdict(dict)
    evaluated: dict[int, dict[str, float]] = defaultdict(dict)
    for result in results:
        scores[result.task_id][label(result)] = result.score
        if result.evaluated:
            evaluated[result.task_id][label(result)] = result.score
    return Report(sources=list(sources), strategies=strategies, scores=dict(sorted(scores.items())),
                  intents={r.task_id: r.intent for r in results}, left_out=left_out,
                  not_evaluated=sorted((r.task_id, label(r), r.eval_error) for r in results if not r.evaluated),
                  head_to_head=head_to_head(evaluated, [s.label for s in strategies]))


def _count(told: Sequence[_Kind | None], kinds: Sequence[_Kind]) -> dict[_Kind, int]:
    return {kind: told.count(kind) for kind in kinds if kind in told}


# ---------------------------------------------------------------------------------------------------------------------
# HTML

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1d2330}
h1{font-size:1.6rem}h2{margin-top:2.2rem;border-bottom:1px solid #d8dde6;padding-bottom:.3rem}
table{border-collapse:collapse;margin:.6rem 0}
th,td{padding:.3rem .7rem;border-bottom:1px solid #e4e8ef;text-align:right}
th:first-child,td:first-child{text-align:left}.warn{background:#fff4d6;border:1px solid #e8c65c;padding:.6rem 1rem}
.ok{color:#11703a}.no{color:#a4262c}svg text{font:12px system-ui,sans-serif;fill:#1d2330}
"""
_COLOURS = ("#3465a4", "#c4611a", "#4e9a06", "#75507b", "#c4a000", "#06989a")


def _pct(rate: Rate) -> str:
    return f"{rate.value:.1%} <small>[{rate.low:.0%}–{rate.high:.0%}]</small>" if rate.tasks else "–"


def _sr_vs_cost(report: Report) -> str:
    """SR with its interval against mean tokens per task, one point per strategy."""
    width, height, pad = 640, 320, 56
    most = max((s.costs.total_tokens for s in report.strategies), default=0.0) or 1.0
    parts = [f'<svg role="img" aria-label="Success rate against tokens per task" width="{width}" height="{height}">',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - 20}" y2="{height - pad}" stroke="#888"/>',
             f'<line x1="{pad}" y1="20" x2="{pad}" y2="{height - pad}" stroke="#888"/>',
             f'<text x="{width / 2}" y="{height - 16}" text-anchor="middle">tokens per task (mean)</text>',
             f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" text-anchor="middle">SR</text>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = height - pad - tick * (height - pad - 20)
        parts.append(f'<text x="{pad - 6}" y="{y + 4}" text-anchor="end">{tick:.0%}</text>')
    span = height - pad - 20

    def y_of(value: float) -> float:
        return height - pad - value * span

    for i, item in enumerate(report.strategies):
        x = pad + item.costs.total_tokens / most * (width - pad - 40)
        colour = _COLOURS[i % len(_COLOURS)]
        parts += [f'<line x1="{x}" y1="{y_of(item.sr.low)}" x2="{x}" y2="{y_of(item.sr.high)}" stroke="{colour}" '
                  'stroke-width="2"/>',
                  f'<circle cx="{x}" cy="{y_of(item.sr.value)}" r="6" fill="{colour}"/>',
                  f'<text x="{x + 10}" y="{y_of(item.sr.value) - 8}">{html.escape(item.label)}</text>']
    parts.append("</svg>")
    return "".join(parts)


def _calls_by_role(report: Report) -> str:
    """Mean model calls per task, split by role, one bar per strategy."""
    width, row = 640, 34
    most = max((sum(s.costs.calls.values()) for s in report.strategies), default=0.0) or 1.0
    height = row * len(report.strategies) + 40
    parts = [f'<svg role="img" aria-label="Model calls per task by role" width="{width}" height="{height}">']
    for i, item in enumerate(report.strategies):
        y, x = 10 + i * row, 130.0
        parts.append(f'<text x="0" y="{y + 16}">{html.escape(item.label)}</text>')
        for j, role in enumerate(ROLES):
            calls = item.costs.calls.get(role, 0.0)
            length = calls / most * (width - 200)
            if length:
                parts.append(f'<rect x="{x}" y="{y}" width="{length}" height="22" fill="{_COLOURS[j]}">'
                             f"<title>{role}: {calls:.1f} calls</title></rect>")
            x += length
        parts.append(f'<text x="{x + 6}" y="{y + 16}">{sum(item.costs.calls.values()):.1f}</text>')
    legend_y = height - 10
    parts += [f'<rect x="{130 + k * 90}" y="{legend_y - 10}" width="10" height="10" fill="{_COLOURS[k]}"/>'
              f'<text x="{144 + k * 90}" y="{legend_y}">{role}</text>' for k, role in enumerate(ROLES)]
    parts.append("</svg>")
    return "".join(parts)


def render_html(report: Report) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(s.label)}</td><td>{_pct(s.sr)}</td><td>{_pct(s.sr_ac)}</td><td>{_pct(s.sr_ua)}</td>"
        f"<td>{s.sr.tasks}</td><td>{sum(s.costs.calls.values()):.1f}</td><td>{s.costs.total_tokens:,.0f}</td>"
        f"<td>{s.costs.cached_share:.0%}</td>"
        f"<td>{s.costs.wall_s:.1f}</td><td>{s.costs.steps:.1f}</td><td>{s.costs.backtracks:.1f}</td>"
        f"<td>{s.costs.approvals_asked:.1f}</td><td>{s.costs.mistakes_total:.1f}</td><td>{e(', '.join(s.models))}</td>"
        f"<td>{e(', '.join(s.approvals))}</td><td>{s.not_evaluated}</td></tr>" for s in report.strategies)
    warning = ""
    scripted = [s.label for s in report.strategies if s.scripted]
    if scripted:
        warning = (f'<p class="warn"><strong>Scripted or simulated model</strong> ({e(", ".join(scripted))}): these '
                   "figures show that the pipeline works, not how well a strategy plans.</p>")

    def grouped(title: str, pick: Callable[[StrategyReport], dict[str, Rate]]) -> str:
        names = sorted({n for s in report.strategies for n in pick(s)})
        head = "".join(f"<th>{e(s.label)}</th>" for s in report.strategies)
        body = "".join(f"<tr><td>{e(n)}</td>" + "".join(f"<td>{_pct(pick(s)[n]) if n in pick(s) else '–'}</td>"
                                                         for s in report.strategies) + "</tr>" for n in names)
        return f"<h2>{title}</h2><table><tr><th></th>{head}</tr>{body}</table>"

    strategies = [s.label for s in report.strategies]
    task_rows = "".join(
        f"<tr><td>{task_id}</td><td style='text-align:left'>{e(report.intents[task_id])}</td>"
        + "".join(f"<td class='{'ok' if by.get(s, 0) == 1 else 'no'}'>{by[s]:g}</td>" if s in by else "<td>–</td>"
                  for s in strategies) + "</tr>"
        for task_id, by in report.scores.items())
    return (
        "<!doctype html><html lang='en'><meta charset='utf-8'><title>Branchwise evaluation</title>"
        f"<style>{_CSS}</style><h1>Branchwise evaluation</h1><p>From {e(', '.join(report.sources))}. SR with 95 % "
        f"Wilson intervals; costs are means per task.</p>{_left_out(report)}{warning}"
        "<table><tr><th>strategy</th><th>SR</th><th>SR_AC</th><th>SR_UA</th><th>tasks</th><th>calls</th>"
        "<th>tokens</th><th>prompt cached</th><th>wall s</th><th>steps</th><th>backtracks</th><th>approvals asked</th>"
        f"<th>model mistakes</th><th>model</th><th>--approve</th><th>not evaluated</th></tr>{rows}</table>"
        f"{_not_evaluated_html(report)}{_head_to_head_html(report)}"
        f"{_counts_html('How the runs ended', '', report, _ending_rows(report))}"
        f"{_counts_html('How near the failed runs came', _REACH_NOTE, report, _reach_rows(report))}"
        f"{_counts_html('Where the wrong answers came from', _ANSWER_SOURCE_NOTE, report, _answer_source_rows(report))}"
        f"<h2>Success against cost</h2>{_sr_vs_cost(report)}"
        f"<h2>Where the model calls go</h2>{_calls_by_role(report)}{_time_html(report)}{_mistakes(report)}"
        + grouped("By site", lambda s: s.by_site) + grouped("By task type", lambda s: s.by_type)
        + "<h2>Per task</h2><table><tr><th>task</th><th style='text-align:left'>intent</th>"
        + "".join(f"<th>{e(s)}</th>" for s in strategies) + f"</tr>{task_rows}</table></html>\n")


_HEAD_TO_HEAD_NOTE = ("Every two rows on the tasks both ran: only the tasks one of them solved tell them apart, and p "
                      "is how likely a split at least as uneven is if neither is better (McNemar's exact test).")


def _head_to_head_rows(report: Report) -> list[tuple[str, ...]]:
    return [(f"{pair.first} vs {pair.second}", str(pair.tasks), str(pair.both), str(pair.first_only),
             str(pair.second_only), f"{pair.p_value:.2f}") for pair in report.head_to_head]


def _head_to_head_html(report: Report) -> str:
    if not report.head_to_head:
        return ""
    e = html.escape
    rows = "".join("<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>"
                   for row in _head_to_head_rows(report))
    return (f"<h2>Head to head</h2><p>{e(_HEAD_TO_HEAD_NOTE)}</p><table><tr><th>rows</th><th>tasks</th>"
            f"<th>both solved</th><th>only the first</th><th>only the second</th><th>p (exact sign test)</th></tr>"
            f"{rows}</table>")


def _time_rows(report: Report) -> list[tuple[str, ...]]:
    """Per strategy that kept its calls' times: wall s, the seconds it waited on any model call and on each role's,
    the model's share of the wall time, and on how many tasks (results before schema 7 kept none)."""
    rows = []
    for s in report.strategies:
        costs = s.costs
        if not costs.timed:
            continue
        waited = costs.model_wait_s
        # Costs are over every result, those that could not be evaluated included.
        results = s.sr.tasks + s.not_evaluated
        share = f"{waited / costs.wall_s:.0%}" if costs.timed == results and costs.wall_s else "–"
        rows.append((s.label, f"{costs.wall_s:.1f}", f"{waited:.1f}",
                     *(f"{costs.model_seconds[role]:.1f}" if role in costs.model_seconds else "–" for role in ROLES),
                     share, f"{costs.timed} of {results}"))
    return rows


_TIME_NOTE = ("Seconds per task the run waited on the model: on any call (model s), and on each role's calls; calls "
              "under way at once count once, so the roles may add up to more than model s. The rest of the wall time "
              "is the browser, replays, the backend and starting the sites.")
_TIME_HEAD = ("strategy", "wall s", "model s", *(f"{role} s" for role in ROLES), "model share", "tasks timed")


def _time_html(report: Report) -> str:
    rows = _time_rows(report)
    if not rows:
        return ""
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in _TIME_HEAD)
    body = "".join("<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return (f"<h2>Where the time goes</h2><p>{_TIME_NOTE}</p><table><tr>{head}</tr>{body}</table>")


def _count_rows(report: Report, kinds: Sequence[_Kind], notes: Mapping[_Kind, str],
                counted: Callable[[StrategyReport], Mapping[_Kind, int]]) -> list[tuple[str, ...]]:
    """One row per kind some strategy counted, with its note and each strategy's count."""
    shown = [kind for kind in kinds if any(kind in counted(s) for s in report.strategies)]
    return [(kind, notes[kind], *(str(counted(s).get(kind, 0)) for s in report.strategies)) for kind in shown]


def _ending_rows(report: Report) -> list[tuple[str, ...]]:
    """One row per way a run can end that some run did, with how many of each strategy's runs ended so."""
    return _count_rows(report, ENDINGS, ENDING_NOTES, lambda s: s.endings)


def _reach_rows(report: Report) -> list[tuple[str, ...]]:
    """One row per nearness some failed run came to, with how many of each strategy's failed runs came so near."""
    return _count_rows(report, REACHES, REACH_NOTES, lambda s: s.reach)


def _answer_source_rows(report: Report) -> list[tuple[str, ...]]:
    return _count_rows(report, ANSWER_SOURCES, ANSWER_SOURCE_NOTES, lambda s: s.answer_sources)


_REACH_NOTE = ("Of the runs that failed an information or navigation task: how near they came, read from the run "
               "store's pages (the text each node's model was shown and the answer proposed there). Of the tasks an "
               "LLM judges, only an unachievable one's bare \"N/A\" proposed on the way is told.")
_ANSWER_SOURCE_NOTE = ("Of the runs that answered an information task wrong (\"N/A\" aside): whether the answer, its "
                       "words in order, is on a page the model was shown.")


def _counts_html(title: str, intro: str, report: Report, rows: list[tuple[str, ...]]) -> str:
    if not rows:
        return ""
    e = html.escape
    head = "".join(f"<th>{e(s.label)}</th>" for s in report.strategies)
    body = "".join(f"<tr><td title='{e(note)}'>{e(kind)}</td>" + "".join(f"<td>{n}</td>" for n in counts) + "</tr>"
                   for kind, note, *counts in rows)
    notes = "".join(f"<li><strong>{e(kind)}</strong>: {e(note)}</li>" for kind, note, *_ in rows)
    intro_html = f"<p>{e(intro)}</p>" if intro else ""
    return (f"<h2>{e(title)}</h2>{intro_html}<table><tr><th></th>{head}</tr>{body}</table>"
            f"<ul class='hint'>{notes}</ul>")


def _counts_markdown(intro: str, first: str, report: Report, rows: list[tuple[str, ...]]) -> list[str]:
    if not rows:
        return []
    labels = [s.label for s in report.strategies]
    return ["", intro, "", f"| {first} | " + " | ".join(labels) + " |", "|---|" + "--:|" * len(labels),
            *(f"| {kind} | " + " | ".join(counts) + " |" for kind, _, *counts in rows),
            "", *(f"- *{kind}*: {note}" for kind, note, *_ in rows)]


def _not_evaluated_lines(report: Report) -> list[str]:
    return [f"{task} ({label}): {why}" for task, label, why in report.not_evaluated]


def _not_evaluated_html(report: Report) -> str:
    if not report.not_evaluated:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in _not_evaluated_lines(report))
    return f"<p>Not evaluated, so left out of the rates (the task could not be set up or judged):</p><ul>{items}</ul>"


def _left_out(report: Report) -> str:
    if not report.left_out:
        return ""
    return (f"<p>Only the tasks every row has a result for; left out: "
            f"{', '.join(str(t) for t in report.left_out)}.</p>")


def _mistakes(report: Report) -> str:
    """The models' mistakes per task, by role and kind, one column per strategy; empty when there were none."""
    e = html.escape
    keys = sorted({(role, kind) for s in report.strategies for role, kinds in s.costs.mistakes.items()
                   for kind in kinds})
    if not keys:
        return ""
    head = "".join(f"<th>{e(s.label)}</th>" for s in report.strategies)
    body = "".join(
        f"<tr><td>{e(role)}: {e(MISTAKE_NAMES[kind])}</td>"
        + "".join(f"<td>{s.costs.mistakes.get(role, {}).get(kind, 0.0):.1f}</td>" for s in report.strategies)
        + "</tr>" for role, kind in keys)
    return (f"<h2>The models' mistakes</h2><p>Per task; each was fed back to the model where it could correct it.</p>"
            f"<table><tr><th></th>{head}</tr>{body}</table>")


def _md_rate(rate: Rate) -> str:
    return f"{rate.value:.1%} [{rate.low:.0%}–{rate.high:.0%}]" if rate.tasks else "–"


def render_markdown(report: Report) -> str:
    """The summary table as Markdown (for BENCHMARKS.md): SR with intervals and costs per task, side by side."""
    lines = ["| strategy | model | tasks | SR [95 % CI] | SR_AC | SR_UA | calls | tokens | prompt cached | wall s "
             "| steps | backtracks | model mistakes |", "|---|---|--:|---|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for s in report.strategies:
        flag = " (simulated/scripted)" if s.scripted else ""
        lines.append(f"| {s.label} | {', '.join(s.models)}{flag} | {s.sr.tasks} | {_md_rate(s.sr)} | "
                     f"{_md_rate(s.sr_ac)} | {_md_rate(s.sr_ua)} | {sum(s.costs.calls.values()):.1f} | "
                     f"{s.costs.total_tokens:,.0f} | {s.costs.cached_share:.0%} | {s.costs.wall_s:.1f} | "
                     f"{s.costs.steps:.1f} | {s.costs.backtracks:.1f} | {s.costs.mistakes_total:.1f} |")
    if report.left_out:
        lines.append(f"\nOnly the tasks every row has a result for; left out: "
                     f"{', '.join(str(t) for t in report.left_out)}.")
    if report.not_evaluated:
        lines += ["", "Not evaluated, so left out of the rates (the task could not be set up or judged):", "",
                  *(f"- {line}" for line in _not_evaluated_lines(report))]
    if report.head_to_head:
        lines += ["", f"Head to head. {_HEAD_TO_HEAD_NOTE}", "", "| rows | tasks | both solved | only the first | "
                  "only the second | p (exact sign test) |", "|---|--:|--:|--:|--:|--:|",
                  *("| " + " | ".join(row) + " |" for row in _head_to_head_rows(report))]
    lines += _counts_markdown("How the runs ended:", "ending", report, _ending_rows(report))
    lines += _counts_markdown(f"How near the failed runs came. {_REACH_NOTE}", "came", report, _reach_rows(report))
    lines += _counts_markdown(f"Where the wrong answers came from. {_ANSWER_SOURCE_NOTE}", "answer", report,
                              _answer_source_rows(report))
    timed = _time_rows(report)
    if timed:
        lines += ["", f"Where the time goes. {_TIME_NOTE}", "",
                  "| " + " | ".join(_TIME_HEAD) + " |", "|---|" + "--:|" * (len(_TIME_HEAD) - 1),
                  *("| " + " | ".join(row) + " |" for row in timed)]
    return "\n".join(lines) + "\n"


def write_report(folders: Sequence[Path | Source], out: Path, common: bool = False,
                 strategies: Sequence[str] | None = None, tasks: Sequence[TaskConfig] = ()) -> Report:
    """Merges the folders' results and writes out/report.json, out/report.html and the table in out/report.md;
    `common`: only the tasks every row has a result for; `strategies`: only theirs (None: all); `tasks`: the results'
    task configs, for how near the failed runs came (none: not told)."""
    read = _read(folders)
    results = [r for r in _latest(read) if strategies is None or r.strategy in strategies]
    names = [f"{f.version}={f.path}" if f.version else str(f.path) for f in map(_source, folders)]
    report = build_report(results, names, common, _nearness(read, tasks))
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    (out / "report.html").write_text(render_html(report), encoding="utf-8")
    (out / "report.md").write_text(render_markdown(report), encoding="utf-8")
    return report
