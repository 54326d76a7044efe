/**
 * The `bits.*` builtins (`v1/topdown/bits.go`): Go `big.Int` operations on integers of any size,
 * with two's-complement semantics for negative numbers (as JavaScript's BigInt operators).
 */
import { asPlainInt } from "../../plan/value.ts";
import { BuiltinError, bigIntArg, define, fail, int, numberArg } from "../registry.ts";

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

/** OPA's `UintOperand`: a non-negative integer written as a plain int64. */
function uintArg(args: Parameters<typeof numberArg>[0], i: number): bigint {
  const n = asPlainInt(numberArg(args, i));
  if (n === undefined || n > MAX_INT64 || n < MIN_INT64)
    throw new BuiltinError(
      "eval_type_error",
      `operand ${i + 1} must be integer number but got floating-point number`,
    );
  if (n < 0n)
    throw new BuiltinError(
      "eval_type_error",
      `operand ${i + 1} must be an unsigned integer number but got a negative integer`,
    );
  return n;
}

define("bits.and", (args) => int(bigIntArg(args, 0) & bigIntArg(args, 1)));
define("bits.or", (args) => int(bigIntArg(args, 0) | bigIntArg(args, 1)));
define("bits.xor", (args) => int(bigIntArg(args, 0) ^ bigIntArg(args, 1)));
define("bits.negate", (args) => int(~bigIntArg(args, 0)));
define("bits.lsh", (args) => {
  const x = bigIntArg(args, 0);
  const n = uintArg(args, 1);
  if (x === 0n) return int(0n);
  try {
    return int(x << n);
  } catch (e) {
    // Go's big.Int would try to allocate the result and panic; JavaScript caps BigInt sizes.
    if (e instanceof RangeError) return fail(`shift amount too large: ${n}`);
    throw e;
  }
});
define("bits.rsh", (args) => {
  const x = bigIntArg(args, 0);
  return int(x >> uintArg(args, 1));
});
