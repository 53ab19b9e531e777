import { connect, type Socket } from "node:net";

/**
 * A minimal X11 client over the display's unix socket: just enough protocol
 * to tell that a display answers, who owns a selection and what a window
 * property holds. Polling start-up with this costs a socket round trip, not a
 * process spawn (xdpyinfo / xprop cost ~5 ms each).
 */
export class X11Connection {
  readonly root: number;
  private buf = Buffer.alloc(0);
  private waiter: (() => void) | undefined;
  private closed: Error | undefined;
  private sequence = 0;

  private constructor(
    private readonly socket: Socket,
    setup: Buffer,
  ) {
    this.root = readRoot(setup);
    socket.on("data", (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      this.wake();
    });
    socket.on("error", (err) => {
      this.closed ??= err;
      this.wake();
    });
    socket.on("close", () => {
      this.closed ??= new Error("X connection closed");
      this.wake();
    });
  }

  /** Connects to display ":N" and completes the connection handshake. */
  static async open(display: string, timeoutMs = 2000): Promise<X11Connection> {
    const socket = await connectSocket(socketPath(display), timeoutMs);
    try {
      const setup = await handshake(socket, timeoutMs);
      return new X11Connection(socket, setup);
    } catch (err) {
      socket.destroy();
      throw err;
    }
  }

  close(): void {
    this.socket.destroy();
  }

  async internAtom(name: string, onlyIfExists = false): Promise<number> {
    const n = Buffer.byteLength(name);
    const req = Buffer.alloc(8 + pad4(n));
    req.writeUInt8(16, 0);
    req.writeUInt8(onlyIfExists ? 1 : 0, 1);
    req.writeUInt16LE(req.length / 4, 2);
    req.writeUInt16LE(n, 4);
    req.write(name, 8, "latin1");
    const reply = await this.request(req);
    return reply.readUInt32LE(8);
  }

  async getSelectionOwner(atom: number): Promise<number> {
    const req = Buffer.alloc(8);
    req.writeUInt8(23, 0);
    req.writeUInt16LE(2, 2);
    req.writeUInt32LE(atom, 4);
    const reply = await this.request(req);
    return reply.readUInt32LE(8);
  }

  /** Format-32 property values (windows, cardinals, atoms); [] when unset. */
  async getProperty32(window: number, property: number): Promise<number[]> {
    const reply = await this.getProperty(window, property);
    if (reply.format !== 32) return [];
    const out: number[] = [];
    for (let i = 0; i + 4 <= reply.data.length; i += 4) out.push(reply.data.readUInt32LE(i));
    return out;
  }

  async getPropertyString(window: number, property: number): Promise<string | undefined> {
    const reply = await this.getProperty(window, property);
    return reply.format === 8 ? reply.data.toString("utf8") : undefined;
  }

  /** IsViewable: the window and all its ancestors are mapped. */
  async isViewable(window: number): Promise<boolean> {
    const req = Buffer.alloc(8);
    req.writeUInt8(3, 0); // GetWindowAttributes
    req.writeUInt16LE(2, 2);
    req.writeUInt32LE(window, 4);
    try {
      const reply = await this.request(req);
      return reply.readUInt8(26) === 2;
    } catch (err) {
      if (err instanceof X11Error) return false; // BadWindow: it went away
      throw err;
    }
  }

  private async getProperty(window: number, property: number): Promise<{ format: number; data: Buffer }> {
    const req = Buffer.alloc(24);
    req.writeUInt8(20, 0);
    req.writeUInt8(0, 1); // delete: no
    req.writeUInt16LE(6, 2);
    req.writeUInt32LE(window, 4);
    req.writeUInt32LE(property, 8);
    req.writeUInt32LE(0, 12); // AnyPropertyType
    req.writeUInt32LE(0, 16);
    req.writeUInt32LE(1 << 20, 20); // up to 4 MiB
    const reply = await this.request(req);
    const format = reply.readUInt8(1);
    const units = reply.readUInt32LE(16);
    const bytes = units * (format / 8);
    return { format, data: reply.subarray(32, 32 + bytes) };
  }

  /** Sends one request and returns its reply (requests are issued one at a time). */
  private async request(req: Buffer): Promise<Buffer> {
    this.sequence = (this.sequence + 1) & 0xffff;
    const seq = this.sequence;
    this.socket.write(req);
    for (;;) {
      const packet = await this.nextPacket();
      const kind = packet.readUInt8(0);
      const packetSeq = packet.readUInt16LE(2);
      if (kind === 0 && packetSeq === seq) throw new X11Error(packet.readUInt8(1), req.readUInt8(0));
      if (kind === 1 && packetSeq === seq) return packet;
      // An event or a stale packet: not ours to handle.
    }
  }

  private async nextPacket(): Promise<Buffer> {
    for (;;) {
      if (this.buf.length >= 32) {
        const extra = this.buf.readUInt8(0) === 1 ? this.buf.readUInt32LE(4) * 4 : 0;
        if (this.buf.length >= 32 + extra) {
          const packet = this.buf.subarray(0, 32 + extra);
          this.buf = this.buf.subarray(32 + extra);
          return packet;
        }
      }
      if (this.closed) throw this.closed;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

export class X11Error extends Error {
  constructor(
    readonly errorCode: number,
    readonly opcode: number,
  ) {
    super(`X error ${errorCode} for request ${opcode}`);
  }
}

export function socketPath(display: string): string {
  return `/tmp/.X11-unix/X${displayNumber(display)}`;
}

export function displayNumber(display: string): number {
  const m = /^:(\d+)(?:\.\d+)?$/.exec(display);
  if (!m) throw new Error(`not a local display: ${display}`);
  return Number(m[1]);
}

/** True when the display accepts a connection and completes the handshake. */
export async function displayAnswers(display: string, timeoutMs = 1000): Promise<boolean> {
  try {
    (await X11Connection.open(display, timeoutMs)).close();
    return true;
  } catch {
    return false;
  }
}

function pad4(n: number): number {
  return (n + 3) & ~3;
}

function connectSocket(path: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connect ${path}: timed out`));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function handshake(socket: Socket, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new Error("X handshake timed out")), timeoutMs);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 8) return;
      const total = 8 + buf.readUInt16LE(6) * 4;
      if (buf.length < total) return;
      const status = buf.readUInt8(0);
      if (status === 1) finish(undefined, buf.subarray(0, total));
      else {
        const reason = buf.subarray(8, 8 + buf.readUInt8(1)).toString("latin1");
        finish(new Error(`X server refused the connection: ${reason || `status ${status}`}`));
      }
    };
    const onClose = () => finish(new Error("X server closed the connection during the handshake"));
    const finish = (err?: Error, setup?: Buffer) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.off("error", onClose);
      if (setup && buf.length > setup.length) socket.unshift(buf.subarray(setup.length));
      if (err) reject(err);
      else resolve(setup!);
    };
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.once("error", onClose);
    const req = Buffer.alloc(12);
    req.write("l", 0, "latin1"); // little-endian
    req.writeUInt16LE(11, 2);
    req.writeUInt16LE(0, 4);
    socket.write(req);
  });
}

/** The first screen's root window, from the connection setup reply. */
function readRoot(setup: Buffer): number {
  const vendorLen = setup.readUInt16LE(24);
  const formats = setup.readUInt8(29);
  return setup.readUInt32LE(40 + pad4(vendorLen) + 8 * formats);
}
