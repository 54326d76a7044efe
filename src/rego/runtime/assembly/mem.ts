// Bump-pointer heap. Allocations are 8-byte aligned and never individually freed, except that freeing
// (or growing) the most recent block reclaims (or extends) it in place. opa_heap_ptr_set resets the
// heap: everything above the new pointer is discarded (the SDK does this before every evaluation).

import { fail } from "./abort";

// HEAP_BASE is the end of the runtime's static data, passed to asc by build.ts (`--use HEAP_BASE=`).
// The linker moves it (global export `writ_heap_ptr`) past the data segments it appends.
export let heapPtr: usize = HEAP_BASE;

/** Address of the most recent allocation (0 after a reset), the only block free/realloc can reuse. */
let lastBlock: usize = 0;

/** Cached end of linear memory in bytes; refreshed whenever an allocation would pass it. */
let memEnd: usize = 0;

@inline const MAX_ALLOC: usize = 0x7fff_0000;

/** Makes sure [0, end) is backed by linear memory, growing it (or aborting "out of memory"). */
export function ensureMemory(end: usize): void {
  if (end > memEnd) growTo(end);
}

function growTo(end: usize): void {
  let pages = memory.size();
  let cur = <u64>pages << 16;
  if (<u64>end > cur) {
    const need = <i32>((<u64>end - cur + 0xffff) >> 16);
    // Grow geometrically (up to 16 MiB at a time) so a growing heap does not call memory.grow per page.
    let extra = pages >> 1;
    if (extra > 256) extra = 256;
    if (extra < need) extra = need;
    if (memory.grow(extra) < 0 && memory.grow(need) < 0) fail("out of memory");
    pages = memory.size();
    cur = <u64>pages << 16;
  }
  memEnd = cur >= 0x1_0000_0000 ? <usize>0xffff_fff8 : <usize>cur;
}

/** Allocates `size` bytes (8-byte aligned, contents undefined). */
export function malloc(size: usize): usize {
  if (size > MAX_ALLOC) fail("out of memory");
  // The host may set an unaligned heap pointer (the SDK puts it right after the input bytes).
  const p = (heapPtr + 7) & ~(<usize>7);
  const end = p + ((size + 7) & ~(<usize>7));
  if (end < p) fail("out of memory");
  if (end > memEnd) growTo(end);
  heapPtr = end;
  lastBlock = p;
  return p;
}

/** Allocates `size` zeroed bytes. */
export function calloc(size: usize): usize {
  const p = malloc(size);
  memory.fill(p, 0, size);
  return p;
}

/** Frees `p`: reclaims it only if it is the most recent allocation, otherwise a no-op. */
export function free(p: usize): void {
  if (p != 0 && p == lastBlock) {
    heapPtr = p;
    lastBlock = 0;
  }
}

/** Resizes block `p` of `oldSize` bytes, in place when it is the most recent allocation. */
export function realloc(p: usize, oldSize: usize, newSize: usize): usize {
  if (p != 0 && p == lastBlock) {
    if (newSize > MAX_ALLOC) fail("out of memory");
    const end = p + ((newSize + 7) & ~(<usize>7));
    if (end > memEnd) growTo(end);
    heapPtr = end;
    return p;
  }
  const q = malloc(newSize);
  if (p != 0) memory.copy(q, p, oldSize < newSize ? oldSize : newSize);
  return q;
}

/** Shrinks the most recent block `p` to `newSize` bytes (no-op for other blocks). */
export function shrink(p: usize, newSize: usize): void {
  if (p != 0 && p == lastBlock) heapPtr = p + ((newSize + 7) & ~(<usize>7));
}

/** Ensures `end` is backed by memory (used by writers that fill the free space above the heap). */
@inline
export function reserve(end: usize): void {
  if (end > memEnd) growTo(end);
}

/** Turns [start, end) (written above the heap pointer) into the most recent allocation. */
export function commit(start: usize, end: usize): void {
  heapPtr = (end + 7) & ~(<usize>7);
  lastBlock = start;
}

/** First free 8-aligned address above the heap pointer (where writers start). */
export function freeStart(): usize {
  return (heapPtr + 7) & ~(<usize>7);
}

/** Current heap pointer, for scratch allocations released with `release`. */
@inline
export function mark(): usize {
  return heapPtr;
}

/** Drops every allocation made since `m = mark()`. */
@inline
export function release(m: usize): void {
  heapPtr = m;
  lastBlock = 0;
}

export function opa_malloc(size: usize): usize {
  return malloc(size);
}

export function opa_free(p: usize): void {
  free(p);
}

export function opa_heap_ptr_get(): usize {
  return heapPtr;
}

export function opa_heap_ptr_set(p: usize): void {
  heapPtr = p;
  lastBlock = 0;
}

// ABI 1.3: this heap has no free lists, so there are no free blocks to stash or restore.
export function opa_heap_blocks_stash(): void {}
export function opa_heap_blocks_restore(): void {}
export function opa_heap_stash_clear(): void {}
