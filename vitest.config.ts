import { defineConfig } from "vitest/config";

/** Test files that replace a module (`vi.mock`): they need a module registry of their own. */
const mocking = ["test/identity/verifier.test.ts"];

export default defineConfig({
  test: {
    // Both cores: most test files wait on loopback servers, child processes and fsync, not on the
    // CPU (vitest's default leaves one core idle on a 2-core machine).
    maxWorkers: 2,
    // Generous: tests assert behaviour, never time; a loaded CI machine starts processes slowly.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A WRIT_DATABASE_URL in the developer's shell must not send the tests' gateways to that
    // database: tests pick theirs explicitly (WRIT_TEST_DATABASE_URL, see test/support/postgres.ts).
    env: { WRIT_DATABASE_URL: "" },
    // What the files of a run share (one PostgreSQL server): test/support/global-setup.ts.
    globalSetup: ["test/support/global-setup.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: mocking,
          // Test files of one worker share its module registry: the gateway, the compiler and
          // their dependencies load once per worker instead of once per file (test/cli,
          // test/policy and test/approvals: 202 s of imports to 22 s, 558 s to 321 s of wall time
          // on one loaded run; the whole suite in 489 s). Tests therefore restore what they
          // change of the process (environment, working folder, spies).
          isolate: false,
        },
      },
      { extends: true, test: { name: "isolated", include: mocking, isolate: true } },
    ],
  },
});
