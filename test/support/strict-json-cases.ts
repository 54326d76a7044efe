/**
 * The bad payloads every entrance must refuse the same way (strict JSON: no repeated key, no
 * `__proto__` key, at any depth), and the plain keys it must not: one list for the HTTP API's and
 * `/mcp`'s tests. Each is the `arguments` object of a `repo.search` call, as JSON text, with the
 * JSON Pointer (inside the arguments) of the refused key.
 */
export interface StrictJsonCase {
  name: string;
  /** JSON text of the arguments object. */
  arguments: string;
  /** Where the refused key is, inside the arguments. */
  pointer: string;
}

export const refusedArguments: StrictJsonCase[] = [
  {
    name: "a repeated key",
    arguments: '{"workspace": "ws-demo", "query": "safe", "query": "secret"}',
    pointer: "/query",
  },
  {
    name: "a repeated key at depth, spelt with an escape",
    arguments: '{"workspace": "ws-demo", "query": "x", "filters": [{"a": 1, "\\u0061": 2}]}',
    pointer: "/filters/0/a",
  },
  {
    name: "__proto__ at depth",
    arguments: '{"workspace": "ws-demo", "query": "x", "options": {"deep": {"__proto__": {"admin": true}}}}',
    pointer: "/options/deep/__proto__",
  },
];

/** `constructor` and `prototype` are ordinary keys: refused only by the tool's own schema, if at all. */
export const plainKeysArguments =
  '{"workspace": "ws-demo", "query": "constructor", "prototype": {"constructor": 1}}';
