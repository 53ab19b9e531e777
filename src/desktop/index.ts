export { startDesktop, type Desktop, type DesktopOptions, type DesktopRecord } from "./desktop.ts";
export { runInDesktop } from "./run.ts";
export { desktopMain, shellQuote } from "./cli.ts";
export { DesktopStartError } from "./processes.ts";
export { X11Connection, displayAnswers } from "./x11.ts";
