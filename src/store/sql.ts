/**
 * SQL text with its values kept apart, written once for both dialects: `sql\`… = ${value}\``
 * holds the text around each value, and a dialect renders the placeholders (`?` for SQLite, `$1`
 * for PostgreSQL). A value that is itself an `Sql` is spliced in, so conditions compose.
 */
export class Sql {
  readonly parts: readonly string[];
  readonly values: readonly unknown[];

  constructor(parts: readonly string[], values: readonly unknown[]) {
    this.parts = parts;
    this.values = values;
  }

  /** The text with `placeholder(n)` (1-based) for each value, and the values in that order. */
  render(placeholder: (index: number) => string): { text: string; values: readonly unknown[] } {
    let byDialect = rendered.get(this.parts);
    let text = byDialect?.get(placeholder);
    if (text === undefined) {
      text = this.parts[0] ?? "";
      for (let i = 1; i < this.parts.length; i++) text += placeholder(i) + (this.parts[i] ?? "");
      if (byDialect === undefined) {
        byDialect = new Map();
        rendered.set(this.parts, byDialect);
      }
      byDialect.set(placeholder, text);
    }
    return { text, values: this.values };
  }
}

/**
 * Rendered text by the parts it came from: a statement without fragments keeps its template's
 * strings (the same array at every call from one place), so it is rendered once per dialect.
 */
const rendered = new WeakMap<readonly string[], Map<(index: number) => string, string>>();

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  if (!values.some((value) => value instanceof Sql)) return new Sql(strings, values);
  const flat: unknown[] = [];
  const from: (readonly string[])[] = [];
  for (const value of values) {
    if (value instanceof Sql) {
      flat.push(...value.values);
      from.push(value.parts);
    } else flat.push(value);
  }
  const cached = spliced.get(strings);
  if (cached?.from.length === from.length && cached.from.every((parts, i) => parts === from[i])) {
    return new Sql(cached.parts, flat);
  }
  const parts: string[] = [strings[0] ?? ""];
  values.forEach((value, i) => {
    const after = strings[i + 1] ?? "";
    if (value instanceof Sql) {
      parts[parts.length - 1] += value.parts[0] ?? "";
      parts.push(...value.parts.slice(1));
      parts[parts.length - 1] += after;
    } else parts.push(after);
  });
  spliced.set(strings, { from, parts });
  return new Sql(parts, flat);
}

/**
 * What a template with fragments spliced in became, by the template: when the same constant
 * fragments (e.g. a column list) are spliced again, the parts are the same array, rendered once.
 */
const spliced = new WeakMap<
  TemplateStringsArray,
  { from: (readonly string[])[]; parts: readonly string[] }
>();

/** Text spliced as it is: only ever constants of this module's callers, never input. */
export function raw(text: string): Sql {
  return new Sql([text], []);
}

/** `a sep b sep c`; empty for no fragments. */
export function join(fragments: readonly Sql[], separator: string): Sql {
  return fragments.reduce<Sql>(
    (joined, fragment, i) => (i === 0 ? fragment : sql`${joined}${raw(separator)}${fragment}`),
    raw(""),
  );
}

/** `WHERE a AND b …`, or nothing when there is no condition. */
export function where(conditions: readonly Sql[]): Sql {
  return conditions.length === 0 ? raw("") : sql`WHERE ${join(conditions, " AND ")}`;
}
