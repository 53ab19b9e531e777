import { describe, expect, it } from "vitest";
import { assertAllowed, decideApp, privacyPaneMatch, settingsApp } from "../../../src/policy/decide.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { EMPTY_POLICY, failClosedLayer } from "../../../src/policy/load.ts";
import { ident, policyOf } from "./helpers.ts";

const opts = { fingerprints: null };
const decide = (...args: Parameters<typeof decideApp>) => decideApp(args[0], args[1], args[2], args[3] ?? opts);

describe("built-in deny: every app the issue names", () => {
  // [label, identity fields that a helper on its platform would report]
  const cases: [string, Parameters<typeof ident>[0]][] = [
    ["xterm", { executable: "/usr/bin/xterm", name: "xterm", desktopId: null, comm: "xterm" }],
    ["gnome-terminal", { executable: "/usr/libexec/gnome-terminal-server", name: "Terminal", desktopId: "org.gnome.Terminal", comm: "gnome-terminal-" }],
    ["konsole", { executable: "/usr/bin/konsole", name: "Konsole", desktopId: "org.kde.konsole", comm: "konsole" }],
    ["xfce4-terminal", { executable: "/usr/bin/xfce4-terminal", name: "Xfce4-terminal", desktopId: "xfce4-terminal.desktop" }],
    ["kitty", { executable: "/usr/lib/kitty/bin/kitty", name: "kitty", desktopId: "kitty.desktop" }],
    ["alacritty", { executable: "/usr/bin/alacritty", name: "Alacritty", desktopId: "Alacritty.desktop" }],
    ["wezterm", { executable: "/usr/bin/wezterm-gui", name: "WezTerm", desktopId: "org.wezfurlong.wezterm" }],
    ["foot", { executable: "/usr/bin/foot", name: "foot", desktopId: "foot.desktop" }],
    ["tilix", { executable: "/usr/bin/tilix", name: "Tilix", desktopId: "com.gexperts.Tilix.desktop" }],
    ["terminator (a python script: exe is the interpreter)", { executable: "/usr/bin/python3.11", name: "Terminator", desktopId: null, comm: "terminator" }],
    ["Windows Terminal", { executable: "C:\\Program Files\\WindowsApps\\Microsoft.WindowsTerminal_1.19\\WindowsTerminal.exe", name: "Windows Terminal", desktopId: "Microsoft.WindowsTerminal_8wekyb3d8bbwe!App", comm: null }],
    ["cmd", { executable: "C:\\Windows\\System32\\cmd.exe", name: "Command Prompt", desktopId: null, comm: null }],
    ["powershell", { executable: "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", name: "Windows PowerShell", desktopId: null, comm: null }],
    ["macOS Terminal", { executable: "/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal", name: "Terminal", desktopId: "com.apple.Terminal", comm: null }],
    ["iTerm2", { executable: "/Applications/iTerm.app/Contents/MacOS/iTerm2", name: "iTerm2", desktopId: "com.googlecode.iterm2", comm: null }],
    ["Warp", { executable: "/Applications/Warp.app/Contents/MacOS/stable", name: "Warp", desktopId: "dev.warp.Warp-Stable", comm: null }],
    ["zutty (Debian's x-terminal-emulator once installed)", { executable: "/usr/bin/zutty", name: "Zutty", desktopId: "zutty.desktop", comm: "zutty" }],
    ["sakura", { executable: "/usr/bin/sakura", name: "sakura", desktopId: "sakura.desktop" }],
    ["Ghostty", { executable: "/Applications/Ghostty.app/Contents/MacOS/ghostty", name: "Ghostty", desktopId: "com.mitchellh.ghostty", comm: null }],
    ["KeePassXC", { executable: "/usr/bin/keepassxc", name: "KeePassXC", desktopId: "org.keepassxc.KeePassXC" }],
    ["1Password", { executable: "/opt/1Password/1password", name: "1Password", desktopId: "1password.desktop" }],
    ["Bitwarden", { executable: "/opt/Bitwarden/bitwarden", name: "Bitwarden", desktopId: "bitwarden.desktop" }],
    ["Enpass", { executable: "/opt/enpass/Enpass", name: "Enpass", desktopId: "enpass.desktop" }],
    ["Dashlane", { executable: "/Applications/Dashlane.app/Contents/MacOS/Dashlane", name: "Dashlane", desktopId: "com.dashlane.dashlanephonefinal", comm: null }],
    ["LastPass", { executable: "/Applications/LastPass.app/Contents/MacOS/LastPass", name: "LastPass", desktopId: "com.lastpass.LastPass", comm: null }],
    ["Apple Passwords", { executable: "/System/Applications/Passwords.app/Contents/MacOS/Passwords", name: "Passwords", desktopId: "com.apple.Passwords", comm: null }],
    ["seahorse", { executable: "/usr/bin/seahorse", name: "Passwords and Keys", desktopId: "org.gnome.seahorse.Application" }],
    ["Keychain Access", { executable: "/System/Library/CoreServices/Applications/Keychain Access.app/Contents/MacOS/Keychain Access", name: "Keychain Access", desktopId: "com.apple.keychainaccess", comm: null }],
  ];
  it.each(cases)("%s is denied", (_label, fields) => {
    const d = decide(EMPTY_POLICY, ident(fields));
    expect(d.decision).toBe("deny");
    expect(d.source).toBe("builtin");
    expect(d.rule).toMatch(/^builtin:(terminal|password_manager|keyring):/);
  });

  it.each([
    ["executable only", { executable: "/opt/x/KITTY", name: "", desktopId: null, comm: null }],
    ["comm only", { executable: null, name: "", desktopId: null, comm: "Konsole" }],
    ["desktop id only", { executable: null, name: "", desktopId: "ORG.KEEPASSXC.KEEPASSXC.DESKTOP", comm: null }],
    ["snap desktop id", { executable: null, name: "", desktopId: "alacritty_alacritty.desktop", comm: null }],
    ["name only", { executable: null, name: "BITWARDEN", desktopId: null, comm: null }],
    ["accessible name only", { executable: null, name: "", accessibleName: "iTerm2", desktopId: null, comm: null }],
  ] as const)("matches on %s, case-insensitively", (_l, fields) => {
    expect(decide(EMPTY_POLICY, ident(fields)).decision).toBe("deny");
  });

  it("ordinary apps are allowed by default", () => {
    expect(decide(EMPTY_POLICY, ident())).toEqual({ decision: "allow", source: "default", rule: "default:allow", matchedBy: "default" });
    // Names that merely contain a denied name are not denied.
    expect(decide(EMPTY_POLICY, ident({ name: "Terminal Velocity (game)", executable: "/usr/games/tv", desktopId: null, comm: "tv" })).decision).toBe("allow");
    expect(decide(EMPTY_POLICY, ident({ name: "kitty-cats", executable: "/usr/bin/kitty-cats", desktopId: null, comm: "kitty-cats" })).decision).toBe("allow");
  });

  it("assertAllowed throws POLICY_DENIED with source and rule", () => {
    try {
      assertAllowed(EMPTY_POLICY, ident({ executable: "/usr/bin/xterm" }), undefined, opts);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DeckhandError);
      expect((e as DeckhandError).code).toBe("POLICY_DENIED");
      expect((e as DeckhandError).details).toEqual({ source: "builtin", rule: "builtin:terminal:xterm" });
    }
    expect(assertAllowed(EMPTY_POLICY, ident(), undefined, opts).decision).toBe("allow");
  });
});

