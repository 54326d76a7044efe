/**
 * `opa.runtime()`: the document the host describes itself with (OPA's `v1/topdown/runtime.go`).
 * The host puts it in the evaluation's context (`../../opa-runtime.ts` builds it); without one
 * it is an empty object, as in OPA's library without `rego.Runtime`.
 */
import { define } from "../registry.ts";

define("opa.runtime", (_args, ctx) => ctx.runtime());
