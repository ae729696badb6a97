"""The ids the model sees: backendDOMNodeIds, made unique across CDP targets.

backendDOMNodeIds are only unique within one target, and every out-of-process iframe is a target of its own whose
numbering starts again near 1. Rule (deterministic for a given observation):

- nodes of the tab's own target (target None) always keep their backendDOMNodeId, so ids the model saw on the main
  page stay valid from one step to the next;
- targets are then taken in the order their first frame appears in `Observation.frames`, nodes in frame order; a node
  keeps its backendDOMNodeId unless an earlier node already holds that number;
- a colliding node gets `raw + k * S`, where S is the smallest power of ten above every backendDOMNodeId in the
  observation (at least 1000) and k = 1, 2, ... is the first that gives a free id. Since raw < S, a remapped id never
  equals a raw one: ids stay short and the origin of a remapped id is readable (raw id 12 becomes 1012).

Every id maps back to an ElementRef (raw backendDOMNodeId + target) for the extension: see ElementInfo.ref.
"""

from __future__ import annotations

from dataclasses import dataclass

from branchwise.protocol import FrameTree

MIN_REMAP_STRIDE = 1000


@dataclass(frozen=True, slots=True)
class IdMap:
    # Only nodes of out-of-process targets are listed: the tab's own nodes keep their raw id.
    remapped: dict[tuple[str, int], int]

    def id_of(self, target: str | None, backend_id: int) -> int:
        return backend_id if target is None else self.remapped[(target, backend_id)]


def remap_stride(largest_raw_id: int) -> int:
    stride = MIN_REMAP_STRIDE
    while stride <= largest_raw_id:
        stride *= 10
    return stride


def assign_ids(frames: list[FrameTree]) -> IdMap:
    remote = [frame for frame in frames if frame.target is not None]
    if not remote:
        return IdMap({})
    taken = {n.backendDOMNodeId for frame in frames if frame.target is None for n in frame.nodes}
    taken.discard(None)
    largest = max((n.backendDOMNodeId or 0 for frame in frames for n in frame.nodes), default=0)
    stride = remap_stride(largest)
    remapped: dict[tuple[str, int], int] = {}
    for frame in remote:
        target = frame.target
        assert target is not None
        for node in frame.nodes:
            raw = node.backendDOMNodeId
            if raw is None or (target, raw) in remapped:
                continue
            public = raw
            while public in taken:
                public += stride
            remapped[(target, raw)] = public
            taken.add(public)
    return IdMap(remapped)