describe("privacy and security settings panes", () => {
  const gnomeSettings = ident({ executable: "/usr/bin/gnome-control-center", name: "Settings", desktopId: "org.gnome.Settings", comm: "gnome-control-c" });
  const macSettings = ident({ executable: "/System/Applications/System Settings.app/Contents/MacOS/System Settings", name: "System Settings", desktopId: "com.apple.systempreferences", comm: null });
  const kde = ident({ executable: "/usr/bin/systemsettings", name: "System Settings", desktopId: "systemsettings.desktop", comm: "systemsettings" });

  it("the settings app itself stays reachable", () => {
    expect(decide(EMPTY_POLICY, gnomeSettings).decision).toBe("allow");
    expect(decide(EMPTY_POLICY, gnomeSettings, { title: "Displays" }).decision).toBe("allow");
    expect(decide(EMPTY_POLICY, macSettings, { title: "Wi-Fi" }).decision).toBe("allow");
  });

  it.each(["Privacy & Security", "privacy & security", "PRIVACY", "Security", "Users & Groups", "Touch ID & Password", "Firewall", "Privacy\u200b & Security", "Sharing"])(
    "a settings app's %j pane is denied, whatever the case",
    (title) => {
      expect(decide(EMPTY_POLICY, gnomeSettings, { title })).toMatchObject({ decision: "deny", source: "builtin", rule: "builtin:privacy_pane:gnome-settings" });
      expect(decide(EMPTY_POLICY, kde, { title }).rule).toBe("builtin:privacy_pane:kde-systemsettings");
    },
  );

  it("a pane is recognised by identifier when the title is generic", () => {
    expect(decide(EMPTY_POLICY, macSettings, { title: "System Settings", identifier: "com.apple.settings.PrivacySecurity.extension" })).toMatchObject({
      decision: "deny",
      matchedBy: "window_identifier",
    });
    expect(decide(EMPTY_POLICY, macSettings, { title: "System Settings", identifier: "com.apple.Wi-Fi-Settings.extension" }).decision).toBe("allow");
  });

  it("a non-settings app titled like a privacy pane is neither denied nor allowed by that rule", () => {
    const spoof = ident({ executable: "/usr/bin/gedit", name: "Settings", desktopId: "org.gnome.gedit", comm: "gedit" });
    const d = decide(EMPTY_POLICY, spoof, { title: "Privacy & Security", identifier: "privacy" });
    expect(d).toEqual({ decision: "allow", source: "default", rule: "default:allow", matchedBy: "default" });
    // ... and it cannot make an app allowed that the policy denies.
    const policy = policyOf(`default = "deny"`, null);
    expect(decide(policy, spoof, { title: "Privacy & Security" })).toMatchObject({ decision: "deny", source: "admin" });
    expect(settingsApp(spoof)).toBeNull();
  });

  it("title words match whole words only", () => {
    expect(privacyPaneMatch({ title: "Insecurity report" })).toBeNull();
    expect(privacyPaneMatch({ title: "Superusers" })).toBeNull();
    expect(privacyPaneMatch({ title: "Security" })?.word).toBe("security");
  });
});

