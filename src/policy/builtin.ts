// The built-in deny list: apps no policy file can open to an agent, and the
// settings panes that guard privacy and security. Lists are data; the matching
// rule lives in decide.ts and is documented in docs/policy.md.
//
// All strings are lowercase. Executables are basenames without ".exe";
// desktop ids are without ".desktop" (macOS bundle ids and Windows AppUserModel
// ids go here too); names are exact application display / accessible names.

export type BuiltinCategory = "terminal" | "password_manager" | "keyring";

/** An app known by its identity keys. */
export type KnownApp = Readonly<{
  /** Stable key used in rule strings, e.g. `builtin:<category>:<key>`. */
  key: string;
  executables: readonly string[];
  desktopIds: readonly string[];
  names: readonly string[];
}>;

export type BuiltinApp = KnownApp & Readonly<{ category: BuiltinCategory }>;

const app = (
  category: BuiltinCategory,
  key: string,
  executables: string[],
  desktopIds: string[],
  names: string[],
): BuiltinApp => Object.freeze({ key, category, executables, desktopIds, names });

export const BUILTIN_DENY: readonly BuiltinApp[] = Object.freeze([
  // ------------------------------------------------------------ terminals
  app("terminal", "xterm", ["xterm", "uxterm", "koi8rxterm", "lxterm"], ["xterm", "debian-xterm", "debian-uxterm"], ["xterm", "uxterm"]),
  app("terminal", "gnome-terminal", ["gnome-terminal", "gnome-terminal-server", "gnome-terminal.real"], ["org.gnome.terminal", "gnome-terminal"], ["terminal", "gnome-terminal"]),
  app("terminal", "gnome-console", ["kgx"], ["org.gnome.console", "org.gnome.kgx"], ["gnome console"]),
  app("terminal", "ptyxis", ["ptyxis", "ptyxis-agent"], ["org.gnome.ptyxis", "app.devsuite.ptyxis"], ["ptyxis"]),
  app("terminal", "konsole", ["konsole"], ["org.kde.konsole", "konsole"], ["konsole"]),
  app("terminal", "yakuake", ["yakuake"], ["org.kde.yakuake"], ["yakuake"]),
  app("terminal", "xfce4-terminal", ["xfce4-terminal"], ["xfce4-terminal", "org.xfce.terminal"], ["xfce4-terminal"]),
  app("terminal", "mate-terminal", ["mate-terminal"], ["mate-terminal"], ["mate-terminal"]),
  app("terminal", "lxterminal", ["lxterminal", "qterminal"], ["lxterminal", "qterminal", "org.lxqt.qterminal"], ["lxterminal", "qterminal"]),
  app("terminal", "kitty", ["kitty"], ["kitty", "net.kovidgoyal.kitty"], ["kitty"]),
  app("terminal", "alacritty", ["alacritty"], ["alacritty", "org.alacritty.alacritty", "io.alacritty.alacritty"], ["alacritty"]),
  app("terminal", "wezterm", ["wezterm", "wezterm-gui", "wezterm-mux-server"], ["org.wezfurlong.wezterm", "com.github.wez.wezterm"], ["wezterm"]),
  app("terminal", "foot", ["foot", "footclient"], ["foot", "footclient", "org.codeberg.dnkl.foot", "org.codeberg.dnkl.footclient"], ["foot"]),
  app("terminal", "tilix", ["tilix"], ["com.gexperts.tilix"], ["tilix"]),
  app("terminal", "terminator", ["terminator"], ["terminator"], ["terminator"]),
  app("terminal", "terminology", ["terminology"], ["terminology"], ["terminology"]),
  app("terminal", "rxvt", ["rxvt", "urxvt", "urxvtd", "rxvt-unicode"], ["rxvt-unicode", "urxvt"], ["urxvt", "rxvt"]),
  app("terminal", "st", ["st"], ["st"], []),
  app("terminal", "guake", ["guake"], ["guake"], ["guake"]),
  app("terminal", "tilda", ["tilda"], ["tilda"], ["tilda"]),
  app("terminal", "cool-retro-term", ["cool-retro-term"], ["cool-retro-term"], ["cool-retro-term"]),
  app("terminal", "contour", ["contour"], ["org.contourterminal.contour"], ["contour"]),
  app("terminal", "rio", ["rio"], ["com.rioterm.rio"], []),
  app("terminal", "tabby", ["tabby"], ["org.tabby"], ["tabby"]),
  app("terminal", "hyper", ["hyper"], ["co.zeit.hyper"], ["hyper"]),
  app("terminal", "blackbox", ["blackbox-terminal"], ["com.raggesilver.blackbox"], ["black box"]),
  app("terminal", "windows-terminal", ["windowsterminal", "wt", "openconsole"], ["microsoft.windowsterminal_8wekyb3d8bbwe!app", "microsoft.windowsterminal"], ["windows terminal"]),
  app("terminal", "conhost", ["conhost"], [], ["console window host"]),
  app("terminal", "cmd", ["cmd"], [], ["command prompt"]),
  app("terminal", "powershell", ["powershell", "powershell_ise", "pwsh"], ["microsoft.powershell"], ["windows powershell", "powershell"]),
  app("terminal", "mintty", ["mintty"], [], ["mintty"]),
  app("terminal", "macos-terminal", ["terminal"], ["com.apple.terminal"], ["terminal"]),
  app("terminal", "iterm2", ["iterm2", "iterm"], ["com.googlecode.iterm2"], ["iterm2", "iterm"]),
  app("terminal", "warp", ["warp", "warp-terminal", "warp-terminal-preview"], ["dev.warp.warp-stable", "dev.warp.warp", "dev.warp.warp-preview"], ["warp"]),
  app("terminal", "ghostty", ["ghostty"], ["com.mitchellh.ghostty"], ["ghostty"]),
  // Debian's other x-terminal-emulator providers (a `recommends` install of
  // wl-clipboard brought zutty, which then was x-terminal-emulator: a
  // launch of it was not denied, 2026-12-03).
  app("terminal", "zutty", ["zutty"], ["zutty"], ["zutty"]),
  app("terminal", "sakura", ["sakura"], ["sakura"], ["sakura"]),
  app("terminal", "roxterm", ["roxterm"], ["roxterm"], ["roxterm"]),
  app("terminal", "mlterm", ["mlterm"], ["mlterm"], ["mlterm"]),
  app("terminal", "stterm", ["stterm"], ["stterm"], []),
  app("terminal", "eterm", ["eterm"], ["eterm"], ["eterm"]),
  app("terminal", "aterm", ["aterm"], ["aterm"], []),
  app("terminal", "pterm", ["pterm"], ["pterm"], ["pterm"]),
  app("terminal", "termit", ["termit"], ["termit"], ["termit"]),
  app("terminal", "lilyterm", ["lilyterm"], ["lilyterm"], ["lilyterm"]),
  app("terminal", "kterm", ["kterm"], ["kterm"], []),
  app("terminal", "deepin-terminal", ["deepin-terminal"], ["deepin-terminal", "org.deepin.terminal"], ["deepin terminal"]),
  app("terminal", "elementary-terminal", ["io.elementary.terminal"], ["io.elementary.terminal"], []),
  app("terminal", "cosmic-term", ["cosmic-term"], ["com.system76.cosmicterm"], ["cosmic terminal"]),
  // ---------------------------------------------------- password managers
  app("password_manager", "keepassxc", ["keepassxc"], ["org.keepassxc.keepassxc", "keepassxc"], ["keepassxc"]),
  app("password_manager", "keepass", ["keepass", "keepass2"], ["keepass2", "org.keepass.keepass"], ["keepass"]),
  app("password_manager", "1password", ["1password", "1password-browsersupport"], ["1password", "com.1password.1password", "com.agilebits.onepassword7", "com.1password.1password7"], ["1password", "1password 7"]),
  app("password_manager", "bitwarden", ["bitwarden"], ["bitwarden", "com.bitwarden.desktop"], ["bitwarden"]),
  app("password_manager", "enpass", ["enpass"], ["enpass", "in.sinew.enpass-desktop", "in.sinew.enpass-desktop.app"], ["enpass"]),
  app("password_manager", "dashlane", ["dashlane"], ["com.dashlane.dashlanephonefinal", "com.dashlane.dashlane"], ["dashlane"]),
  app("password_manager", "lastpass", ["lastpass"], ["com.lastpass.lastpass", "com.lastpass.lastpassmacdesktop"], ["lastpass"]),
  app("password_manager", "apple-passwords", ["passwords"], ["com.apple.passwords"], ["passwords"]),
  app("password_manager", "gnome-secrets", ["secrets", "gnome-passwordsafe"], ["org.gnome.world.secrets", "org.gnome.passwordsafe"], ["secrets"]),
  app("password_manager", "proton-pass", ["proton-pass", "proton pass"], ["me.proton.pass.electron", "proton-pass"], ["proton pass"]),
  app("password_manager", "keeper", ["keeperpasswordmanager", "keeper-password-manager"], ["com.keepersecurity.passwordmanager"], ["keeper password manager"]),
  app("password_manager", "qtpass", ["qtpass"], ["qtpass", "org.qtpass.qtpass"], ["qtpass"]),
  // ------------------------------------------------------------- keyrings
  app("keyring", "seahorse", ["seahorse"], ["org.gnome.seahorse.application", "seahorse"], ["seahorse", "passwords and keys"]),
  app("keyring", "keychain-access", ["keychain access"], ["com.apple.keychainaccess"], ["keychain access"]),
  app("keyring", "kwalletmanager", ["kwalletmanager", "kwalletmanager5", "kwalletmanager6"], ["org.kde.kwalletmanager5", "org.kde.kwalletmanager", "kwalletmanager5"], ["kwalletmanager", "kde wallet manager"]),
  app("keyring", "credential-manager", [], ["microsoft.credentialmanager"], ["credential manager"]),
]);

