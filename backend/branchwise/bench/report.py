"""How a browser benchmark runs from its command line: progress on stderr with -v, the table on stdout, and the numbers
as JSON when asked."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

Report = TypeVar("Report", bound=BaseModel)


def run_and_report(measure: Coroutine[Any, Any, Report], table: Callable[[Report], str], *, verbose: bool,
                   json_path: Path | None) -> int:
    """Runs `measure`, prints `table` of its report and writes the report to `json_path`; the exit code."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    report = asyncio.run(measure)
    sys.stdout.write(table(report))
    if json_path is not None:
        json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return 0
