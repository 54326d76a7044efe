// Aborts: every runtime error ends in env.opa_abort(addr of a NUL-terminated UTF-8 message). The SDK
// turns that into a thrown string, so evaluation stops there; the next evaluation resets the heap.

import { opa_abort } from "./env";

// Messages are assembled in a static buffer, not on the heap, so that "out of memory" can be reported.
@inline const MSG_CAP: usize = 1024;
const MSG_BUF: usize = memory.data(MSG_CAP);

let msgLen: usize = 0;

function msgReset(): void {
  msgLen = 0;
}

function msgByte(b: u32): void {
  if (msgLen < MSG_CAP - 1) {
    store<u8>(MSG_BUF + msgLen, <u8>b);
    msgLen++;
  }
}

function msgBytes(ptr: usize, len: usize): void {
  for (let i: usize = 0; i < len; i++) msgByte(load<u8>(ptr + i));
}

/** Appends an AssemblyScript string literal (UTF-16, ASCII only in this runtime). */
function msgLiteral(s: string): void {
  const ptr = changetype<usize>(s);
  const n = <usize>load<u32>(ptr - 4) >> 1;
  for (let i: usize = 0; i < n; i++) msgByte(<u32>load<u16>(ptr + (i << 1)));
}

function msgUint(v: u32): void {
  if (v >= 10) msgUint(v / 10);
  msgByte(48 + (v % 10));
}

function msgSend(): void {
  store<u8>(MSG_BUF + msgLen, 0);
  opa_abort(MSG_BUF);
  unreachable();
}

/** Aborts evaluation with a fixed message. Never returns. */
export function fail(message: string): void {
  msgReset();
  msgLiteral(message);
  msgSend();
}

/** Aborts with `<message>: <detail bytes>`. */
export function failWith(message: string, ptr: usize, len: usize): void {
  msgReset();
  msgLiteral(message);
  msgByte(58);
  msgByte(32);
  msgBytes(ptr, len);
  msgSend();
}

/** Aborts with raw UTF-8 message bytes (copied, truncated to 1023 bytes). */
export function writ_abort_bytes(ptr: usize, len: usize): void {
  msgReset();
  msgBytes(ptr, len);
  msgSend();
}

/**
 * Aborts with an OPA-style located error: `<file>:<row>:<col>: <message>`, e.g.
 * `module.rego:3:1: var assignment conflict`. `file`/`message` are UTF-8 bytes (not NUL-terminated).
 */
export function writ_error_at(filePtr: usize, fileLen: usize, row: u32, col: u32, msgPtr: usize, msgLen_: usize): void {
  msgReset();
  msgBytes(filePtr, fileLen);
  msgByte(58);
  msgUint(row);
  msgByte(58);
  msgUint(col);
  msgByte(58);
  msgByte(32);
  msgBytes(msgPtr, msgLen_);
  msgSend();
}

/** Target of `--use abort=`: AssemblyScript's own aborts (not expected with --noAssert) end here. */
export function writAbort(message: usize, fileName: usize, line: u32, column: u32): void {
  msgReset();
  msgLiteral("internal error");
  if (message != 0) {
    msgByte(58);
    msgByte(32);
    msgLiteral(changetype<string>(message));
  }
  msgSend();
}