describe("policy layers", () => {
  const firefox = ident({ pid: 1, executable: "/usr/lib/firefox/firefox", name: "Firefox", desktopId: "firefox.desktop", comm: "firefox" });
  const gedit = ident();

  it("no policy: everything not built-in is allowed", () => {
    expect(decide(EMPTY_POLICY, firefox).decision).toBe("allow");
  });

  it("a user deny entry denies by id (executable basename or desktop id)", () => {
    const p = policyOf(null, `[[deny]]\nid = "FIREFOX"\n`);
    expect(decide(p, firefox)).toMatchObject({ decision: "deny", source: "user", rule: "user:deny[0]" });
    expect(decide(p, gedit).decision).toBe("allow");
  });

  it("deny entries also match comm and names; allow entries do not", () => {
    const renamed = ident({ executable: "/tmp/evil", name: "Firefox", desktopId: null, comm: "firefox" });
    expect(decide(policyOf(null, `[[deny]]\nid = "firefox"\n`), renamed).decision).toBe("deny");
    expect(decide(policyOf(null, `default = "deny"\n[[allow]]\nid = "firefox"\n`), renamed)).toMatchObject({ decision: "deny", rule: "user:default=deny" });
  });

  it("deny wins over allow in the same layer and across layers", () => {
    expect(decide(policyOf(null, `[[allow]]\nid = "firefox"\n[[deny]]\nid = "firefox"\n`), firefox).decision).toBe("deny");
    expect(decide(policyOf(`[[deny]]\nid = "firefox"\n`, `[[allow]]\nid = "firefox"\n`), firefox)).toMatchObject({ decision: "deny", source: "admin" });
    expect(decide(policyOf(`[[allow]]\nid = "firefox"\n`, `[[deny]]\nid = "firefox"\n`), firefox)).toMatchObject({ decision: "deny", source: "user" });
  });

  it("admin default deny: only admin allow entries can allow; the user file cannot widen", () => {
    const admin = `default = "deny"\n[[allow]]\nid = "org.gnome.gedit"\n`;
    const user = `default = "allow"\n[[allow]]\nid = "firefox"\n[[allow]]\npath = "/usr/lib/firefox/*"\n`;
    const p = policyOf(admin, user);
    expect(decide(p, firefox)).toMatchObject({ decision: "deny", source: "admin", rule: "admin:default=deny" });
    expect(decide(p, gedit)).toMatchObject({ decision: "allow", source: "admin", rule: "admin:allow[0]" });
  });

  it("user default deny: user allow entries decide, intersected with admin", () => {
    const user = `default = "deny"\n[[allow]]\nid = "firefox"\n`;
    expect(decide(policyOf(null, user), firefox)).toMatchObject({ decision: "allow", source: "user", rule: "user:allow[0]" });
    expect(decide(policyOf(null, user), gedit)).toMatchObject({ decision: "deny", source: "user", rule: "user:default=deny" });
    // Admin allows only gedit: the user's firefox allow cannot reach beyond it.
    const p = policyOf(`default = "deny"\n[[allow]]\nid = "org.gnome.gedit"\n`, user);
    expect(decide(p, firefox).decision).toBe("deny");
    expect(decide(p, gedit)).toMatchObject({ decision: "deny", source: "user" });
    const both = policyOf(`default = "deny"\n[[allow]]\nid = "firefox"\n`, user);
    expect(decide(both, firefox)).toMatchObject({ decision: "allow", source: "user" });
  });

  it("an allow entry whose path does not match the running executable does not allow", () => {
    const p = policyOf(`default = "deny"\n[[allow]]\npath = "/usr/lib/firefox/firefox"\n`, null);
    expect(decide(p, firefox).decision).toBe("allow");
    const impostor = ident({ executable: "/home/u/Downloads/firefox", name: "Firefox", desktopId: "firefox.desktop", comm: "firefox" });
    expect(decide(p, impostor)).toMatchObject({ decision: "deny", rule: "admin:default=deny" });
    expect(decide(p, { ...firefox, executable: null }).decision).toBe("deny");
    expect(decide(p, { ...firefox, executableDeleted: true }).decision).toBe("deny");
    // id and path together must both match.
    const both = policyOf(`default = "deny"\n[[allow]]\nid = "firefox"\npath = "/usr/lib/firefox/*"\n`, null);
    expect(decide(both, firefox).decision).toBe("allow");
    expect(decide(both, impostor).decision).toBe("deny");
  });

  it("paths are case-sensitive; Windows paths are not", () => {
    const p = policyOf(`[[deny]]\npath = "/opt/App/*"\n[[deny]]\npath = "C:\\\\Program Files\\\\Evil\\\\*"\n`, null);
    expect(decide(p, ident({ executable: "/opt/App/bin/app" })).decision).toBe("deny");
    expect(decide(p, ident({ executable: "/opt/app/bin/app" })).decision).toBe("allow");
    expect(decide(p, ident({ executable: "c:\\program files\\evil\\evil.exe" })).decision).toBe("deny");
  });

  it("window_title entries match only when the window is known", () => {
    const p = policyOf(null, `[[deny]]\nwindow_title = "*bank*"\n`);
    expect(decide(p, firefox).decision).toBe("allow");
    expect(decide(p, firefox, { title: "My BANK - Firefox" })).toMatchObject({ decision: "deny", rule: "user:deny[0]" });
  });

  it("name entries glob, case-insensitively", () => {
    const p = policyOf(null, `[[deny]]\nname = "fire*"\n`);
    expect(decide(p, firefox).decision).toBe("deny");
  });

  it("a broken admin layer denies everything", () => {
    const p = { admin: failClosedLayer("/etc/deckhand/policy.toml", "bad", 3), user: null };
    expect(decide(p, gedit)).toMatchObject({ decision: "deny", source: "admin", rule: "admin:broken" });
  });
});
