"""protocol/ is generated from the pydantic models: it must not drift, and every message has a valid example."""

from __future__ import annotations

import json
import re
from pathlib import Path

from branchwise.protocol import ALL_MESSAGES, PROTOCOL_VERSION, message_type
from branchwise.schema import EXAMPLES, generated_files

ROOT = Path(__file__).resolve().parents[1]


def test_committed_schema_matches_the_models() -> None:
    stale = []
    for relative, content in generated_files().items():
        path = ROOT / "protocol" / relative
        if not path.exists() or path.read_text() != content:
            stale.append(relative)
    committed = {p.relative_to(ROOT / "protocol").as_posix() for p in (ROOT / "protocol").rglob("*.json")}
    extra = committed - set(generated_files())
    assert not stale and not extra, f"protocol/ is out of date ({stale or extra}): run `make schema`"


def test_every_message_type_has_exactly_one_example_that_validates() -> None:
    types = [example.type for example in EXAMPLES]
    assert sorted(types) == sorted(message_type(m) for m in ALL_MESSAGES)
    by_type = {message_type(m): m for m in ALL_MESSAGES}
    for relative in (ROOT / "protocol" / "examples").glob("*.json"):
        data = json.loads(relative.read_text())
        model = by_type[data["type"]]
        assert model.model_validate(data).model_dump(mode="json", exclude_none=True) == data


def test_extension_speaks_the_same_protocol_version() -> None:
    source = (ROOT / "extension" / "lib" / "protocol.js").read_text()
    match = re.search(r"PROTOCOL_VERSION = (\d+);", source)
    assert match and int(match.group(1)) == PROTOCOL_VERSION
