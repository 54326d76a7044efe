import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Both cores: most test files wait on loopback servers, child processes and fsync, not on the
    // CPU (vitest's default leaves one core idle on a 2-core machine).
    maxWorkers: 2,
    // Test files of one worker share its module registry: the gateway, the compiler and their
    // dependencies load once per worker instead of once per file (test/cli, test/policy and
    // test/approvals: 202 s of imports to 22 s, 558 s to 321 s of wall time on one loaded run).
    // Tests therefore restore what they change of the process (environment, working folder, spies).
    isolate: false,
    // Generous: tests assert behaviour, never time; a loaded CI machine starts processes slowly.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A WRIT_DATABASE_URL in the developer's shell must not send the tests' gateways to that
    // database: tests pick theirs explicitly (WRIT_TEST_DATABASE_URL, see test/support/postgres.ts).
    env: { WRIT_DATABASE_URL: "" },
  },
});
