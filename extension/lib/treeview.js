// Draws a run's search tree (the latest tree_update) for the side panel: nested nodes, the frontier, the backtracks
// and, once chosen, the trajectory; a dead or invalid node's status says why on hover. Hooks for tests and styles:
// li.node[data-node-id][data-status], .node-status[title], .current, .on-trajectory, .badge.class-<class>,
// li.frontier-item[data-node-id], li.backtrack[data-outcome], .trajectory.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

const fixed = (x) => Number(x).toFixed(2);
const nodeRef = (id) => el("span", { class: "node-id" }, `#${id}`);

function classBadge(actionClass) {
  if (!actionClass) return null;
  return el("span", { class: `badge class-${actionClass}`, "data-class": actionClass }, actionClass);
}

function number(kind, label, x) {
  if (x == null) return null;
  return el("span", { class: `num node-${kind}`, title: kind, [`data-${kind}`]: fixed(x) }, `${label} ${fixed(x)}`);
}

function nodeRow(node) {
  const row = el("div", { class: "node-row", title: node.url || null },
    nodeRef(node.id),
    el("span", { class: "action node-action" }, node.action || (node.parent == null ? "start" : "…")),
    classBadge(node.action_class),
    number("value", "v", node.value),
    number("reward", "r", node.reward),
  );
  if (node.checkpoint) {
    row.append(el("span", { class: "checkpoint", title: "checkpoint", "aria-label": "checkpoint" }, "⚑"));
  }
  if (node.status !== "open" && node.status !== "expanded") {
    row.append(el("span", { class: "node-status", title: node.note || null }, node.status));
  }
  return row;
}

function nodeList(tree, ids, children, onPath, seen) {
  const list = el("ul", { class: "tree-nodes" });
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    const node = tree.byId.get(id);
    const classes = ["node", `status-${node.status}`];
    if (id === tree.current) classes.push("current");
    if (onPath.has(id)) classes.push("on-trajectory");
    const item = el("li", {
      class: classes.join(" "), "data-node-id": id, "data-status": node.status,
      "aria-current": id === tree.current ? "step" : null,
    }, nodeRow(node));
    const kids = children.get(id) || [];
    if (kids.length) item.append(nodeList(tree, kids, children, onPath, seen));
    list.append(item);
  }
  return list;
}

export function renderTree(tree) {
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  const children = new Map();
  const roots = [];
  for (const node of [...tree.nodes].sort((a, b) => a.id - b.id)) {
    if (node.parent != null && byId.has(node.parent)) {
      if (!children.has(node.parent)) children.set(node.parent, []);
      children.get(node.parent).push(node.id);
    } else {
      roots.push(node.id);
    }
  }
  const trajectory = tree.trajectory || [];
  const onPath = new Set(trajectory);
  const box = el("section", { class: "tree", "data-strategy": tree.strategy, "aria-label": "Search tree" },
    el("h3", {}, "Search tree ", el("span", { class: "hint" }, `${tree.strategy} · ${tree.nodes.length} nodes`)),
    el("p", { class: "hint legend" }, "v value · r reward · ⚑ checkpoint"),
    nodeList({ ...tree, byId }, roots, children, onPath, new Set()),
  );
  if (trajectory.length) {
    const path = el("p", { class: "trajectory", "data-trajectory": trajectory.join(" ") },
      el("strong", {}, "Chosen path: "));
    trajectory.forEach((id, i) => path.append(i ? " → " : "", nodeRef(id)));
    box.append(path);
  }
  if (tree.frontier?.length) {
    box.append(el("h4", {}, `Frontier (${tree.frontier.length})`), el("ol", { class: "frontier" },
      ...tree.frontier.map((f) => el("li", { class: "frontier-item", "data-node-id": f.node },
        nodeRef(f.node), " ", el("span", { class: "action" }, f.action), " ", classBadge(f.action_class), " ",
        number("reward", "r", f.reward)))));
  }
  if (tree.backtracks?.length) {
    box.append(el("h4", {}, "Backtracks"), el("ul", { class: "backtracks" },
      ...tree.backtracks.map((b) => el("li", { class: "backtrack", "data-outcome": b.outcome, "data-mode": b.mode },
        nodeRef(b.source), " → ", nodeRef(b.target), " ",
        el("span", { class: `badge outcome-${b.outcome}` }, b.outcome), " ",
        el("span", { class: "hint" }, b.mode),
        b.reason ? el("div", { class: "reason" }, b.reason) : null))));
  }
  return box;
}
