"""The labelled corpus: real actions taken on the sandbox sites, each with what the classifier saw before it ran (the
element's accessibility info and DOM facts), whether the site's database changed when it ran, and which mutating
requests the network gate held while it ran.

`branchwise.bench.safety_corpus` builds it in real Chromium; `branchwise.bench.safety` and the unit tests read it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..actions import Action, parse_action
from ..observation import ElementInfo, LocatorStep, PageView
from ..observation.locator import build_index
from ..protocol import ElementFacts

# The corpus kept in the repository (the package is installed in editable mode from backend/).
DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "safety_corpus.json"


class CorpusElement(BaseModel):
    """The target element as the observation showed it."""

    model_config = ConfigDict(extra="forbid")
    role: str
    name: str
    props: dict[str, str] = {}
    # Context ancestors (landmarks, forms, dialogs, headings), outermost first, as [role, name].
    ancestors: list[tuple[str, str]] = []


class CorpusRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="Unique and readable: site, state, page, action and target")
    site: str = Field(description="The sandbox site, by WebArena's name: shopping, reddit, gitlab")
    state: str = Field(description="The site state the action ran in (guest, guest with a cart, signed in...)")
    page_url: str
    action: str = Field(description="The action in WebArena syntax, with the element id it had on the page")
    element: CorpusElement | None = None
    facts: ElementFacts | None = None
    changed_server_state: bool = Field(description="The site's SQLite fingerprint differed after the action")
    held: list[str] = Field(default=[], description="Mutating requests the network gate held during the action, as "
                                                     "'METHOD URL': what it would have asked about")
    ok: bool = True
    error: str = ""
    url_after: str = ""


class SafetyCorpus(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str
    origins: dict[str, str] = Field(description="Each site's address in the records (the real port varied per action)")
    seed: int
    records: list[CorpusRecord]


def load_corpus(path: Path = DEFAULT_CORPUS) -> SafetyCorpus:
    return SafetyCorpus.model_validate_json(path.read_text())


def classifier_inputs(record: CorpusRecord) -> tuple[Action, PageView]:
    """The action and a one-element page as the classifier would have seen them before the action ran."""
    action = parse_action(record.action)
    element_id = action.element_id
    elements: dict[int, ElementInfo] = {}
    index = build_index([])
    if record.element is not None and element_id is not None:
        ancestors = tuple(LocatorStep(role, name) for role, name in record.element.ancestors)
        index = build_index([(element_id, record.element.role, record.element.name, ancestors, None)])
        elements[element_id] = ElementInfo(
            id=element_id, role=record.element.role, name=record.element.name, value="", redacted=False,
            props=dict(record.element.props), backend_node_id=element_id, target=None, frame_id="main",
            locator=index.locators[element_id], parent=None, children=(), depth=1)
    page = PageView(text="", url=record.page_url, title="", tab_ids=(1,), elements=elements,
                    node_count_raw=len(elements), index=index)
    return action, page
