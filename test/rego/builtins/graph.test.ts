import { describe, expect, it } from "vitest";
import { call, callValue, errorOf, evalRego } from "./helpers-net.ts";

const graph = { a: ["b", "c"], b: { set: ["d"] }, c: [], d: ["a"], e: ["f"] };

describe("graph", () => {
  it("reaches every vertex from the start set", () => {
    expect(call("graph.reachable", graph, ["a"])).toEqual(["a", "b", "c", "d"]);
    expect(call("graph.reachable", graph, { set: ["e"] })).toEqual(["e"]);
    expect(call("graph.reachable", graph, ["zzz"])).toEqual([]);
    expect(call("graph.reachable", "not a graph", ["a"])).toEqual([]);
    expect(callValue("graph.reachable", graph, ["a"])?.type).toBe("set");
  });

  it("lists the paths, stopping at leaves, cycles and missing vertices", () => {
    expect(call("graph.reachable_paths", graph, ["a"])).toEqual([
      ["a", "b", "d"],
      ["a", "c"],
    ]);
    expect(call("graph.reachable_paths", graph, ["c"])).toEqual([["c"]]);
    expect(call("graph.reachable_paths", graph, ["e"])).toEqual([["e"]]);
    expect(errorOf("graph.reachable_paths", graph, "a")).toBe(
      "eval_type_error: graph.reachable_paths: operand 2 must be {array, set} but got string",
    );
    expect(errorOf("graph.reachable_paths", [], ["a"])).toBe(
      "eval_type_error: graph.reachable_paths: operand 1 must be object but got array",
    );
  });

  it("runs through the SDK", async () => {
    expect(await evalRego(`r := count(graph.reachable({"a": ["b"], "b": []}, ["a"]))`)).toBe(2);
  });
});
