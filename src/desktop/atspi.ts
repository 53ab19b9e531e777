import type { StartContext } from "./context.ts";
import { dbusCall, nameHasOwner } from "./dbus.ts";
import { pollUntil } from "./poll.ts";
import { DesktopStartError, spawnDaemon, tail, type Daemon } from "./processes.ts";

/**
 * The accessibility bus: at-spi-bus-launcher starts the a11y dbus-daemon and
 * owns org.a11y.Bus on the session bus; then the registry, which must own
 * org.a11y.atspi.Registry on the a11y bus before clients can list
 * applications. Finally accessibility is switched on (org.a11y.Status).
 */
export async function startAccessibility(
  ctx: StartContext,
  sessionBus: string,
): Promise<{ a11yAddress: string; launcher: Daemon; registry: Daemon }> {
  const launcher = await spawnDaemon(
    "at-spi-bus-launcher",
    ["/usr/libexec/at-spi-bus-launcher", "--launch-immediately", "--a11y=1"],
    ctx.daemonOptions(),
  );
  ctx.started.push(launcher);
  await pollUntil("at-spi-bus-launcher", launcher, ctx.timeoutMs, () => nameHasOwner(sessionBus, "org.a11y.Bus"));
  const reply = await dbusCall(sessionBus, "org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress").catch((err: Error) => {
    throw new DesktopStartError("at-spi-bus-launcher", `GetAddress failed: ${err.message}`, tail(launcher.logPath));
  });
  const a11yAddress = /string "([^"]+)"/.exec(reply)?.[1];
  if (!a11yAddress) throw new DesktopStartError("at-spi-bus-launcher", `unexpected GetAddress reply: ${reply.trim()}`);

  const registry = await spawnDaemon(
    "at-spi2-registryd",
    ["/usr/libexec/at-spi2-registryd", "--use-gnome-session=false"],
    ctx.daemonOptions({ env: { ...ctx.env, AT_SPI_BUS_ADDRESS: a11yAddress } }),
  );
  ctx.started.push(registry);
  await pollUntil("at-spi2-registryd", registry, ctx.timeoutMs, () => nameHasOwner(a11yAddress, "org.a11y.atspi.Registry"));

  await dbusCall(
    sessionBus,
    "org.a11y.Bus",
    "/org/a11y/bus",
    "org.freedesktop.DBus.Properties.Set",
    "string:org.a11y.Status",
    "string:IsEnabled",
    "variant:boolean:true",
  ).catch((err: Error) => {
    throw new DesktopStartError("at-spi-enable", err.message);
  });
  return { a11yAddress, launcher, registry };
}
