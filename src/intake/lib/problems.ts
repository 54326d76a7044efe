/**
 * Field errors collected while reading a payload, with JSON Pointers into that payload. Adapters
 * keep going after the first problem so that one answer lists everything that is wrong.
 */
import type { z } from "zod";
import { type FieldError, pointerTo, problemsFromZod } from "../../core/field-errors.ts";

export { pointerTo, problemsFromZod };

/** Where an adapter records what is wrong with a payload. */
export class Problems {
  readonly list: FieldError[] = [];

  add(path: string, message: string): void {
    this.list.push({ path, message });
  }

  /** Parses `input` (found at `base`) with `schema`; records the issues and returns undefined on failure. */
  parse<T extends z.ZodType>(schema: T, input: unknown, base: string): z.output<T> | undefined {
    const result = schema.safeParse(input);
    if (result.success) return result.data;
    this.list.push(...problemsFromZod(result.error, input, base));
    return undefined;
  }

  get empty(): boolean {
    return this.list.length === 0;
  }
}
