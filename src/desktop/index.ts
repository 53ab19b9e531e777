// A private virtual X11 desktop with accessibility, for live tests and CI:
// Xvfb + a session D-Bus + the AT-SPI bus and registry + openbox, each in its
// own process group, torn down by pid (never by name), following the team's
// linux-desktop design note (start-up order, packages, traps).
export { startDesktop, type Desktop, type DesktopOptions, type DesktopRecord } from "./desktop.ts";
export { runInDesktop } from "./run.ts";
export { desktopMain, shellQuote } from "./cli.ts";
export { DesktopStartError } from "./processes.ts";
export { X11Connection, displayAnswers } from "./x11.ts";