/**
 * OS settings apps. Only their privacy and security panes are denied (matched
 * by window title or identifier, see PRIVACY_PANE_*); the rest of each app
 * stays reachable. Matched by executable, comm or desktop id, never by display
 * name: a stranger's app named "Settings" is not a settings app.
 */
export type SettingsApp = Omit<KnownApp, "names">;

export const SETTINGS_APPS: readonly SettingsApp[] = Object.freeze([
  { key: "gnome-settings", executables: ["gnome-control-center", "budgie-control-center", "unity-control-center", "cinnamon-settings"], desktopIds: ["org.gnome.settings", "gnome-control-center", "org.buddiesofbudgie.controlcenter", "budgie-control-center", "unity-control-center", "cinnamon-settings"] },
  { key: "kde-systemsettings", executables: ["systemsettings", "systemsettings5", "systemsettings6", "kcmshell5", "kcmshell6", "kcmshell"], desktopIds: ["systemsettings", "org.kde.systemsettings", "kcm_users", "kcm_kwallet5"] },
  { key: "xfce-settings", executables: ["xfce4-settings-manager"], desktopIds: ["xfce-settings-manager", "xfce4-settings-manager"] },
  { key: "mate-settings", executables: ["mate-control-center"], desktopIds: ["matecc", "mate-control-center"] },
  { key: "lxqt-settings", executables: ["lxqt-config"], desktopIds: ["lxqt-config"] },
  { key: "macos-system-settings", executables: ["system settings", "system preferences"], desktopIds: ["com.apple.systempreferences", "com.apple.settings"] },
  { key: "windows-settings", executables: ["systemsettings", "securityhealthhost", "securityhealthui"], desktopIds: ["windows.immersivecontrolpanel_cw5n1h2txyewy!microsoft.windows.immersivecontrolpanel", "microsoft.windows.immersivecontrolpanel", "microsoft.windows.sechealthui_8wekyb3d8bbwe!sechealthui"] },
  { key: "windows-control-panel", executables: ["control"], desktopIds: ["microsoft.windows.controlpanel"] },
] as SettingsApp[]);

