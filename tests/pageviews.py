"""Small hand-built PageViews for the planner tests (no browser, no accessibility tree)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from branchwise.observation import ElementInfo, LocatorStep, PageView
from branchwise.observation.locator import build_index

# (role, name[, props[, ancestor role]]); the ancestor is an enclosing container such as a dialog.
ElementSpec = tuple[str, str] | tuple[str, str, Mapping[str, str]] | tuple[str, str, Mapping[str, str], str]


def _unpack(spec: ElementSpec) -> tuple[str, str, Mapping[str, str], str | None]:
    match spec:
        case (role, name):
            return role, name, {}, None
        case (role, name, props):
            return role, name, props, None
        case (role, name, props, ancestor):
            return role, name, props, ancestor
    raise TypeError(f"bad element spec {spec!r}")


def page(*elements: ElementSpec, children: Mapping[int, Sequence[int]] | None = None,
         url: str = "https://shop.example/", title: str = "Shop", inert: Collection[int] = ()) -> PageView:
    """Elements 1..n in document order; `children` puts ids under a parent id, the rest are top level; a click on an
    `inert` id can do nothing (text, a heading: no control in or around it).

    The text is one `[id] role 'name'` line per element, as the model would see it.
    """
    nesting = children or {}
    parents = {child: parent for parent, kids in nesting.items() for child in kids}
    specs = [(n, *_unpack(spec)) for n, spec in enumerate(elements, start=1)]
    index = build_index([
        (n, role, name, (LocatorStep(ancestor, "Dialog"),) if ancestor else (), None)
        for n, role, name, _, ancestor in specs
    ])

    def depth(n: int) -> int:
        return 1 if n not in parents else depth(parents[n]) + 1

    infos = {
        n: ElementInfo(id=n, role=role, name=name, value="", redacted=False, props=dict(props), backend_node_id=n,
                       target=None, frame_id="main", locator=index.locators[n], parent=parents.get(n),
                       children=tuple(nesting.get(n, ())), depth=depth(n), reacts=n not in inert)
        for n, role, name, props, _ in specs
    }
    text = "\n".join("\t" * (info.depth - 1) + f"[{n}] {info.role} '{info.name}'" for n, info in infos.items())
    return PageView(text=text, url=url, title=title, tab_ids=(1,), elements=infos, node_count_raw=len(infos),
                    index=index)
