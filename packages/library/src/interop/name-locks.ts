/**
 * Writes to one package run one after the other (two source files may name the same session):
 * `run(name, write)` waits for the writes under the same name that started before it.
 */
export interface NameLocks {
  run<T>(name: string, write: () => Promise<T>): Promise<T>;
}

/** How many lock slots threads share: names are hashed onto them (a collision only waits). */
export const SHARED_LOCK_SLOTS = 4096;

type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: false; value: string } | { async: true; value: Promise<string> };

/**
 * Name locks shared by the threads of one import (the main thread and its workers), on a
 * SharedArrayBuffer of SHARED_LOCK_SLOTS slots: a slot holds 0 when free, else the id (≥ 1) of
 * the thread holding it, so that the slots of a thread that died can be freed (`releaseOwner`).
 * No thread ever blocks: a writer that finds its slot taken awaits Atomics.waitAsync.
 */
export class SharedNameLocks implements NameLocks {
  private readonly slots: Int32Array;

  constructor(
    buffer: SharedArrayBuffer,
    private readonly owner: number,
  ) {
    this.slots = new Int32Array(buffer);
  }

  static buffer(): SharedArrayBuffer {
    return new SharedArrayBuffer(SHARED_LOCK_SLOTS * Int32Array.BYTES_PER_ELEMENT);
  }

  async run<T>(name: string, write: () => Promise<T>): Promise<T> {
    const slot = slotOf(name);
    const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
    for (;;) {
      const holder = Atomics.compareExchange(this.slots, slot, 0, this.owner);
      if (holder === 0) break;
      const wait = waitAsync(this.slots, slot, holder);
      if (!wait.async) continue;
      // A pending Atomics.waitAsync does not keep a thread's event loop alive: a timer does.
      const alive = setInterval(() => undefined, 60_000);
      try {
        await wait.value;
      } finally {
        clearInterval(alive);
      }
    }
    try {
      return await write();
    } finally {
      Atomics.store(this.slots, slot, 0);
      Atomics.notify(this.slots, slot);
    }
  }

  /** Frees every slot a thread held (one that died while writing). */
  releaseOwner(owner: number): void {
    for (let slot = 0; slot < this.slots.length; slot++) {
      if (Atomics.compareExchange(this.slots, slot, owner, 0) === owner)
        Atomics.notify(this.slots, slot);
    }
  }
}

function slotOf(name: string): number {
  let hash = 2166136261;
  for (let index = 0; index < name.length; index++) {
    hash ^= name.charCodeAt(index);
    hash = Math.imul(hash, 16777619);
  }
  return (hash >>> 0) % SHARED_LOCK_SLOTS;
}
