/** The Code Mode sandbox: programs in QuickJS, their inner calls, their limits, their isolation. */
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import {
  closeSandbox,
  type InnerCall,
  type ProgramOutcome,
  runProgram,
  type SandboxLimits,
  SandboxPool,
  StopRun,
  sandboxMemoryBytes,
} from "../../src/codemode/sandbox.ts";
import { WritError } from "../../src/core/errors.ts";

const TOOLS = ["read", "search", "edit"];

afterAll(async () => {
  await closeSandbox();
});

/** Runs `program` with the test tools, answered by `echo()` unless told otherwise. */
function run(program: string, limits?: Partial<SandboxLimits>): Promise<ProgramOutcome> {
  return runProgram(program, {
    tools: TOOLS,
    call: echo().call,
    ...(limits === undefined ? {} : { limits }),
  });
}

/** An InnerCall that answers with what it was asked, after a short wait, and records the calls. */
function echo(delayMs = 1) {
  const calls: { tool: string; args: unknown; index: number }[] = [];
  const call: InnerCall = async (tool, args, index) => {
    calls.push({ tool, args, index });
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { tool, args, index };
  };
  return { call, calls };
}

function returned(outcome: ProgramOutcome): unknown {
  if (outcome.kind !== "returned") throw new Error(`expected a return, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

function stopped(outcome: ProgramOutcome) {
  if (outcome.kind !== "stopped") throw new Error(`expected a stop, got ${JSON.stringify(outcome)}`);
  return outcome;
}

function threw(outcome: ProgramOutcome) {
  if (outcome.kind !== "threw") throw new Error(`expected a throw, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe("programs", () => {
  it("returns a value, undefined as null", async () => {
    const { call } = echo();
    expect(
      returned(await runProgram("return { sum: 1 + 2, list: [1, 'a', null] };", { tools: TOOLS, call })),
    ).toEqual({
      sum: 3,
      list: [1, "a", null],
    });
    expect(returned(await runProgram("const x = 1;", { tools: TOOLS, call }))).toBeNull();
  });

  it("awaits inner calls, passing JSON arguments and receiving JSON results", async () => {
    const { call, calls } = echo();
    const value = returned(
      await runProgram(
        `const found = await tools.search({ query: "todo", when: new Date(0) });
         return { found, again: await tools.read({ path: found.args.query }) };`,
        { tools: TOOLS, call },
      ),
    );
    expect(calls).toEqual([
      { tool: "search", args: { query: "todo", when: "1970-01-01T00:00:00.000Z" }, index: 0 },
      { tool: "read", args: { path: "todo" }, index: 1 },
    ]);
    expect(value).toEqual({
      found: { tool: "search", args: { query: "todo", when: "1970-01-01T00:00:00.000Z" }, index: 0 },
      again: { tool: "read", args: { path: "todo" }, index: 1 },
    });
  });

  it("runs calls in parallel with Promise.all, at most maxConcurrentCalls in flight, started in order", async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const call: InnerCall = async (_tool, args, index) => {
      started.push(index);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 15));
      inFlight -= 1;
      return args;
    };
    const value = returned(
      await runProgram("return await Promise.all([0,1,2,3,4,5,6,7,8,9].map((n) => tools.read({ n })));", {
        tools: TOOLS,
        call,
        limits: { maxConcurrentCalls: 3 },
      }),
    );
    expect(value).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => ({ n })));
    expect(most).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("runs programs side by side, each with its own calls and result", async () => {
    const call: InnerCall = async (_tool, args, index) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { args, index };
    };
    const program = (name: string) =>
      `let last; for (let i = 0; i < 5; i++) last = await tools.read({ who: "${name}", i }); return last;`;
    const outcomes = await Promise.all(
      ["a", "b", "c"].map((name) => runProgram(program(name), { tools: TOOLS, call })),
    );
    expect(outcomes.map(returned)).toEqual(["a", "b", "c"].map((who) => ({ args: { who, i: 4 }, index: 4 })));
  });

  it("refuses limits that are not positive numbers within bounds", async () => {
    const limits = { cpuMs: 0, stackBytes: 64 * 1024 * 1024 };
    await expect(runProgram("return 1;", { tools: TOOLS, call: echo().call, limits })).rejects.toMatchObject({
      category: "invalid_argument",
      fieldErrors: [
        {
          path: "/stackBytes",
          message: `${64 * 1024 * 1024} is not a positive number up to ${1024 * 1024}`,
        },
        { path: "/cpuMs", message: "0 is not a positive number" },
      ],
    });
  });

  it("ends a run when the program returns, with calls still in flight, and makes no queued call", async () => {
    const { call, calls } = echo(60);
    const outcome = await runProgram("for (let i = 0; i < 4; i++) tools.edit({ i }); return 'early';", {
      tools: TOOLS,
      call,
      limits: { maxConcurrentCalls: 2 },
    });
    expect(returned(outcome)).toBe("early");
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(calls.map((c) => c.index)).toEqual([0, 1]);
  });

  it("accepts TypeScript: types, interfaces, `as`, generics, enums", async () => {
    const { call } = echo();
    const program = `
      interface Hit { path: string; line: number }
      type Paths = string[];
      enum Mode { Fast = "fast" }
      function first<T>(items: T[]): T | undefined { return items[0]; }
      const hits = [{ path: "a.ts", line: 3 }] as Hit[];
      const paths: Paths = hits.map((h: Hit): string => h.path);
      return { first: first<string>(paths), mode: Mode.Fast, n: (hits[0] as Hit).line satisfies number };`;
    expect(returned(await runProgram(program, { tools: TOOLS, call }))).toEqual({
      first: "a.ts",
      mode: "fast",
      n: 3,
    });
  });

  it("throws an inner call's error into the program with its message and detail", async () => {
    const call: InnerCall = async () => {
      throw new WritError("policy_denied", "reading .env is not allowed", {
        suggestedFix: "read another file",
      });
    };
    const value = returned(
      await runProgram(
        `try { await tools.read({ path: ".env" }); } catch (error) {
           return { name: error.name, tool: error.tool, message: error.message, category: error.detail.category };
         }`,
        { tools: TOOLS, call },
      ),
    );
    expect(value).toEqual({
      name: "ToolError",
      tool: "read",
      message: "reading .env is not allowed",
      category: "policy_denied",
    });
  });

  it("reports what the program threw, with its stack in the program's lines", async () => {
    const outcome = threw(
      await run("const a = 1;\nconsole.log('before');\nthrow new RangeError('no ' + a);"),
    );
    expect(outcome).toMatchObject({ name: "RangeError", message: "no 1", logs: ["before"] });
    expect(outcome.stack).toContain("program.ts:3");
  });

  it("names an unknown tool in a TypeError", async () => {
    const outcome = threw(await run("await tools.delete_everything({});"));
    expect(outcome.name).toBe("TypeError");
    expect(outcome.message).toContain("tools.delete_everything is not a tool of this run");
    expect(outcome.message).toContain("read, search, edit");
  });

  it("refuses non-JSON arguments with a TypeError before any call is made", async () => {
    for (const args of [
      "{ f: () => 1 }",
      "(() => { const o = {}; o.self = o; return o; })()",
      "{ n: 10n }",
      "{ s: Symbol('x') }",
      "{ toJSON: () => undefined }",
    ]) {
      const { call, calls } = echo();
      const outcome = threw(await runProgram(`await tools.read(${args});`, { tools: TOOLS, call }));
      expect(outcome.name).toBe("TypeError");
      expect(outcome.message).toContain("the arguments of tools.read must be JSON");
      expect(calls).toEqual([]);
    }
  });

  it("keeps console lines, bounded", async () => {
    const outcome = await run(
      "console.log('a', { b: 1 }, [2]); console.warn('careful'); console.error(new TypeError('bad')); for (let i = 0; i < 1000; i++) console.log('x'.repeat(100));",
      { maxLogBytes: 1024 },
    );
    expect(outcome.logs.slice(0, 3)).toEqual(['a {"b":1} [2]', "warn: careful", "error: TypeError: bad"]);
    expect(outcome.logs.at(-1)).toBe("[log truncated: the program logged more than 1024 bytes]");
    expect(outcome.logs.slice(0, -1).join("").length).toBeLessThanOrEqual(1024);
  });

  it("reports syntax errors, TypeScript or JavaScript, with line and column", async () => {
    const ts = stopped(await run("const a = 1;\nlet b: = 2;"));
    expect(ts.reason).toBe("syntax");
    expect(ts.message).toContain("line 2, column 8");
    const js = stopped(await run("return (1 + ;"));
    expect(js.reason).toBe("syntax");
    expect(js.message).toMatch(/line 1, column \d+/);
    const imported = stopped(await run("import fs from 'fs';\nreturn fs.readFileSync('/etc/passwd');"));
    expect(imported.reason).toBe("syntax");
  });
});

