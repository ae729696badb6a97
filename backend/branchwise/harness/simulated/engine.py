"""The simulated model behind the scripted-model server: it knows each task's reference solution and errs at rate E.

A request is matched to its task by the task's intent (the longest intent the prompt contains), so one server serves
tasks run at once. Randomness is seeded from the seed, the prompt and how often that prompt was asked: the same
command gives the same run.
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
import threading
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ...scripted_model import Prompt, Reply, Selection
from ..tasks import TaskConfig
from .answers import (
    REFLECT_REPLY,
    Known,
    action_right,
    appraise_reply,
    checklist_reply,
    control_reply,
    extract_reply,
    fuzzy_judge_reply,
    plan_reply,
    policy_reply,
    rephrase_reply,
    reward_reply,
    subtask_done,
    ua_judge_reply,
    value_reply,
    value_truth,
)
from .page import parse_page
from .progress import Progress
from .prompts import Request, read_request

log = logging.getLogger(__name__)

PREFIX = "simulated"
# Element ids and the sandbox sites' origins change from run to run; the draws must not.
_VOLATILE = re.compile(r"\[\d+\]|https?://127\.0\.0\.1:\d+")
UNKNOWN_REPLY = "Simulated model: this prompt is about no task it knows. ```stop [N/A]```"


class SimulatedSpec(BaseModel):
    """`simulated:E` or `simulated:E:SEED`: E is the policy's error rate and the judges' rate of wrong verdicts."""

    model_config = ConfigDict(frozen=True)
    error_rate: float = Field(ge=0.0, le=1.0)
    seed: int = 0

    @classmethod
    def parse(cls, text: str) -> SimulatedSpec:
        parts = text.split(":")
        if parts[0] != PREFIX or len(parts) not in (2, 3):
            raise ValueError(f"expected simulated:E or simulated:E:SEED (E between 0 and 1), got {text!r}")
        try:
            return cls(error_rate=float(parts[1]), seed=int(parts[2]) if len(parts) == 3 else 0)
        except ValueError as exc:
            raise ValueError(f"{text!r}: E must be a number between 0 and 1 and SEED an integer ({exc})") from None

    @property
    def name(self) -> str:
        return f"{PREFIX}:{self.error_rate:g}" + (f":{self.seed}" if self.seed else "")


class MissingReferenceSolution(ValueError):
    pass


class SimulatedEngine:
    def __init__(self, tasks: Sequence[TaskConfig], spec: SimulatedSpec) -> None:
        missing = [t.task_id for t in tasks if t.reference_solution is None]
        if missing:
            raise MissingReferenceSolution(
                f"the simulated model answers from reference solutions; task(s) {', '.join(map(str, missing))} "
                "have none")
        self._spec = spec
        self._tasks = {t.intent: t for t in tasks}
        # Longest first, so an intent that contains another one wins.
        self._intents = sorted(self._tasks, key=len, reverse=True)
        self._lock = threading.Lock()
        self._known: dict[str, Known] = {}
        self._asked: Counter[str] = Counter()
        self._uses: Counter[str] = Counter()

    @property
    def spec(self) -> SimulatedSpec:
        return self._spec

    def _task_of(self, stated: str) -> Known | None:
        intent = stated if stated in self._tasks else next((i for i in self._intents if i in stated), None)
        if intent is None:
            return None
        if intent not in self._known:
            task = self._tasks[intent]
            assert task.reference_solution is not None
            self._known[intent] = Known(task, Progress(tuple(task.reference_solution.steps)))
        return self._known[intent]

    def _rng(self, prompt: Prompt, *, again: bool) -> random.Random:
        """Seeded by the seed and the prompt without what differs between runs (element ids, the sites' ports);
        `again`: a repeated prompt draws anew (a policy retried), else it gets the same draws (a judge asked twice)."""
        digest = hashlib.sha256(_VOLATILE.sub("#", prompt.all_text).encode()).hexdigest()
        self._asked[digest] += 1
        count = self._asked[digest] if again else 0
        seed = hashlib.sha256(f"{self._spec.seed}:{digest}:{count}".encode()).digest()
        return random.Random(int.from_bytes(seed[:8], "big"))

    def select(self, prompt: Prompt, n: int) -> Selection:
        with self._lock:
            request = read_request(prompt)
            known = self._task_of(request.task)
            rng = self._rng(prompt, again=request.kind == "policy")
            if known is None or request.kind == "unknown":
                log.warning("simulated model: a %s prompt for no known task; answering stop [N/A]", request.kind)
                return Selection(rule=None, replies=(Reply(text=UNKNOWN_REPLY),) * n)
            texts, label = self._answer(known, request, prompt, n, rng)
            self._uses[label] += 1
            return Selection(rule=label, replies=tuple(Reply(text=t) for t in texts))

    def _answer(self, known: Known, request: Request, prompt: Prompt, n: int,
                rng: random.Random) -> tuple[list[str], str]:
        """The n choices' texts, and a label for the request log ("policy: random+reference", "value", ...)."""
        error, kind = self._spec.error_rate, request.kind
        if kind == "policy":
            page = parse_page(request.page)
            position = known.progress.position(page, request.last_step, request.start)
            choices = [policy_reply(known, page, position, rng.random() < error, rng) for _ in range(n)]
            labels = sorted({c.label for c in choices})
            return [c.text for c in choices], f"policy: {'+'.join(labels)}"
        if kind == "value":
            page = parse_page(request.page)
            position = known.progress.position(page, request.last_step, request.start)
            truth = value_truth(known, position, request.answer)
            text = value_reply(truth, rng.random() < error, rng)
            return [text] * n, "value"
        if kind == "reward":
            page = parse_page(request.page)
            position = known.progress.position(page, request.last_step, request.start)
            right = action_right(known, page, position, request.proposed) != (rng.random() < error)
            return [reward_reply(known, position, right, prompt.last_user)] * n, "reward"
        if kind in ("planner", "controller", "extractor", "appraiser"):
            page = parse_page(request.page)
            position = known.progress.position(page, request.last_step, request.start)
            wrong = rng.random() < error
            if kind == "planner":
                return [plan_reply(known, position)] * n, kind
            if kind == "controller":
                return [control_reply(subtask_done(known, position, request.subtask), wrong)] * n, kind
            if kind == "extractor":
                return [extract_reply(known, position, wrong)] * n, kind
            return [appraise_reply(position.on_path, wrong)] * n, kind
        if kind == "reflect":
            return [REFLECT_REPLY] * n, kind
        if kind == "checklist":
            return [checklist_reply(known)] * n, "checklist"
        if kind == "rephrase":
            return [rephrase_reply(known.task.intent)] * n, "rephrase"
        if kind == "fuzzy_judge":
            return [fuzzy_judge_reply(request.reference, request.answer or "")] * n, "fuzzy_judge"
        return [ua_judge_reply(request.answer or "")] * n, "ua_judge"

    def uses(self) -> dict[str, int]:
        with self._lock:
            return dict(self._uses)

    def reset(self) -> None:
        with self._lock:
            self._known.clear()
            self._asked.clear()
            self._uses.clear()
