/**
 * `graph.reachable` and `graph.reachable_paths` (`v1/topdown/graphs.go`). A graph is an object
 * from vertex to its neighbours (an array or a set); vertex collections may be arrays or sets.
 */
import { makeArray, makeSet, type ObjectValue, type SetValue, type Value } from "../../plan/value.ts";
import { arg, define, objectArg, typeError } from "../registry.ts";

/** The vertices of an array or a set; anything else has none (OPA's `foreachVertex`). */
function vertices(v: Value | undefined): readonly Value[] {
  if (v?.type === "array") return v.items;
  if (v?.type === "set") return v.elements();
  return [];
}

define("graph.reachable", (args) => {
  const graph = arg(args, 0);
  const reached = makeSet();
  if (graph.type !== "object") return reached;
  const queue = [...vertices(arg(args, 1))];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i];
    if (node === undefined) continue;
    const edges = graph.get(node);
    if (edges === undefined) continue;
    for (const neighbor of vertices(edges)) if (!reached.has(neighbor)) queue.push(neighbor);
    reached.add(node);
  }
  return reached;
});

/** OPA's `pathBuilder`: the paths from `root` onwards, each ending at a leaf, a cycle or a missing vertex. */
function buildPaths(
  graph: ObjectValue,
  root: Value,
  path: Value[],
  results: SetValue,
  reached: SetValue,
): void {
  const edges = graph.get(root);
  if (edges === undefined) {
    results.add(makeArray([...path]));
    return;
  }
  const here = [...path, root];
  const neighbors = vertices(edges);
  if (neighbors.length === 0) {
    results.add(makeArray(here));
    return;
  }
  for (const neighbor of neighbors) {
    if (reached.has(neighbor)) results.add(makeArray([...here]));
    else {
      reached.add(root);
      buildPaths(graph, neighbor, here, results, reached);
    }
  }
}

define("graph.reachable_paths", (args) => {
  const graph = objectArg(args, 0);
  const initial = arg(args, 1);
  if (initial.type !== "array" && initial.type !== "set") return typeError(2, initial, "{array, set}");
  const results = makeSet();
  for (const node of vertices(initial)) {
    const edges = graph.get(node);
    if (edges === undefined) continue;
    const neighbors = vertices(edges);
    if (neighbors.length === 0) results.add(makeArray([node]));
    for (const neighbor of neighbors) buildPaths(graph, neighbor, [node], results, makeSet([node]));
  }
  return results;
});