describe("limits", () => {
  it("stops an endless loop on CPU time, and the gateway's event loop keeps running meanwhile", async () => {
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 10);
    const begun = performance.now();
    const outcome = stopped(await run("while (true) {}", { cpuMs: 300 }));
    clearInterval(ticker);
    expect(outcome.reason).toBe("cpu");
    expect(performance.now() - begun).toBeLessThan(2000);
    expect(ticks).toBeGreaterThanOrEqual(10);
  });

  it("ends the thread under a program stuck in the engine's C code, and the next run works", async () => {
    const begun = performance.now();
    const outcome = stopped(
      await run("const a = []; for (let i = 0; i < 3e5; i++) a.push(String(i)); for (;;) a.slice().sort();", {
        cpuMs: 200,
      }),
    );
    expect(outcome.reason).toBe("cpu");
    expect(performance.now() - begun).toBeLessThan(3000);
    expect(returned(await run("return 'after';"))).toBe("after");
  });

  it("stops deep nesting in the parser and in JSON.parse on QuickJS's own stack limit", async () => {
    for (const program of [
      "return eval('('.repeat(100000) + '1' + ')'.repeat(100000));",
      "return JSON.parse('['.repeat(100000) + ']'.repeat(100000));",
      "let a = []; for (let i = 0; i < 50000; i++) a = [a]; return String(a);",
    ]) {
      expect(stopped(await runProgram(program, { tools: TOOLS, call: echo().call })).reason).toBe("stack");
    }
    expect(returned(await run("return 'after';"))).toBe("after");
  });

  it("cannot catch the CPU stop", async () => {
    const outcome = stopped(
      await run("for (;;) { try { while (true) {} } catch (e) { console.log('caught'); } }", { cpuMs: 100 }),
    );
    expect(outcome.reason).toBe("cpu");
    expect(outcome.logs).toEqual([]);
  });

  it("counts only the program's own CPU time, not the time it waits for calls", async () => {
    const call: InnerCall = async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return 1;
    };
    const value = returned(
      await runProgram("let n = 0; for (let i = 0; i < 3; i++) n += await tools.read({}); return n;", {
        tools: TOOLS,
        call,
        limits: { cpuMs: 100 },
      }),
    );
    expect(value).toBe(3);
  });

  it("stops unbounded allocation on memory", async () => {
    const outcome = stopped(
      await run("const kept = []; for (;;) kept.push({ n: kept.length });", { memoryBytes: 1024 * 1024 }),
    );
    expect(outcome.reason).toBe("memory");
  });

  it("stops deep recursion on the stack", async () => {
    const outcome = stopped(await run("function down(n) { return down(n + 1) + 1; }\nreturn down(0);"));
    expect(outcome.reason).toBe("stack");
  });

  it("stops the call past maxCalls, and that call is not made", async () => {
    const { call, calls } = echo();
    const outcome = stopped(
      await runProgram("for (let i = 0; i < 10; i++) await tools.read({ i });", {
        tools: TOOLS,
        call,
        limits: { maxCalls: 3 },
      }),
    );
    expect(outcome.reason).toBe("calls");
    expect(outcome.message).toContain("call 4 (tools.read) was not made");
    expect(calls.map((c) => c.index)).toEqual([0, 1, 2]);
  });

  it("stops a return value larger than maxResultBytes", async () => {
    const outcome = stopped(await run("return 'x'.repeat(100000);", { maxResultBytes: 1000 }));
    expect(outcome.reason).toBe("result_size");
    expect(outcome.message).toContain("100002 bytes");
  });

  it("stops a program awaiting a call that never settles, on duration", async () => {
    const begun = performance.now();
    const outcome = stopped(
      await runProgram("await tools.read({});", {
        tools: TOOLS,
        call: () => new Promise(() => {}),
        limits: { durationMs: 200 },
      }),
    );
    expect(outcome.reason).toBe("duration");
    expect(performance.now() - begun).toBeGreaterThanOrEqual(190);
    expect(performance.now() - begun).toBeLessThan(1500);
  });

  it("stops a program awaiting a promise nothing can settle at once", async () => {
    const outcome = stopped(await run("await new Promise(() => {});"));
    expect(outcome.reason).toBe("duration");
    expect(outcome.message).toContain("nothing will settle");
  });

  it("stops on an aborted signal, and makes no later call", async () => {
    const controller = new AbortController();
    const { call, calls } = echo(30);
    const running = runProgram("for (let i = 0; i < 10; i++) await tools.read({ i });", {
      tools: TOOLS,
      call,
      signal: controller.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 45));
    controller.abort();
    const outcome = stopped(await running);
    expect(outcome.reason).toBe("run_stopped");
    const made = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(calls.length).toBe(made);
    expect(made).toBeLessThan(10);
  });
});

