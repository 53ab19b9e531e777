// The policy library: who deckhand may touch, which URLs and fields are off
// limits, which actions are sensitive, and whether foreground input is granted.
export * from "./builtin.ts";
export * from "./decide.ts";
export * from "./fingerprint.ts";
export * from "./foreground.ts";
export * from "./glob.ts";
export * from "./identity.ts";
export * from "./load.ts";
export * from "./secure.ts";
export * from "./sensitive.ts";
export * from "./urls.ts";
