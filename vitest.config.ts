import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A WRIT_DATABASE_URL in the developer's shell must not send the tests' gateways to that
    // database: tests pick theirs explicitly (WRIT_TEST_DATABASE_URL, see test/support/postgres.ts).
    env: { WRIT_DATABASE_URL: "" },
  },
});