describe("a pool of threads (issue 27)", () => {
  it("ends only the stuck run's thread: a run beside it goes on and returns", async () => {
    let answer: (value: unknown) => void = () => undefined;
    const gate = new Promise((resolve) => {
      answer = resolve;
    });
    const waiting = runProgram("const r = await tools.read({}); return r.ok;", {
      tools: TOOLS,
      call: () => gate,
    });
    // A sort of a million strings runs long in QuickJS's C code, where its interrupt handler is not
    // consulted: the gateway's side ends the thread under it.
    const stuck = await runProgram(
      "const a = []; for (let i = 0; i < 1e6; i++) a.push(String(i)); for (;;) a.slice().sort();",
      { tools: TOOLS, call: echo().call, limits: { cpuMs: 1500, memoryBytes: 200 * 1024 * 1024 } },
    );
    expect(stopped(stuck).reason).toBe("cpu");
    answer({ ok: "still here" });
    expect(returned(await waiting)).toBe("still here");
  });

  it("runs more programs than threads, each in turn on a thread of its own", async () => {
    const pool = new SandboxPool(2);
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          runProgram(`return ${i};`, { tools: TOOLS, call: echo().call, pool }),
        ),
      );
      expect(outcomes.map(returned)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await pool.close();
    }
  });
});

