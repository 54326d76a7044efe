/**
 * Builtins of the `rego` area and the compiler's internal helpers for newer syntax:
 * `internal.template_string` (template strings), `rego.parse_module`, and `rego.metadata.rule` /
 * `rego.metadata.chain` (which the compiler replaces by the annotations of the calling rule; when
 * called from the host they mean "no annotations").
 */
import { formatValue, makeArray, makeObject, makeString, type Value } from "../../plan/value.ts";
import { arrayArg, define, fail } from "../registry.ts";

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
// OPA does at compile time; outside a rule (a query) there are none.
define("rego.metadata.rule", () => makeObject());
define("rego.metadata.chain", () => makeArray());
