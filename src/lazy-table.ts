// Schemas built on first use. A one-shot CLI call runs one command and sends
// a few helper ops, but building every command's and every op's zod schemas
// when their modules load was a large part of its start (issue 15: the
// interpreter runs zod's constructors cold, ~10-20 us per schema).

/**
 * A frozen table whose entries are built by their thunk on first read (once).
 * Keys, their order and the entries' types are the definitions'.
 */
export function lazyTable<T extends Record<string, () => unknown>>(defs: T): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const out = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const key of Object.keys(defs) as (keyof T & string)[]) {
    let built: ReturnType<T[typeof key]> | undefined;
    Object.defineProperty(out, key, { enumerable: true, get: () => (built ??= defs[key]!() as ReturnType<T[typeof key]>) });
  }
  return Object.freeze(out);
}

/** A value built by `make` on the first call, the same one after. */
export function once<T>(make: () => T): () => T {
  let built: { v: T } | undefined;
  return () => (built ??= { v: make() }).v;
}

/** A lazy table's entries as thunks, for spreading into another lazy table without building them. */
export function thunksOf<T extends object>(table: T): { [K in keyof T]: () => T[K] } {
  return Object.fromEntries(Object.keys(table).map((k) => [k, () => table[k as keyof T]])) as { [K in keyof T]: () => T[K] };
}