describe("calls started while the answer is built (issue 27)", () => {
  it.each([
    [
      "a toJSON of the return value",
      "return { toJSON() { tools.edit({ late: 1 }); return 'ok'; } };",
      "returned",
    ],
    [
      "a getter of what was thrown",
      "throw { get message() { tools.edit({ late: 1 }); return 'boom'; } };",
      "threw",
    ],
  ])("from %s are refused, never made, and reported", async (_, program, kind) => {
    const { call, calls } = echo();
    const late: Array<[string, string, number]> = [];
    const outcome = await runProgram(`await tools.read({}); ${program}`, {
      tools: TOOLS,
      call,
      lateCall: (tool, argsJson, index) => late.push([tool, argsJson, index]),
    });
    expect(outcome.kind).toBe(kind);
    expect(
      outcome.kind === "returned" ? outcome.value : outcome.kind === "threw" ? outcome.message : null,
    ).toBe(kind === "returned" ? "ok" : "boom");
    // Let any call the run queued get its chance to be made.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls.map((c) => c.tool)).toEqual(["read"]);
    // (A getter may be read more than once: each of its calls is refused.)
    expect(late.length).toBeGreaterThanOrEqual(1);
    for (const [i, entry] of late.entries()) expect(entry).toEqual(["edit", '{"late":1}', i + 1]);
  });
});

