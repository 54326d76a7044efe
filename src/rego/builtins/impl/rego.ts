/**
 * Builtins of the `rego` area and the compiler's internal helpers for newer syntax:
 * `internal.template_string` (template strings), `rego.parse_module`, and `rego.metadata.rule` /
 * `rego.metadata.chain` (which the compiler replaces by the annotations of the calling rule; when
 * called from the host they mean "no annotations").
 */
import type { RegoError } from "../../errors.ts";
import { formatValue, makeString, TRUE, type Value } from "../../plan/value.ts";
import { parseModule } from "../../syntax/index.ts";
import { arrayArg, define, elementError, fail, stringArg } from "../registry.ts";
import { moduleToValue } from "./rego-module-json.ts";

/**
 * OPA's `internal.template_string`: the parts of a template string joined. A string part is
 * literal text; a number, boolean or null part prints as Rego; every other part is the set of
 * values an expression took: `<undefined>` when empty, the value when single (strings
 * unquoted), and a conflict when it took more than one.
 */
define("internal.template_string", (args) => {
  const parts = arrayArg(args, 0);
  let out = "";
  for (const part of parts.items) out += renderTemplatePart(part);
  return makeString(out);
});

function renderTemplatePart(part: Value): string {
  switch (part.type) {
    case "string":
      return part.value;
    case "number":
    case "boolean":
    case "null":
      return formatValue(part);
    case "set": {
      const values = part.elements();
      const [only] = values;
      if (only === undefined) return "<undefined>";
      if (values.length > 1) fail("template-strings must not produce multiple outputs");
      return only.type === "string" ? only.value : formatValue(only);
    }
    default:
      return fail(`illegal argument type: ${part.type}`);
  }
}

// The compiler replaces calls in rules by the rule's annotations (`compile/metadata.ts`), as
// OPA does at compile time; a call that reaches evaluation is outside any rule.
define("rego.metadata.rule", () =>
  fail("the rego.metadata.rule function must only be called within the scope of a rule"),
);
define("rego.metadata.chain", () =>
  fail("the rego.metadata.chain function must only be called within the scope of a rule"),
);

/**
 * OPA's `rego.parse_module(filename, source)`: the module's AST in OPA's JSON encoding; parse
 * errors fail the call with OPA's error text.
 */
define("rego.parse_module", (args) => {
  const filename = stringArg(args, 0);
  const source = stringArg(args, 1);
  // Like OPA's `ast.ParseModule`, which does not process annotations.
  const { module, errors } = parseModule(source, filename, { annotations: false });
  if (module === undefined) {
    const texts = errors.map(errorText);
    fail(texts.length === 1 ? texts[0]! : `${texts.length} errors occurred:\n${texts.join("\n")}`);
  }
  return moduleToValue(module);
});

/** OPA's `ast.Error.Error()`: `file:row: code: message` (`row:col` without a file). */
function errorText(error: RegoError): string {
  const loc = error.location;
  const prefix = loc === undefined ? "" : loc.file ? `${loc.file}:${loc.line}: ` : `${loc.line}:${loc.col}: `;
  return `${prefix}${error.code}: ${error.detail}`;
}

/**
 * What `print(…)` compiles to in OPA: one set per argument holding the values it took; prints
 * one line per combination, strings raw, other values as Rego, an empty set as `<undefined>`
 * (native in the module as `writ_print`; this serves the plan interpreter).
 */
define("internal.print", (args) => {
  const sets = arrayArg(args, 0).items.map((s) =>
    s.type === "set" ? s.elements() : elementError(1, arrayArg(args, 0), s, "set"),
  );
  const lines: string[][] = [[]];
  let combos = lines;
  for (const values of sets) {
    const texts =
      values.length === 0
        ? ["<undefined>"]
        : values.map((v) => (v.type === "string" ? v.value : formatValue(v)));
    combos = combos.flatMap((line) => texts.map((t) => [...line, t]));
  }
  for (const line of combos) console.log(line.join(" "));
  return TRUE;
});

/**
 * `trace(note)`: in OPA, a note for the query tracer, and true. Writ evaluates in WebAssembly,
 * where OPA has no tracer either: the note is checked to be a string and the call holds.
 */
define("trace", (args) => {
  stringArg(args, 0);
  return TRUE;
});

/**
 * `internal.test_case(…)`: OPA's test runner records the values of a parameterized test case
 * through it; outside a test run it holds. Writ's `policy test` reports per rule, so it holds.
 */
define("internal.test_case", (args) => {
  arrayArg(args, 0);
  return TRUE;
});
