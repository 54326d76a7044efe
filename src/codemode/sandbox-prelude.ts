/**
 * The JavaScript a sandbox evaluates before the program, inside QuickJS. It is a function of the
 * two host functions (never put on the global object, so the program reaches them only through
 * the wrappers below) that installs the program's whole world: `tools`, `console`, and a `Date`
 * whose clock stands still at the run's start. It returns the helpers the host uses to read the
 * program's result and errors as JSON text, so values cross the boundary as JSON only.
 *
 * Host functions: `hostCall(tool, argsJson)` → a promise of an answer envelope (JSON text:
 * `{"ok":true,"value":…}` or `{"ok":false,"message":…,"detail":…}`); `hostLog(level, line)`.
 */
export const PRELUDE_FILE = "writ-sandbox.js";

export const PRELUDE = String.raw`(function setup(hostCall, hostLog, toolNamesJson, startMs) {
  "use strict";
  // Taken now: a program that replaces JSON's methods changes what it sees, not what crosses.
  const { parse, stringify } = JSON;
  const toolNames = parse(toolNamesJson);

  // The clock: Date.now() and new Date() give the run's start; dates built from values still work.
  const RealDate = Date;
  function Date_(...args) {
    if (new.target === undefined) return new RealDate(startMs).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [startMs] : args, new.target);
  }
  Object.defineProperty(Date_, "name", { value: "Date" });
  Date_.prototype = RealDate.prototype;
  Date_.now = function now() { return startMs; };
  Date_.parse = RealDate.parse;
  Date_.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, "constructor", { value: Date_, writable: true, configurable: true });
  Object.defineProperty(globalThis, "Date", { value: Date_, writable: true, configurable: true });

  // Arguments are JSON: a function or symbol anywhere is an error, not a silently dropped key.
  function toJson(value, what) {
    try {
      const text = stringify(value === undefined ? {} : value, (key, item) => {
        const type = typeof item;
        if (type === "function" || type === "symbol") {
          throw new TypeError((key === "" ? "the value" : "\"" + key + "\"") + " is a " + type);
        }
        return item;
      });
      return text;
    } catch (error) {
      if (error instanceof TypeError) throw new TypeError(what + " must be JSON: " + error.message);
      throw error;
    }
  }

  class ToolError extends Error {
    constructor(tool, message, detail) {
      super(message);
      this.name = "ToolError";
      this.tool = tool;
      if (detail !== undefined) this.detail = detail;
    }
  }

  const table = Object.create(null);
  for (const name of toolNames) {
    const call = {
      async [name](args) {
        const request = toJson(args, "the arguments of tools." + name);
        const answer = parse(await hostCall(name, request));
        if (answer.ok) return answer.value;
        throw new ToolError(name, answer.message, answer.detail);
      },
    }[name];
    table[name] = call;
  }
  Object.freeze(table);
  const listed = toolNames.length === 0 ? "none" : toolNames.join(", ");
  const tools = new Proxy(table, {
    get(target, key) {
      if (typeof key === "string" && !(key in target) && key !== "then" && key !== "toJSON") {
        throw new TypeError("tools." + key + " is not a tool of this run (its tools: " + listed + ")");
      }
      return target[key];
    },
  });

  function show(value) {
    if (typeof value === "string") return value;
    if (value instanceof Error) return value.name + ": " + value.message;
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch {
      try { return String(value); } catch { return "[unprintable]"; }
    }
  }
  const logger = (level) => function (...args) { hostLog(level, args.map(show).join(" ")); };
  const console = Object.freeze({
    log: logger("log"), info: logger("info"), warn: logger("warn"), error: logger("error"), debug: logger("debug"),
  });

  Object.defineProperty(globalThis, "tools", { value: tools, enumerable: true });
  Object.defineProperty(globalThis, "console", { value: console, enumerable: true, writable: true, configurable: true });

  return {
    // The return value as JSON text (undefined → null); cycles and BigInts throw a TypeError.
    finish(value) {
      const text = stringify(value);
      return text === undefined ? "null" : text;
    },
    // Whatever the program threw, as JSON text the host reads without running program code again.
    describe(thrown) {
      let name = "Error";
      let message;
      let stack;
      try {
        if (thrown !== null && typeof thrown === "object") {
          if (typeof thrown.name === "string") name = thrown.name;
          message = typeof thrown.message === "string" ? thrown.message : show(thrown);
          if (typeof thrown.stack === "string") stack = thrown.stack;
        } else {
          message = show(thrown);
        }
      } catch {
        message = "the program threw a value that cannot be read";
      }
      return stringify({ name, message, stack });
    },
  };
})`;
