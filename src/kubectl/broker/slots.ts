// How many calls one broker runs at once; the others wait their turn (or go away while waiting).

/** Slots for a broker's calls (kubectl processes, promql requests): at once when one is free, else in turn. */
export class SlotPool {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** Calls waiting for a free slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** A slot for one kubectl process; false when the call goes away first. */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener('abort', giveUp);
        this.running++;
        resolve(true);
      };
      const giveUp = () => {
        const i = this.waiting.indexOf(wake);
        if (i !== -1) this.waiting.splice(i, 1);
        resolve(false);
      };
      this.waiting.push(wake);
      signal.addEventListener('abort', giveUp, { once: true });
    });
  }

  release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}
