"""The checkpoint rule: refresh-stable and at a URL of its own (WebOperator App. D)."""

from __future__ import annotations

from pathlib import Path

import pytest

from branchwise.observation import PageView, process
from branchwise.protocol import AXValue, Observation
from branchwise.search.checkpoint import is_checkpoint

FIXTURES = Path(__file__).parent / "fixtures" / "axtree"
PARENT = "http://127.0.0.1:37971/cart.html"


def load(name: str) -> Observation:
    return Observation.model_validate_json((FIXTURES / f"{name}.json").read_bytes())


@pytest.fixture(scope="module")
def before() -> PageView:
    return process(load("form"))


@pytest.fixture(scope="module")
def reloaded() -> PageView:
    """A real second capture of the same page: every DOM id differs, the content does not."""
    return process(load("form_second"))


@pytest.fixture(scope="module")
def lost_on_reload() -> PageView:
    """The reload cleared a typed note: the state depended on UI actions, not on the URL."""
    obs = load("form_second")
    notes = next(n for n in obs.frames[0].nodes if n.name is not None and n.name.value == "Notes")
    notes.value = AXValue(type="string", value="")
    return process(obs)


def test_stable_page_at_a_new_url(before: PageView, reloaded: PageView) -> None:
    assert is_checkpoint(url=before.url, parent_url=PARENT, before=before, after_reload=reloaded)


def test_page_changed_by_the_reload(before: PageView, lost_on_reload: PageView) -> None:
    assert not is_checkpoint(url=before.url, parent_url=PARENT, before=before, after_reload=lost_on_reload)


def test_same_url_as_the_parent(before: PageView, reloaded: PageView) -> None:
    assert not is_checkpoint(url=before.url, parent_url=before.url, before=before, after_reload=reloaded)


def test_fragment_only_difference(before: PageView, reloaded: PageView) -> None:
    assert not is_checkpoint(url=before.url + "#shipping", parent_url=before.url, before=before, after_reload=reloaded)
    assert not is_checkpoint(url=before.url + "#a", parent_url=before.url + "#b", before=before, after_reload=reloaded)


def test_root_depends_only_on_stability(before: PageView, reloaded: PageView, lost_on_reload: PageView) -> None:
    assert is_checkpoint(url=before.url, parent_url=None, before=before, after_reload=reloaded)
    assert not is_checkpoint(url=before.url, parent_url=None, before=before, after_reload=lost_on_reload)
