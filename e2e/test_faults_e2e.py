"""Faults around a run, through the real stack (`python -m branchwise.bench.faults`, a subset): each ends in a finished
run or a stop with a reason, and the shop's database shows the book added to the cart at most once — the backend
killed mid-action or told to stop, and resumed, included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from branchwise.bench.faults import FaultsReport

pytestmark = pytest.mark.e2e

# fault -> (how the run ends, what its reason or answer says, how many times the book went into the cart)
EXPECTED = {
    "none": ("finished", "answered: Added", 1),
    "model 500": ("failed", "the model could not be used", 0),
    "garbage after": ("failed", "3 answers in a row with no valid action", 1),
    "tab closed": ("failed", "the working tab was closed", 1),
    "worker stopped": ("finished", "answered: Added", 1),
    # The add cut off by the worker's restart: the cart the tab shows once it is back says it ran.
    "worker stopped mid-add": ("finished", "answered: Added", 1),
    # SIGKILL while the add runs, then `branchwise resume`: the cart the tab shows says the add ran; SIGKILL before it:
    # the resumed run adds the book once.
    "backend killed mid-add": ("finished", "answered: Added", 1),
    "backend killed thinking": ("finished", "answered: Added", 1),
    # SIGTERM while the add runs: the backend stops on its own (exit 143), the run left to resume, as after a crash.
    "backend terminated mid-add": ("finished", "answered: Added", 1),
}


def test_each_fault_ends_with_a_reason_and_nothing_is_added_twice(tmp_path: Path) -> None:
    out = tmp_path / "faults.json"
    done = subprocess.run([sys.executable, "-m", "branchwise.bench.faults", "--only", *EXPECTED, "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = FaultsReport.model_validate_json(out.read_text())
    seen = {o.fault: (o.status, o.reason or f"answered: {o.answer}", o.added) for o in report.outcomes}
    assert seen.keys() == EXPECTED.keys()
    for fault, (status, says, added) in EXPECTED.items():
        assert seen[fault][0] == status and says in seen[fault][1] and seen[fault][2] == added, (fault, seen[fault])
    assert all(o.repeated == 0 for o in report.outcomes)
    ended = {o.fault: (o.first_exit, o.calls_kept, o.first_result) for o in report.outcomes}
    # The model call that chose the add was on record before the add was sent; SIGTERM ends the backend on its own,
    # its --json result saying the run was interrupted (SIGKILL leaves none).
    assert ended["backend killed mid-add"] == (-9, 1, None), ended
    assert ended["backend terminated mid-add"] == (143, 1, "interrupted"), ended
    assert "| tab closed |" in done.stdout