/**
 * A settings app's window whose title contains one of these as a whole word
 * (case-insensitive) shows a privacy or security pane.
 */
export const PRIVACY_PANE_TITLE_WORDS: readonly string[] = Object.freeze([
  "privacy",
  "security",
  "password",
  "passwords",
  "users",
  "touch id",
  "face id",
  "firewall",
  "lock screen",
  "screen lock",
  "wallet",
  "login items",
  "sharing",
  "remote desktop",
  "remote login",
  "online accounts",
  "internet accounts",
  "defender",
]);

/**
 * A settings app's window (or pane) identifier containing one of these
 * (case-insensitive substring: identifiers are camelCase or dotted, e.g.
 * com.apple.settings.PrivacySecurity.extension, ms-settings:privacy-webcam).
 */
export const PRIVACY_PANE_IDENTIFIER_PARTS: readonly string[] = Object.freeze([
  "privacy",
  "security",
  "password",
  "users",
  "touchid",
  "touch-id",
  "firewall",
  "lockscreen",
  "lock-screen",
  "wallet",
  "loginitems",
  "sharing",
  "remote-desktop",
  "remotedesktop",
  "online-accounts",
  "onlineaccounts",
  "internetaccounts",
  "defender",
]);

/**
 * Browsers whose page URL deckhand reads from the accessibility tree to apply
 * `blocked_urls`. Matched like the built-in deny list (executable, comm,
 * desktop id, name).
 */
