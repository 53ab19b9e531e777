// The op table of the macOS helper.

#if os(macOS)
import DeckhandWire

public enum MacOps {
    public static func all() -> [OpSpec] {
        var ops: [OpSpec] = [
            OpSpec("permissions", capability: "permissions", run: MacPermissions.run),
            OpSpec("list_apps", capability: "list_apps", run: MacListApps.run),
            OpSpec("list_windows", capability: "list_windows", run: MacListWindows.run),
            OpSpec("get_tree", capability: "get_tree", run: MacGetTree.run),
            OpSpec("screenshot", capability: "screenshot", run: MacScreenshot.run),
            OpSpec("hit_test", capability: "hit_test", run: MacHitTest.run),
            OpSpec("focused_element", capability: "focused_element", run: MacFocusedElement.run),
            OpSpec("watch_user_input", capability: "watch_user_input", run: MacWatch.run),
            OpSpec("settle", capability: "settle", run: MacSettle.run),
            OpSpec("element_action", mutates: true, route: .accessibility, capability: nil, run: MacElementAction.run),
            OpSpec("input", mutates: true, route: .foregroundInput, capability: nil, run: MacInput.run),
        ]
        ops += unsupported
        return ops
    }

    /// Ops of the protocol this helper does not implement: the dispatcher
    /// refuses them by capability (ACTION_UNSUPPORTED, mutations with a
    /// not_dispatched receipt) before `run` could be reached.
    static let unsupportedTable: [(name: String, mutates: Bool, route: Route, capability: String)] = [
        ("set_accessibility", false, .accessibility, "set_accessibility"),
        ("list_installed", false, .accessibility, "list_installed"),
        ("launch", true, .accessibility, "launch"),
        ("launch_status", false, .accessibility, "launch"),
        ("window_op", true, .accessibility, "window_op"),
        ("clipboard_get", false, .accessibility, "clipboard.get"),
        ("clipboard_set", false, .accessibility, "clipboard.set"),
        ("paste", true, .foregroundInput, "clipboard.paste"),
        ("menu_tree", false, .accessibility, "menu_tree"),
        ("menu_close", true, .accessibility, "menu_close"),
        ("point_click", true, .accessibility, "point_click"),
    ]

    static var unsupported: [OpSpec] {
        unsupportedTable.map { spec in
            OpSpec(spec.name, mutates: spec.mutates, route: spec.route, capability: spec.capability) { _ in
                throw HelperError(.actionUnsupported, "\(spec.name) is not implemented by the macOS helper")
            }
        }
    }
}
#endif
