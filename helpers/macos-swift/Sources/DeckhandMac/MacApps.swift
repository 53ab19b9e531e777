// list_apps: NSWorkspace's running apps (listed whether or not they have AX
// windows), plus any other process that owns a normal window.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire

enum ProcessInfoMac {
    static func executablePath(_ pid: pid_t) -> String? {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = proc_pidpath(pid, &buf, UInt32(buf.count))
        guard n > 0 else { return nil }
        return String(cString: buf)
    }

    static func name(_ pid: pid_t) -> String? {
        var buf = [CChar](repeating: 0, count: 256)
        let n = proc_name(pid, &buf, UInt32(buf.count))
        guard n > 0 else { return nil }
        return String(cString: buf)
    }

    /// The process start time in microseconds since the epoch (kinfo_proc
    /// p_starttime): a witness that the pid was not reused.
    static func startTime(_ pid: pid_t) -> UInt64? {
        var info = kinfo_proc()
        var size = MemoryLayout<kinfo_proc>.stride
        var mib: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, pid]
        guard sysctl(&mib, 4, &info, &size, nil, 0) == 0, size > 0, info.kp_proc.p_pid == pid else { return nil }
        let tv = info.kp_proc.p_un.__p_starttime
        guard tv.tv_sec >= 0 else { return nil }
        return UInt64(tv.tv_sec) * 1_000_000 + UInt64(max(0, tv.tv_usec))
    }

    /// The UI toolkit, when the bundle says so.
    static func toolkit(_ app: NSRunningApplication) -> String? {
        let id = app.bundleIdentifier ?? ""
        if id.hasPrefix("org.mozilla.") { return "firefox" }
        if id.hasPrefix("org.libreoffice.") { return "libreoffice" }
        if ["com.google.Chrome", "org.chromium.Chromium", "com.microsoft.edgemac", "com.brave.Browser", "com.vivaldi.Vivaldi"].contains(id) { return "chromium" }
        if let url = app.bundleURL {
            let electron = url.appendingPathComponent("Contents/Frameworks/Electron Framework.framework").path
            if FileManager.default.fileExists(atPath: electron) { return "electron" }
        }
        return nil
    }
}

enum MacListApps {
    static func run(_ ctx: OpContext) throws -> OpResult {
        let windows = CGWindows.all(onScreenOnly: true).filter { $0.layer == WindowLayers.normal }
        var windowCount: [pid_t: Int] = [:]
        for w in windows { if let p = w.pid { windowCount[p, default: 0] += 1 } }
        let trusted = AXIsProcessTrusted()
        var seen = Set<pid_t>()
        var apps: [MsgValue] = []

        func entry(pid: pid_t, name: String?, bundleId: String?, policyAllowsAX: Bool, toolkit: String?, fallbackExe: String?) -> MsgValue {
            let exe = ProcessInfoMac.executablePath(pid) ?? fallbackExe
            let deleted = exe.map { !FileManager.default.fileExists(atPath: $0) } ?? false
            let pname = ProcessInfoMac.name(pid)
            return .map([
                ("pid", .integer(Int64(pid))),
                ("name", .string(name ?? pname ?? "pid \(pid)")),
                ("executable", .optionalString(exe)),
                ("executable_deleted", .bool(deleted)),
                ("process_name", .optionalString(pname)),
                ("bundle_id", .optionalString(bundleId)),
                ("desktop_id", .null),
                ("accessible", .bool(trusted && policyAllowsAX)),
                ("start_time", .optionalInteger(ProcessInfoMac.startTime(pid))),
                ("window_count", .integer(windowCount[pid] ?? 0)),
                ("toolkit", .optionalString(toolkit)),
            ])
        }

        for app in NSWorkspace.shared.runningApplications {
            try ctx.deadline.check("list_apps")
            let pid = app.processIdentifier
            guard pid > 0, !app.isTerminated, seen.insert(pid).inserted else { continue }
            // Background-only (prohibited) processes have no AX application element.
            apps.append(entry(pid: pid, name: app.localizedName, bundleId: app.bundleIdentifier,
                              policyAllowsAX: app.activationPolicy != .prohibited, toolkit: ProcessInfoMac.toolkit(app),
                              fallbackExe: app.executableURL?.path))
        }
        for pid in windowCount.keys.sorted() where !seen.contains(pid) {
            seen.insert(pid)
            apps.append(entry(pid: pid, name: nil, bundleId: nil, policyAllowsAX: true, toolkit: nil, fallbackExe: nil))
        }
        return OpResult(.map([("apps", .array(apps))]))
    }
}
#endif
