/** The SQL written once for both stores: fragments compose, and each dialect renders its placeholders. */
import { describe, expect, it } from "vitest";
import { approvalsQuery } from "../../src/store/approvals.ts";
import { decisionsQuery } from "../../src/store/decisions.ts";
import { postgresDialect } from "../../src/store/postgres.ts";
import { join, raw, sql, where } from "../../src/store/sql.ts";
import { sqliteDialect } from "../../src/store/sqlite.ts";

const squash = (text: string) => text.replace(/\s+/g, " ").trim();

describe("sql", () => {
  it("keeps values apart from the text and splices fragments with their values", () => {
    const inner = sql`b = ${2} AND c = ${3}`;
    const query = sql`SELECT * FROM t WHERE a = ${1} AND ${inner} LIMIT ${4}`;
    expect(query.render(postgresDialect.placeholder)).toEqual({
      text: "SELECT * FROM t WHERE a = $1 AND b = $2 AND c = $3 LIMIT $4",
      values: [1, 2, 3, 4],
    });
    expect(query.render(sqliteDialect.placeholder).text).toBe(
      "SELECT * FROM t WHERE a = ? AND b = ? AND c = ? LIMIT ?",
    );
  });

  it("joins conditions, and writes no WHERE for none", () => {
    expect(where([]).render(sqliteDialect.placeholder).text).toBe("");
    expect(join([sql`a = ${1}`, raw("b IS NULL")], " OR ").render(postgresDialect.placeholder)).toEqual({
      text: "a = $1 OR b IS NULL",
      values: [1],
    });
  });
});

describe("the shared queries", () => {
  it("filter decisions with each dialect's timestamp column and reason test", () => {
    const filter = { tenant: "acme", reason: "ok", since: "2025-01-01T00:00:00.000Z" };
    const pg = decisionsQuery(postgresDialect, filter, 10, 7).render(postgresDialect.placeholder);
    expect(squash(pg.text)).toContain(
      "tenant = $1 AND seq IN (SELECT seq FROM decision_reasons WHERE code = $2)",
    );
    expect(squash(pg.text)).toContain("logged_at >= $4 AND seq < $5 ORDER BY seq DESC LIMIT $6");
    expect(pg.values).toEqual(["acme", "ok", "ok", "2025-01-01T00:00:00.000Z", 7, 11]);
    const lite = decisionsQuery(sqliteDialect, filter, 10, undefined).render(sqliteDialect.placeholder);
    expect(squash(lite.text)).toContain("timestamp >= ? ORDER BY seq DESC LIMIT ?");
    expect(lite.values).toEqual(["acme", "ok", "ok", "2025-01-01T00:00:00.000Z", 11]);
  });

  it("list approvals for a requester or their approver roles", () => {
    const filter = { status: "pending" as const, tenant: "acme", requester: "u1", approverRoles: ["lead"] };
    const pg = approvalsQuery(postgresDialect, filter, 5, undefined).render(postgresDialect.placeholder);
    expect(squash(pg.text)).toBe(
      "SELECT seq, record FROM approvals WHERE status = $1 AND tenant = $2 AND (requester = $3 OR approver_roles && $4::text[]) ORDER BY seq DESC LIMIT $5",
    );
    expect(pg.values).toEqual(["pending", "acme", "u1", ["lead"], 6]);
    const lite = approvalsQuery(sqliteDialect, filter, 5, undefined).render(sqliteDialect.placeholder);
    expect(lite.values).toEqual(["pending", "acme", "u1", '["lead"]', 6]);
  });
});
