"""The greedy ReAct agent (WebArena's CoT baseline): observe, ask the model for one action, execute it, repeat.

Early stops follow WebArena: the same action proposed too often on an unchanged page, or too many invalid actions in a
row (unparseable answers and actions the page refused both count), or the step limit.

With a run store, the run is recorded as search runs are, as a linear tree: the start page, then one node per step.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import Counter
from typing import Protocol

from pydantic import BaseModel

from ..actions import ActionParseError, Stop, parse_response
from ..chat_model import complete_fitting
from ..llm import ChatMessage, Completion, LLMConfig, LLMError, Usage
from ..policy.prompts import PromptConfig, build_cot_messages
from ..protocol import new_id
from ..safety.gate import GateRun, NetworkGate, gate_run
from ..safety.secrets import SecretKeeper, mask_card_numbers
from ..safety.sites import SiteRefused
from ..search.approval import Approver, DenyApprover
from ..store import NodeRecord, RunRecord, RunStore, RunWriter
from ..store import UsageRecord as StoredUsage
from ..store.records import NodeStatus
from .env import EnvView, ExecResult
from .records import RunResult, StepRecord, UsageRecord
from .reporting import RunReporter

log = logging.getLogger(__name__)


class GreedyConfig(BaseModel):
    max_steps: int = 30
    # WebArena stops when the same action repeats more than this on one observation.
    max_repeats: int = 3
    max_invalid_in_a_row: int = 3
    temperature: float = 1.0
    prompt: PromptConfig = PromptConfig()


class Model(Protocol):
    async def complete(self, messages: list[ChatMessage], *, temperature: float | None = None) -> Completion: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def config(self) -> LLMConfig: ...


class Environment(Protocol):
    async def observe(self) -> EnvView: ...

    async def execute(self, action: object) -> ExecResult: ...


def approx_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def fingerprint(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


class GreedyTrace:
    """The run in the store, shaped like a search tree (node = page state, reached by its action from its parent):
    the start page is the root and step i's action leads to node i, whose page is known once step i+1 observes it."""

    def __init__(self, writer: RunWriter) -> None:
        self.writer = writer
        # What the store holds of each node, without page text (written once, when the page is observed).
        self.nodes: list[NodeRecord] = []

    async def _put(self, node: NodeRecord, text: str = "") -> None:
        if node.node_id == len(self.nodes):
            self.nodes.append(node)
        else:
            self.nodes[node.node_id] = node
        await self.writer.node(node.model_copy(update={"observation_text": text}) if text else node)

    async def observed(self, view: EnvView) -> None:
        page = {"url": view.url, "title": view.title}
        if self.nodes:
            await self._put(self.nodes[-1].model_copy(update=page), view.text)
        else:
            await self._put(NodeRecord(run_id=self.writer.run_id, node_id=0, **page), view.text)

    async def stepped(self, record: StepRecord, status: NodeStatus, answer: str | None = None) -> None:
        """Step `record` from the last node's page: "open" if its action ran, "dead" if the page refused it,
        "invalid" if it never ran, "terminal" for the answer."""
        parent = self.nodes[-1]
        if parent.status == "open":
            await self._put(parent.model_copy(update={"status": "expanded"}))
        # An action that did not run leaves the page as it was; where one that ran led is known at the next observe.
        url, title = ("", "") if status in ("open", "dead") else (parent.url, parent.title)
        await self._put(NodeRecord(
            run_id=self.writer.run_id, node_id=len(self.nodes), parent_id=parent.node_id, depth=parent.depth + 1,
            url=url, title=title, action_text=record.action, thought=record.thought, status=status, answer=answer))

    async def finished(self, result: RunResult, usage: Usage) -> None:
        if self.nodes:
            await self.writer.trajectory([n.node_id for n in self.nodes])
        await self.writer.finish(result.status, result.answer, result.reason,
                                 [StoredUsage(run_id=result.run_id, role="policy", **usage.model_dump())])


