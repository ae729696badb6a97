"""What the task-suite generators (scripts/tasks/make_*_tasks.py) share: solution steps as the config stores them,
intent templates filled in, SQL string literals, and the JSON files written byte for byte the same every time."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .tasks import SolutionStep

Step = dict[str, Any]


def step(action: str, role: str | None = None, name: str | None = None, text: str | None = None,
         enter: bool = False) -> Step:
    """One reference-solution step, validated, with only the fields it sets (in the config's field order)."""
    validated = SolutionStep.model_validate({"action": action, "role": role, "name": name, "text": text,
                                             "enter": enter})
    return validated.model_dump(exclude_defaults=True)


def fill(template: str, values: Mapping[str, Any]) -> str:
    """An intent template with its {{placeholders}} replaced; every placeholder must get a value."""
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", str(value))
    if "{{" in template:
        raise ValueError(f"a placeholder has no value: {template}")
    return template


def sql_text(value: str) -> str:
    """`value` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def dumps(tasks: Sequence[Mapping[str, Any]]) -> str:
    """A task file's text: the same tasks always give the same bytes."""
    return json.dumps(list(tasks), indent=2, ensure_ascii=False) + "\n"
