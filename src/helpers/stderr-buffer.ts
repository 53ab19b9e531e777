/** Keeps the last lines a helper wrote to stderr, bounded in lines and bytes. */
export class StderrBuffer {
  private lines: string[] = [];
  private partial = "";
  private bytes = 0;
  dropped = 0;
  constructor(
    private readonly maxLines = 200,
    private readonly maxBytes = 64 * 1024,
  ) {}

  push(chunk: Buffer | string): void {
    const text = this.partial + chunk.toString();
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    // A helper that never writes a newline must not grow us without bound.
    if (this.partial.length > 4096) {
      parts.push(this.partial.slice(0, 4096));
      this.partial = "";
    }
    for (const line of parts) this.add(line);
  }

  private add(line: string): void {
    const clipped = line.length > 2000 ? line.slice(0, 2000) + "…" : line;
    this.lines.push(clipped);
    this.bytes += clipped.length;
    while (this.lines.length > this.maxLines || this.bytes > this.maxBytes) {
      this.bytes -= this.lines.shift()!.length;
      this.dropped++;
    }
  }

  tail(n = 20): string[] {
    const all = this.partial ? [...this.lines, this.partial] : this.lines;
    return all.slice(-n);
  }
}
