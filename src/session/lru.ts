// A map bounded in entries and in weight (bytes, say), least recently used
// evicted first: for in-memory caches of a long-running process (serve, MCP),
// which must stay flat however many requests it answers.

export class Lru<K, V> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {}

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** The value without touching its recency. */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /**
   * Add or replace, as the most recently used; then the least recently used
   * go until both bounds hold. An entry heavier than maxWeight is not kept.
   */
  set(key: K, value: V, weight = 0): void {
    this.delete(key);
    if (weight > this.maxWeight) return;
    this.entries.set(key, { value, weight });
    this.total += weight;
    for (const [k] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.total <= this.maxWeight) break;
      this.delete(k);
    }
  }

  delete(key: K): boolean {
    const e = this.entries.get(key);
    if (!e) return false;
    this.entries.delete(key);
    this.total -= e.weight;
    return true;
  }

  get size(): number {
    return this.entries.size;
  }

  get weight(): number {
    return this.total;
  }
}

/**
 * A Map that keeps at most `max` keys: setting a new key past it forgets the
 * oldest inserted one. For caches keyed by what a session meets over its life
 * (app selectors, windows), which a long-running serve would otherwise grow
 * without end. Drop-in where a Map is expected.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key)) {
      while (this.size >= this.max) {
        const oldest = this.keys().next();
        if (oldest.done) break;
        this.delete(oldest.value);
      }
    }
    return super.set(key, value);
  }
}