export const BROWSERS: readonly KnownApp[] = Object.freeze(
  (
    [
      ["firefox", ["firefox", "firefox-bin", "firefox-esr", "firefox-developer-edition", "firefox-nightly"], ["firefox", "firefox-esr", "org.mozilla.firefox", "org.mozilla.firefoxdeveloperedition", "org.mozilla.nightly"], ["firefox", "mozilla firefox"]],
      ["librewolf", ["librewolf"], ["librewolf", "io.gitlab.librewolf-community", "org.mozilla.librewolf"], ["librewolf"]],
      ["waterfox", ["waterfox"], ["waterfox", "net.waterfox.waterfox"], ["waterfox"]],
      ["floorp", ["floorp"], ["floorp", "one.ablaze.floorp"], ["floorp"]],
      ["zen", ["zen", "zen-bin"], ["zen", "app.zen_browser.zen", "app.zen-browser.zen"], ["zen browser"]],
      ["tor-browser", ["tor-browser", "torbrowser"], ["torbrowser", "org.torproject.torbrowser", "org.torproject.torbrowser-launcher"], ["tor browser"]],
      ["chromium", ["chromium", "chromium-browser", "chromium-freeworld"], ["chromium", "chromium-browser", "org.chromium.chromium"], ["chromium"]],
      ["chrome", ["chrome", "google-chrome", "google-chrome-stable", "google-chrome-beta", "google-chrome-unstable", "google chrome"], ["google-chrome", "google-chrome-beta", "google-chrome-unstable", "com.google.chrome", "com.google.chrome.beta", "com.google.chrome.canary"], ["google chrome", "chrome"]],
      ["epiphany", ["epiphany", "epiphany-browser"], ["org.gnome.epiphany", "epiphany", "epiphany-browser"], ["epiphany", "web"]],
      ["brave", ["brave", "brave-browser", "brave browser"], ["brave-browser", "com.brave.browser"], ["brave", "brave browser"]],
      ["edge", ["msedge", "microsoft-edge", "microsoft-edge-stable", "microsoft edge"], ["microsoft-edge", "com.microsoft.edge", "com.microsoft.edgemac", "msedge"], ["microsoft edge"]],
      ["vivaldi", ["vivaldi", "vivaldi-bin", "vivaldi-stable"], ["vivaldi-stable", "com.vivaldi.vivaldi"], ["vivaldi"]],
      ["opera", ["opera", "opera-stable"], ["opera", "com.opera.opera", "com.operasoftware.opera"], ["opera"]],
      ["safari", ["safari"], ["com.apple.safari", "com.apple.safaritechnologypreview"], ["safari"]],
      ["arc", ["arc"], ["company.thebrowser.browser"], ["arc"]],
      ["falkon", ["falkon"], ["org.kde.falkon"], ["falkon"]],
      ["konqueror", ["konqueror"], ["org.kde.konqueror"], ["konqueror"]],
      ["midori", ["midori"], ["org.midori_browser.midori", "midori"], ["midori"]],
      ["qutebrowser", ["qutebrowser"], ["org.qutebrowser.qutebrowser"], ["qutebrowser"]],
      ["yandex", ["yandex_browser", "yandex-browser"], ["yandex-browser", "ru.yandex.desktop.yandex-browser"], ["yandex browser"]],
    ] as [string, string[], string[], string[]][]
  ).map(([key, executables, desktopIds, names]) => Object.freeze({ key, executables, desktopIds, names })),
);
