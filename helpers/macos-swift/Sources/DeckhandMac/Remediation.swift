// What to tell the operator for each missing permission: the exact System
// Settings pane (and its URL). Pure, so every platform's build has the words.

public enum Remediation {
    static let who = "the app that starts deckhand (your terminal, IDE or agent host; or this helper's executable)"

    public static let accessibility =
        "open System Settings > Privacy & Security > Accessibility (x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility) and turn on \(who), then restart it"
    public static let screenRecording =
        "open System Settings > Privacy & Security > Screen & System Audio Recording (macOS 14: Screen Recording; x-apple.systempreferences:com.apple.preference.security?Privacy_ScreenCapture) and turn on \(who), then restart it"
    public static let inputMonitoring =
        "open System Settings > Privacy & Security > Input Monitoring (x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent) and turn on \(who), then restart it"
    public static let postEvents =
        "synthetic input needs Accessibility: open System Settings > Privacy & Security > Accessibility (x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility) and turn on \(who), then restart it"
    public static let display = "log in to a graphical session (deckhand needs a display); over SSH, run it from a logged-in user's session"
}
