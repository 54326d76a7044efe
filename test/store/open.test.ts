/** Choosing the store: the configuration's `store` section and WRIT_DATABASE_URL. */

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, gatewayConfigSchema, parseConfig } from "../../src/config/index.ts";
import { postgresSettings, SqliteStore } from "../../src/store/index.ts";
import { openStore } from "../../src/store/open.ts";
import { expectWritError } from "./contract.ts";
import { tempDir } from "./fixtures.ts";

const url = "postgres://writ:secret@db.internal:5432/writ";

describe("the store section", () => {
  it("defaults to SQLite under .writ/, resolved against the configuration's folder", () => {
    expect(parseConfig({}, "/srv/writ").store).toEqual({ sqlite: "/srv/writ/.writ/writ.db" });
  });

  it("selects PostgreSQL with a URL and a pool size", () => {
    expect(parseConfig({ store: { postgres: { url } } }, "/srv").store).toEqual({
      postgres: { url, max_connections: 10 },
    });
  });

  it("refuses both at once, a URL that is not postgres://, and unknown keys", () => {
    expect(() => parseConfig({ store: { sqlite: "x.db", postgres: { url } } }, "/srv")).toThrow(
      /either store.sqlite or store.postgres/,
    );
    expect(() => parseConfig({ store: { postgres: { url: "mysql://x" } } }, "/srv")).toThrow(ConfigError);
    expect(() => parseConfig({ store: { postgres: { url, pool: 3 } } }, "/srv")).toThrow(ConfigError);
  });

  it("explains both choices in the JSON Schema", () => {
    const schema = JSON.stringify(
      z.toJSONSchema(gatewayConfigSchema, { io: "input", unrepresentable: "any" }),
    );
    expect(schema).toMatch(/Mutually exclusive with postgres/);
    expect(schema).toMatch(/WRIT_DATABASE_URL/);
  });
});

describe("WRIT_DATABASE_URL", () => {
  it("wins over the configuration, keeping its pool size", () => {
    const config = { postgres: { url: "postgres://other/db", max_connections: 4 } };
    expect(postgresSettings(config, { WRIT_DATABASE_URL: url })).toEqual({ url, max_connections: 4 });
    expect(postgresSettings({ sqlite: "x.db" }, { WRIT_DATABASE_URL: url })).toEqual({
      url,
      max_connections: 10,
    });
    expect(postgresSettings({ sqlite: "x.db" }, {})).toBeUndefined();
  });

  it("refuses a value that is not a PostgreSQL URL", async () => {
    const error = await expectWritError(
      openStore({ sqlite: "x.db" }, { WRIT_DATABASE_URL: "sqlite:///x.db" }),
      "invalid_argument",
    );
    expect(error.suggestedFix).toMatch(/WRIT_DATABASE_URL/);
  });

  it("opens SQLite when unset", async () => {
    const tmp = tempDir();
    try {
      const store = tmp.track(await openStore({ sqlite: tmp.file() }, {}));
      expect(store).toBeInstanceOf(SqliteStore);
    } finally {
      await tmp.cleanup();
    }
  });
});
