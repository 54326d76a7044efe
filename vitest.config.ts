import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Both cores: most test files wait on loopback servers, child processes and fsync, not on the
    // CPU (vitest's default leaves one core idle on a 2-core machine).
    maxWorkers: 2,
    // Generous: tests assert behaviour, never time; a loaded CI machine starts processes slowly.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A WRIT_DATABASE_URL in the developer's shell must not send the tests' gateways to that
    // database: tests pick theirs explicitly (WRIT_TEST_DATABASE_URL, see test/support/postgres.ts).
    env: { WRIT_DATABASE_URL: "" },
  },
});
