"""A run says it is waiting on the model while a call takes long, and stops saying it once the calls are answered."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from branchwise.llm import ChatMessage, Completion
from branchwise.search.roles import RoleModel
from branchwise.search.waiting import ModelWait

from fake_models import FakeModel


class SlowModel(FakeModel):
    """Answers "ok" after `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(lambda call: "ok")
        self.seconds = seconds

    async def complete(self, messages: Sequence[ChatMessage], **kwargs: object) -> Completion:
        await asyncio.sleep(self.seconds)
        return await super().complete(messages)


class Said(list[str]):
    """The lines a run said, in order."""

    async def __call__(self, text: str) -> None:
        self.append(text)


ASK = [ChatMessage(role="user", content="x" * 400)]


def test_a_long_call_is_said_to_be_waited_on_until_it_is_answered() -> None:
    said = Said()
    async def main() -> None:
        wait = ModelWait(said, first_s=0.1, every_s=0.2)
        policy = RoleModel(SlowModel(0.45), "policy", wait=wait)
        await policy.complete(ASK)
        told = len(said)
        await asyncio.sleep(0.3)
        assert len(said) == told, "nothing is said once the call is answered"
        await RoleModel(SlowModel(0.02), "value", wait=wait).complete(ASK)
        await asyncio.sleep(0.15)
        assert len(said) == told, "a quick call is not said to be waited on"

    asyncio.run(main())
    assert said, "a call of 0.45 s is said to be waited on after 0.1 s"  # and again every 0.2 s while it lasts
    assert all(line.startswith("waiting on the model: the policy's call, ") for line in said), said
    assert said[0].endswith(" s so far (104 prompt tokens)"), "as the prompt was counted"


def test_calls_made_at_once_share_one_line() -> None:
    said = Said()
    async def main() -> None:
        wait = ModelWait(said, first_s=0.1, every_s=10.0)
        reward = RoleModel(SlowModel(0.25), "reward", wait=wait)
        policy = RoleModel(SlowModel(0.25), "policy", wait=wait)
        await asyncio.gather(reward.complete(ASK), reward.complete(ASK), policy.complete(ASK))

    asyncio.run(main())
    assert len(said) == 1 and said[0].startswith("waiting on the model: 3 calls (reward ×2, policy), the oldest "), said


def test_a_line_that_fails_is_said_again_later() -> None:
    tries: list[str] = []

    async def say(text: str) -> None:
        tries.append(text)
        raise ConnectionError("the side panel went away")

    async def main() -> str:
        wait = ModelWait(say, first_s=0.05, every_s=0.05)
        return (await RoleModel(SlowModel(0.3), "policy", wait=wait).complete(ASK)).text

    assert asyncio.run(main()) == "ok"
    assert len(tries) >= 2, tries


def test_calls_a_run_left_under_way_are_not_said_to_be_waited_on_after_it_ended() -> None:
    """A generator still answering after its sibling failed the run: the run's end closes the waiting."""
    said = Said()
    async def main() -> None:
        wait = ModelWait(said, first_s=0.05, every_s=0.05)
        left = asyncio.create_task(RoleModel(SlowModel(0.4), "reward", wait=wait).complete(ASK))
        await asyncio.sleep(0.02)
        wait.close()
        await RoleModel(SlowModel(0.2), "policy", wait=wait).complete(ASK)
        await left

    asyncio.run(main())
    assert said == []
