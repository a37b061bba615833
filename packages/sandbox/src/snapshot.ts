/**
 * A QuickJS context made once and handed back to each run as it was made: every byte of state
 * the module keeps (QuickJS's runtime and context, the allocator, the C library's statics) lives
 * in its linear memory, so copying that memory back after a run undoes whatever the run did —
 * globals, prototypes, pending jobs, atoms, the allocator's free lists — for a few kilobytes of
 * copying instead of a new context (~0.2 ms, most of a run of `a + b`).
 */
import { Buffer } from "node:buffer";
import { randomFillSync } from "node:crypto";

/** Where a QuickJS build keeps its state in linear memory: static data, then the stack, then the heap. */
export interface MemoryLayout {
  /** End of the static and zero-initialised data (with a margin): what lies below the stack. */
  readonly staticEnd: number;
  /** The stack pointer's start: the stack grows down from here and the heap starts here. */
  readonly stackTop: number;
}

/**
 * The stack size quickjs-emscripten 0.31 links its builds with (STACK_SIZE=5MB). The linker
 * places the stack right above the zero-initialised data, so the stack's bottom is its top less
 * this; {@link memoryLayout} checks that this leaves room for the static data it can see.
 */
const BUILD_STACK_BYTES = 5 * 1024 * 1024;

/**
 * Copied beyond each region's known end. Below the stack it covers a stack that was linked a
 * little smaller than {@link BUILD_STACK_BYTES} (restoring part of an unused stack is harmless);
 * above the heap's last written word, slack for the allocator's bookkeeping.
 */
const MARGIN_BYTES = 16 * 1024;

/** Most zero-initialised data the layout check believes (this build has under 3 KiB). */
const MAX_BSS_BYTES = 64 * 1024;

/**
 * Reads the layout from the `.wasm` file: the initial stack pointer (the build's one global) and
 * the end of its data segments. Null for a build that does not look like the one this was
 * written for: runs then get a fresh context each, as before.
 */
export function memoryLayout(wasm: Uint8Array): MemoryLayout | null {
  const reader = new WasmReader(wasm);
  let stackTop: number | undefined;
  let dataEnd = 0;
  let globals = 0;
  for (const section of reader.sections()) {
    if (section.id === GLOBAL_SECTION) {
      globals = reader.u32();
      if (globals !== 1) return null;
      const type = reader.byte();
      const mutable = reader.byte();
      const init = reader.constExpression();
      if (type !== I32 || mutable !== 1 || init === undefined) return null;
      stackTop = init;
    } else if (section.id === DATA_SECTION) {
      const count = reader.u32();
      for (let i = 0; i < count; i++) {
        if (reader.u32() !== 0) return null;
        const offset = reader.constExpression();
        if (offset === undefined) return null;
        const size = reader.u32();
        reader.skip(size);
        dataEnd = Math.max(dataEnd, offset + size);
      }
    }
    reader.seek(section.end);
  }
  if (stackTop === undefined || globals !== 1) return null;
  const stackBottom = stackTop - BUILD_STACK_BYTES;
  if (stackBottom < dataEnd || stackBottom - dataEnd > MAX_BSS_BYTES) return null;
  return { staticEnd: stackBottom + MARGIN_BYTES, stackTop };
}

/**
 * The bytes of a module's memory that hold state, as they were when taken, and where its
 * context keeps Math.random's seed (restored like everything else, so it is drawn anew per run).
 */
export class MemorySnapshot {
  private constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly layout: MemoryLayout,
    private readonly low: Uint8Array,
    private readonly heap: Uint8Array,
    private readonly seedAt: number,
    private readonly byteLength: number,
  ) {}

  /**
   * Copies the state of a module's memory now, in a module that has run nothing else yet (above
   * its heap every byte is still zero). The allocator writes a header at the start of its free
   * top region, above every block it handed out: the heap's last non-zero word bounds all that
   * is allocated. `probe` calls Math.random once, which finds where its seed is kept. Null when
   * that seed cannot be found.
   */
  static take(memory: WebAssembly.Memory, layout: MemoryLayout, probe: () => void): MemorySnapshot | null {
    const seedAt = findRandomSeed(memory, layout.stackTop, probe);
    if (seedAt === null) return null;
    const bytes = new Uint8Array(memory.buffer);
    const heapEnd = Math.min(bytes.length, lastWritten(memory, layout.stackTop) + MARGIN_BYTES);
    return new MemorySnapshot(
      memory,
      layout,
      bytes.slice(0, layout.staticEnd),
      bytes.slice(layout.stackTop, heapEnd),
      seedAt,
      bytes.length,
    );
  }

  /**
   * Puts the state back and draws a new Math.random seed (QuickJS seeds a new context from the
   * clock; the snapshot's seed would give every run the same numbers). False when it cannot: the memory grew
   * (the module is then replaced anyway).
   */
  restore(): boolean {
    if (this.memory.buffer.byteLength !== this.byteLength) return false;
    const bytes = new Uint8Array(this.memory.buffer);
    bytes.set(this.low, 0);
    bytes.set(this.heap, this.layout.stackTop);
    reseed(this.memory, this.seedAt);
    return true;
  }
}

