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
  render(placeholder: (index: number) => string): { text: string; values: unknown[] } {
    let text = this.parts[0] ?? "";
    for (let i = 0; i < this.values.length; i++) text += placeholder(i + 1) + (this.parts[i + 1] ?? "");
    return { text, values: [...this.values] };
  }
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  const parts: string[] = [strings[0] ?? ""];
  const flat: unknown[] = [];
  values.forEach((value, i) => {
    const after = strings[i + 1] ?? "";
    if (value instanceof Sql) {
      parts[parts.length - 1] += value.parts[0] ?? "";
      for (let j = 0; j < value.values.length; j++) {
        flat.push(value.values[j]);
        parts.push(value.parts[j + 1] ?? "");
      }
      parts[parts.length - 1] += after;
    } else {
      flat.push(value);
      parts.push(after);
    }
  });
  return new Sql(parts, flat);
}

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