describe("StopRun", () => {
  it("ends the run with its detail, and no later call is made", async () => {
    const calls: string[] = [];
    const call: InnerCall = async (tool) => {
      calls.push(tool);
      if (tool === "edit") throw new StopRun({ approval_id: "apr_1" }, "edit needs approval");
      return "ok";
    };
    const outcome = stopped(
      await runProgram(
        "await tools.read({}); try { await tools.edit({}); } catch (e) { console.log('caught'); } await tools.search({});",
        { tools: TOOLS, call },
      ),
    );
    expect(outcome).toEqual({
      kind: "stopped",
      reason: "run_stopped",
      message: "edit needs approval",
      detail: { approval_id: "apr_1" },
      logs: [],
    });
    expect(calls).toEqual(["read", "edit"]);
  });
});

describe("isolation", () => {
  it("gives a program no fetch, require, process, modules or host through new Function", async () => {
    const probe = async (expression: string) => run(`return ${expression};`);
    for (const name of [
      "fetch",
      "require",
      "process",
      "setTimeout",
      "XMLHttpRequest",
      "WebAssembly",
      "performance",
      "Buffer",
    ]) {
      expect(returned(await probe(`typeof ${name}`))).toBe("undefined");
    }
    expect(returned(await probe("typeof globalThis.process"))).toBe("undefined");
    expect(returned(await probe("new Function('return typeof this.process + typeof this.require')()"))).toBe(
      "undefinedundefined",
    );
    expect(returned(await probe("Object.keys(globalThis).sort()"))).toEqual(["console", "tools"]);
    const fetched = threw(await probe("fetch('http://127.0.0.1/')"));
    expect(fetched).toMatchObject({ name: "ReferenceError" });
    const imported = threw(await run("return await import('fs');"));
    expect(imported.message).toContain("modules cannot be imported");
    const constructed = threw(await probe("new Function('return process.env')()"));
    expect(constructed).toMatchObject({ name: "ReferenceError" });
  });

  it("stops the clock at the run's start", async () => {
    const before = Date.now();
    const value = returned(
      await run(
        "const a = Date.now(); let n = 0; for (let i = 0; i < 1e5; i++) n += i; return [a, Date.now(), new Date().getTime(), new Date(0).getTime(), new Date() instanceof Date, typeof Date()];",
      ),
    );
    const after = Date.now();
    expect(Array.isArray(value)).toBe(true);
    const [a, b, c, zero, instance, called] = Array.isArray(value) ? value : [];
    expect(a).toBe(b);
    expect(a).toBe(c);
    expect(a).toBeGreaterThanOrEqual(before);
    expect(a).toBeLessThanOrEqual(after);
    expect(zero).toBe(0);
    expect(instance).toBe(true);
    expect(called).toBe("string");
  });

  it("keeps values JSON when the program replaces JSON's methods", async () => {
    const { call, calls } = echo();
    const value = returned(
      await runProgram(
        "JSON.stringify = () => 'not json'; JSON.parse = () => 42; return await tools.read({ a: 1 });",
        { tools: TOOLS, call },
      ),
    );
    expect(calls).toEqual([{ tool: "read", args: { a: 1 }, index: 0 }]);
    expect(value).toEqual({ tool: "read", args: { a: 1 }, index: 0 });
  });

  it("does not let one run see another's globals", async () => {
    const { call } = echo();
    returned(
      await runProgram("globalThis.secret = 'from run 1'; Object.prototype.polluted = true;", {
        tools: TOOLS,
        call,
      }),
    );
    expect(
      returned(await runProgram("return [typeof secret, ({}).polluted ?? null];", { tools: TOOLS, call })),
    ).toEqual(["undefined", null]);
  });
});

describe("resources", () => {
  it("200 runs in a row leak nothing", async () => {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc");
    const { call } = echo(0);
    const program =
      "const big = 'x'.repeat(100000); const r = await tools.read({ n: big.length }); return r.args.n;";
    for (let i = 0; i < 20; i++) await runProgram(program, { tools: TOOLS, call });
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const wasmBefore = await sandboxMemoryBytes();
    for (let i = 0; i < 200; i++) {
      const loops = i % 10 === 0;
      const outcome = await runProgram(loops ? "while (true) {}" : program, {
        tools: TOOLS,
        call,
        limits: { cpuMs: loops ? 20 : 1000 },
      });
      expect(outcome.kind).toBe(loops ? "stopped" : "returned");
    }
    gc();
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(8 * 1024 * 1024);
    expect(await sandboxMemoryBytes()).toBe(wasmBefore);
  });
});
