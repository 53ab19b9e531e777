// A serve session read line by line, every line kept: serve's safe retries
// (a replay answers one id twice) need every answer, and the shared Serve
// (deckhand.ts) keeps the first answer to an id only.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { checkContract, DECKHAND } from "../deckhand.ts";
import { desktopEnv, waitUntil, type DesktopLike } from "../harness.ts";

export class RawServe {
  readonly child: ChildProcess;
  readonly lines: any[] = [];
  stderr = "";
  constructor(desktop: DesktopLike, stateDir: string, args: string[] = []) {
    this.child = spawn(DECKHAND, ["serve", ...args], { env: desktopEnv(desktop, { DECKHAND_STATE_DIR: stateDir }), stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr!.on("data", (d) => (this.stderr = (this.stderr + d).slice(-20000)));
    createInterface({ input: this.child.stdout! }).on("line", (l) => {
      const m = JSON.parse(l);
      const { id: _id, replayed: _r, ...envelope } = m;
      checkContract(`serve response ${JSON.stringify(_id)}`, envelope);
      this.lines.push(m);
    });
  }
  send(...reqs: object[]): void {
    this.child.stdin!.write(reqs.map((r) => JSON.stringify(r) + "\n").join(""));
  }
  of(id: unknown): any[] {
    return this.lines.filter((l) => l.id === id);
  }
  async answers(id: unknown, n: number, timeoutMs = 30_000): Promise<any[]> {
    return await waitUntil(`${n} answers to ${JSON.stringify(id)}`, timeoutMs, () => (this.of(id).length >= n ? this.of(id) : undefined));
  }
  async close(): Promise<void> {
    this.child.stdin!.end();
    await new Promise((r) => this.child.on("exit", r));
  }
}
