// Folding: a large graph is drawn with its leaves — the rules of routes and
// the backends (with their ports) — folded into the object they hang from,
// so that the page draws and lays out a few hundred objects instead of
// thousands (docs/ui.md, "Folding"). A leaf hangs from its most specific
// parent on the graph: a rule from its route; a backend from the route or
// rule whose context names it, else from the Namespace, listener or Gateway
// its policies' contexts pass through (most backends: the API names no
// route for them). The object holding folded leaves says how many and
// the outcomes hidden in them; a click (or a mark on a few of them)
// draws them, and a click on an object opened so folds them back.
import { outcomes } from "./outcomes.js";

// foldOver: a graph of more objects than this is folded; the demo's (a
// dozen objects) and any graph dagre lays out whole is drawn as it is.
export const foldOver = 150;

// level is how general an object is: the GatewayClass most, then Gateways,
// listeners, Namespaces, routes, rules, backends, backends' ports.
export function level(n) {
  const kind = n.kind || "";
  const section = Boolean(n.section);
  if (kind === "GatewayClass") return 7;
  if (kind === "Gateway" || kind === "ListenerSet" || kind === "XListenerSet") return section ? 5 : 6;
  if (kind === "Namespace") return 4;
  if (kind.endsWith("Route")) return section ? 2 : 3;
  return section ? 0 : 1;
}

// leaf: what folds (a rule, a backend or its port).
const leaf = (n) => level(n) <= 2;

// buildModel reads graph ({nodes, edges}) into what folding needs: the
// parents each leaf folds into (its most specific ones), and what prev
// (the model of the graph drawn before) had opened or shown.
export function buildModel(graph, prev) {
  const nodes = new Map();
  for (const n of graph.nodes || []) nodes.set(n.id, n);
  const parents = new Map();
  for (const e of graph.edges || []) {
    if (!nodes.has(e.from) || !nodes.has(e.to)) continue;
    if (!parents.has(e.to)) parents.set(e.to, []);
    parents.get(e.to).push(nodes.get(e.from));
  }
  const owners = new Map();
  for (const n of nodes.values()) {
    const ps = parents.get(n.id);
    if (!leaf(n) || !ps) continue;
    const min = Math.min(...ps.map(level));
    if (min > level(n)) owners.set(n.id, ps.filter((p) => level(p) === min).map((p) => p.id));
  }
  const kept = (set) => new Set([...(set || [])].filter((id) => nodes.has(id)));
  return {
    nodes,
    edges: graph.edges || [],
    owners,
    folding: nodes.size > foldOver,
    // open: the holders clicked open; shown: leaves drawn for a mark.
    open: kept(prev && prev.open),
    shown: kept(prev && prev.shown),
    marks: [],
    painted: Boolean(prev && prev.painted),
  };
}

// visibility answers, for each node id, whether it is drawn: everything
// when the graph is not folded; else a leaf when shown, or when a parent it
// folds into is drawn and open (a drawn leaf is open: a backend drawn
// draws its ports).
export function visibility(m) {
  const vis = new Map();
  const visible = (id) => {
    if (vis.has(id)) return vis.get(id);
    vis.set(id, true); // a cycle, which levels rule out, would stay drawn
    const os = m.owners.get(id);
    const v = !m.folding || !os || m.shown.has(id) || os.some((o) => visible(o) && (m.open.has(o) || m.owners.has(o)));
    vis.set(id, v);
    return v;
  };
  for (const id of m.nodes.keys()) visible(id);
  return vis;
}

// holders groups the hidden leaves by the drawn object that holds them
// (the first parent drawn, up the parents each folds into).
export function holders(m, vis) {
  const holder = new Map();
  const of = (id) => {
    if (holder.has(id)) return holder.get(id);
    const o = m.owners.get(id)[0];
    const h = vis.get(o) ? o : of(o);
    holder.set(id, h);
    return h;
  };
  const out = new Map();
  for (const id of m.nodes.keys()) {
    if (vis.get(id)) continue;
    const h = of(id);
    if (!out.has(h)) out.set(h, []);
    out.get(h).push(id);
  }
  return out;
}

// descendants are the leaves that fold, directly or through other
// leaves, into id (what folding id back may hide).
function descendants(m, id) {
  if (!m.children) {
    m.children = new Map();
    for (const [leafId, os] of m.owners) {
      for (const o of os) {
        if (!m.children.has(o)) m.children.set(o, []);
        m.children.get(o).push(leafId);
      }
    }
  }
  const out = new Set();
  const todo = [id];
  while (todo.length) {
    for (const c of m.children.get(todo.pop()) || []) {
      if (!out.has(c)) {
        out.add(c);
        todo.push(c);
      }
    }
  }
  return out;
}

