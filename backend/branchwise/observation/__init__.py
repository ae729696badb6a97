"""AX tree -> pruned tree -> WebArena-style text with ids, plus locators that survive reloads.

    view = process(observation, ObservationConfig())
    view.text                      # what the model reads
    view.elements[id].ref          # ElementRef for the extension
    view.elements[id].locator      # stable address for replay and snapshot comparison
    other_view.find(locator)       # the same element in another capture, or None
"""

from branchwise.observation.config import ObservationConfig
from branchwise.observation.locator import Locator, LocatorStep
from branchwise.observation.view import ElementInfo, PageView, process

__all__ = ["ElementInfo", "Locator", "LocatorStep", "ObservationConfig", "PageView", "process"]
