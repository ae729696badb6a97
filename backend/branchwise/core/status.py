"""The status names a run, a run's result and a search-tree node go through; stored as they are named here."""

from __future__ import annotations

from typing import Literal

# A run on record: running until it ends one of the final ways, or is found cut short by a backend exit.
RunStatus = Literal["running", "finished", "failed", "stopped", "interrupted"]
FinalStatus = Literal["finished", "failed", "stopped", "interrupted"]
# Why a run stops when its process is told to (SIGTERM, SIGHUP): the message its task is cancelled with, and its reason.
# It is recorded as interrupted, as a crash leaves it, so that `branchwise resume` can go on while its tab is open.
TERMINATED = "branchwise was told to stop (SIGTERM or SIGHUP) before the run finished"
# How a run that this process saw to its end ended: interrupted when the process was told to stop (TERMINATED).
ResultStatus = Literal["finished", "failed", "stopped", "interrupted"]
# open: reached, not expanded yet; expanded: its actions proposed; terminal: an answer; dead: the action failed, or the
# page repeats an earlier node's; invalid: unreachable since the site changed, or (greedy) an action that never ran.
NodeStatus = Literal["open", "expanded", "terminal", "dead", "invalid"]
BacktrackMode = Literal["speculative", "naive"]
# committed: the browser is at the target; aborted: nothing changed; failed: the working tab is somewhere unknown.
BacktrackOutcome = Literal["committed", "aborted", "failed"]
# planner: WebPilot's global level (plans, the controller's verdicts, the extractor's readings), counted apart.
Role = Literal["policy", "value", "reward", "planner"]
ROLES: tuple[Role, ...] = ("policy", "value", "reward", "planner")