// opened groups, for each holder the user opened, the drawn leaves that
// folding it back would hide (none when another open holder draws them).
export function opened(m, vis) {
  const out = new Map();
  if (!m.folding) return out;
  for (const h of m.open) {
    if (!vis.get(h)) continue;
    const below = descendants(m, h);
    const open = new Set(m.open);
    open.delete(h);
    const shown = new Set([...m.shown].filter((x) => !below.has(x)));
    const after = visibility({ ...m, open, shown });
    const ids = [...below].filter((x) => vis.get(x) && !after.get(x));
    if (ids.length) out.set(h, ids);
  }
  return out;
}

// foldBack folds what the holder id opened back into it: its leaves are
// hidden again, those a mark drew too (a mark still on them is counted
// on id, as for any folded leaf).
export function foldBack(m, id) {
  m.open.delete(id);
  for (const x of descendants(m, id)) m.shown.delete(x);
}

// withAfter is graph with after (the targets a change reaches for the
// first time, as they would be) drawn in: an object the graph has takes
// its after-state when after has it as a target, one it lacks is added
// and says it is new.
export function withAfter(graph, after) {
  if (!after || !after.nodes || after.nodes.length === 0) return graph;
  const byId = new Map(after.nodes.map((n) => [n.id, n]));
  const have = new Set();
  const nodes = (graph.nodes || []).map((n) => {
    have.add(n.id);
    const a = byId.get(n.id);
    return a && a.target ? a : n;
  });
  for (const a of after.nodes) if (!have.has(a.id)) nodes.push({ ...a, fresh: true, base: a.base + "\n✚ new with this change" });
  const edges = graph.edges || [];
  const seen = new Set(edges.map((e) => e.from + "->" + e.to));
  return { ...graph, nodes, edges: [...edges, ...(after.edges || []).filter((e) => !seen.has(e.from + "->" + e.to))] };
}

const worst = ["conflict", "partial", "lost", "enforced"];

function count(n, one, many) {
  return n + " " + (n === 1 ? one : many);
}

// badge is the line a holder draws for its hidden leaves: how many of
// each, and how many of them each outcome colors (the worst one also
// colors the holder's border); what is the first part alone (an open
// holder's "▾ fold" says it, its leaves drawn show their colors).
export function badge(m, ids) {
  let rules = 0;
  let backends = 0;
  let ports = 0;
  const by = {};
  for (const id of ids) {
    const n = m.nodes.get(id);
    const l = level(n);
    if (l === 2) rules++;
    else if (l === 1) backends++;
    else ports++;
    if (n.outcome && n.outcome !== "none") by[n.outcome] = (by[n.outcome] || 0) + 1;
  }
  const what = [];
  if (rules) what.push(count(rules, "rule", "rules"));
  if (backends) what.push(count(backends, "backend", "backends"));
  if (ports) what.push(count(ports, "port", "ports"));
  const colors = worst.filter((o) => by[o]).map((o) => by[o] + " " + outcomes[o].text);
  return {
    text: "▸ folded: " + what.join(", ") + (colors.length ? "\n" + colors.join(" · ") : ""),
    what: what.join(", "),
    inner: worst.find((o) => by[o]) || "none",
  };
}

// elements are the cytoscape elements of what m draws: each holder's
// label with its badge under the server's own (base): "▸ folded" for what
// it holds, "▾ fold" for what it was opened to draw.
export function elements(m) {
  const vis = visibility(m);
  const inside = holders(m, vis);
  const open = m.open.size ? opened(m, vis) : new Map();
  const out = [];
  for (const n of m.nodes.values()) {
    if (!vis.get(n.id)) continue;
    const data = { ...n, folded: 0, open: 0, what: "", inner: "" };
    const ids = inside.get(n.id);
    const drawnIds = open.get(n.id);
    if (ids) {
      const b = badge(m, ids);
      data.base = n.base + "\n" + b.text;
      data.folded = ids.length;
      data.what = b.what;
      data.inner = b.inner;
    } else if (drawnIds) {
      const b = badge(m, drawnIds);
      data.base = n.base + "\n▾ fold: " + b.what;
      data.open = drawnIds.length;
      data.what = b.what;
    }
    data.label = data.base;
    out.push({ group: "nodes", data });
  }
  for (const e of m.edges) {
    if (vis.get(e.from) && vis.get(e.to)) out.push({ group: "edges", data: { id: e.from + "->" + e.to, source: e.from, target: e.to } });
  }
  return out;
}

// reveal marks the hidden leaves of ids as shown, with the leaves they
// fold into up to a drawn one, and answers the drawn holders of each.
export function reveal(m, ids) {
  const vis = visibility(m);
  const inside = holders(m, vis);
  const holderOf = new Map();
  for (const [h, hidden] of inside) for (const id of hidden) holderOf.set(id, h);
  const groups = new Map();
  for (const id of ids) {
    if (!holderOf.has(id)) continue;
    const h = holderOf.get(id);
    for (let x = id; x !== h && !vis.get(x); x = m.owners.get(x).find((o) => vis.get(o) || holderOf.get(o) === h) || h) m.shown.add(x);
    groups.set(h, true);
  }
  return [...groups.keys()];
}