const MASK_64 = (1n << 64n) - 1n;

/** QuickJS's Math.random step (xorshift64*): how the seed's word is recognised. */
function xorshift64(x: bigint): bigint {
  let state = x;
  state ^= state >> 12n;
  state = (state ^ (state << 25n)) & MASK_64;
  state ^= state >> 27n;
  return state;
}

/** A run of zeros as long as the pages {@link lastWritten} compares at once. */
const ZERO_PAGE = new Uint8Array(64 * 1024);

/**
 * The end of the last non-zero 32-bit word of `memory` above `from` (`from` when there is none).
 * The megabytes of zeros above the heap are skipped a page at a time by a native comparison: a
 * word-by-word scan of them cost a new thread ~30 ms.
 */
function lastWritten(memory: WebAssembly.Memory, from: number): number {
  const bytes = Buffer.from(memory.buffer);
  let end = bytes.length - (bytes.length % ZERO_PAGE.length);
  while (end - ZERO_PAGE.length >= from && bytes.subarray(end - ZERO_PAGE.length, end).equals(ZERO_PAGE)) {
    end -= ZERO_PAGE.length;
  }
  const words = new Uint32Array(memory.buffer, 0, Math.min(bytes.length, end + ZERO_PAGE.length) / 4);
  let last = words.length - 1;
  while (last >= from / 4 && words[last] === 0) last--;
  return Math.max(from, (last + 1) * 4);
}

/**
 * Finds the context's Math.random state: the one 64-bit word of the heap (above `heapStart`)
 * that `step` (a call of Math.random) advances by QuickJS's xorshift64* step. Null when there is
 * not exactly one: a build that seeds differently, whose contexts are then not reused.
 */
function findRandomSeed(memory: WebAssembly.Memory, heapStart: number, step: () => void): number | null {
  const start = Math.ceil(heapStart / 8) * 8;
  const end = Math.floor(lastWritten(memory, start) / 8) * 8;
  const count = (end - start) / 8;
  const before = new BigUint64Array(memory.buffer, start, count).slice();
  const beforeHalves = new Uint32Array(before.buffer);
  step();
  const after = new BigUint64Array(memory.buffer, start, count);
  const afterHalves = new Uint32Array(memory.buffer, start, count * 2);
  const found: number[] = [];
  for (let index = 0; index < count; index++) {
    // Words that did not change are passed over without making BigInts.
    if (
      beforeHalves[2 * index] === afterHalves[2 * index] &&
      beforeHalves[2 * index + 1] === afterHalves[2 * index + 1]
    ) {
      continue;
    }
    const word = before[index]!;
    if (word !== 0n && after[index] === xorshift64(word)) found.push(start + index * 8);
  }
  return found.length === 1 ? found[0]! : null;
}

/** A fresh non-zero seed (xorshift's state must not be zero), from the system's randomness. */
function reseed(memory: WebAssembly.Memory, at: number): void {
  const word = new BigUint64Array(memory.buffer, at, 1);
  do randomFillSync(word);
  while (word[0] === 0n);
}

const GLOBAL_SECTION = 6;
const DATA_SECTION = 11;
const I32 = 0x7f;
const I32_CONST = 0x41;
const END = 0x0b;

/** Just enough of the WebAssembly binary format to read sections, LEB128 numbers and `i32.const` expressions. */
class WasmReader {
  private at = 8;

  constructor(private readonly bytes: Uint8Array) {}

  *sections(): Generator<{ id: number; end: number }> {
    while (this.at < this.bytes.length) {
      const id = this.byte();
      const size = this.u32();
      yield { id, end: this.at + size };
    }
  }

  seek(at: number): void {
    this.at = at;
  }

  skip(bytes: number): void {
    this.at += bytes;
  }

  byte(): number {
    const value = this.bytes[this.at++];
    if (value === undefined) throw new RangeError("truncated WebAssembly module");
    return value;
  }

  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = this.byte();
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if ((byte & 0x80) === 0) return result;
    }
  }

  /** An `i32.const N; end` expression's N (non-negative here), or undefined for any other. */
  constExpression(): number | undefined {
    if (this.byte() !== I32_CONST) return undefined;
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.byte();
      result |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (shift < 32 && byte & 0x40) result |= -1 << shift;
    return this.byte() === END ? result : undefined;
  }
}