class GreedyAgent:
    def __init__(self, model: Model, config: GreedyConfig | None = None, *, store: RunStore | None = None,
                 gate: NetworkGate | None = None, approver: Approver | None = None) -> None:
        self.model = model
        # No classifier here: under the gate every mutating request of the run is held and `approver` asked.
        self.gate = gate
        self.approver = approver or DenyApprover()
        self.config = config or GreedyConfig()
        self.store = store

    async def run(
        self, task: str, env: Environment, reporter: RunReporter, *, run_id: str | None = None
    ) -> RunResult:
        run_id = run_id or new_id()
        # The client may be shared by several runs: count only what this one used.
        usage_before = self.model.usage
        # Card numbers in the task are masked wherever it is shown or stored; the model gets the task as written.
        shown_task = mask_card_numbers(task)
        result = RunResult(run_id=run_id, task=shown_task, status="failed")
        writer = RunWriter(self.store, run_id)
        await writer.start(RunRecord(run_id=run_id, task=shown_task, strategy="greedy",
                                     model=self.model.config.model))
        trace = GreedyTrace(writer)
        await reporter.started(run_id, shown_task)
        try:
            async with gate_run(self.gate, env, GateRun(run_id, writer, self.approver)):  # type: ignore[arg-type]
                await self._loop(task, env, reporter, result, trace, SecretKeeper())
        except asyncio.CancelledError:
            result.status, result.reason = "stopped", "stopped by the user"
            raise
        except LLMError as exc:
            result.status, result.reason = "failed", f"the model could not be used: {exc}"
        except SiteRefused as exc:
            log.warning("run %s stopped at the site lists: %s", run_id, exc)
            result.status, result.reason = "failed", f"stopped: {exc}"
        except Exception as exc:  # the run ends with a reason instead of a traceback in the user's terminal
            log.exception("run %s failed", run_id)
            result.status, result.reason = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            used = self.model.usage - usage_before
            result.usage = UsageRecord.of(used)
            await trace.finished(result, used)
            await asyncio.shield(reporter.finished(result))
        return result

    async def _loop(self, task: str, env: Environment, reporter: RunReporter, result: RunResult,
                    trace: GreedyTrace, secrets: SecretKeeper) -> None:
        previous: str | None = None
        repeats: Counter[tuple[str, str]] = Counter()
        invalid_in_a_row = 0
        for index in range(1, self.config.max_steps + 1):
            view = await env.observe()
            await trace.observed(view)
            messages = build_cot_messages(task, view.text, view.url, previous, config=self.config.prompt)
            completion = await complete_fitting(self.model, messages, temperature=self.config.temperature)
            record = StepRecord(index=index, url=view.url, observation_chars=len(view.text),
                                observation_tokens=approx_tokens(view.text))
            status: NodeStatus = "invalid"
            try:
                parsed = parse_response(completion.text)
            except ActionParseError as exc:
                problem = secrets.scrub(str(exc))
                record.thought = secrets.scrub(completion.text.strip())[-500:]
                record.error = f"invalid answer: {problem}"
                previous = f"None (your last answer had no valid action: {problem})"
                invalid_in_a_row += 1
            else:
                # From here on a typed password or card number shows as [••••••] (history, logs, store, --json).
                action, thought = secrets.seal(parsed.action, parsed.thought.strip(), view.page)
                record.thought, record.action = thought, action.to_text()
                if isinstance(action, Stop):
                    await trace.stepped(record, "terminal", action.answer)
                    result.steps.append(record)
                    await reporter.step(result.run_id, record)
                    result.status, result.answer = "finished", action.answer
                    return
                key = (fingerprint(view.text), record.action)
                repeats[key] += 1
                if repeats[key] > self.config.max_repeats:
                    record.error = "same action repeated on an unchanged page"
                    await trace.stepped(record, "invalid")
                    result.steps.append(record)
                    await reporter.step(result.run_id, record)
                    result.reason = (f"stopped early: `{record.action}` was proposed {repeats[key]} times on the same "
                                     "page")
                    return
                outcome = await env.execute(action)
                status = "open" if outcome.ok else "dead"
                if outcome.ok:
                    invalid_in_a_row = 0
                    previous = record.action
                else:
                    invalid_in_a_row += 1
                    record.error = outcome.error
                    previous = f"{record.action} (it failed: {outcome.error})"
            await trace.stepped(record, status)
            result.steps.append(record)
            await reporter.step(result.run_id, record)
            if invalid_in_a_row >= self.config.max_invalid_in_a_row:
                result.reason = f"stopped early: {invalid_in_a_row} invalid actions in a row (last: {record.error})"
                return
        result.reason = f"reached the step limit ({self.config.max_steps}) without an answer"

