// Which CG window layers are an app's windows. Pure.

public enum WindowLayers {
    /// kCGNormalWindowLevel.
    public static let normal = 0
    /// kCGPopUpMenuWindowLevel (open menus, combo box lists) and
    /// kCGStatusWindowLevel-free popups: listed with `popup: true`.
    public static let popups: Set<Int> = [101]

    public static func isListed(layer: Int) -> Bool { layer == normal || popups.contains(layer) }
    public static func isPopup(layer: Int) -> Bool { popups.contains(layer) }

    /// Bottom-to-top z indices for windows given front to back.
    public static func zIndices(frontToBackCount n: Int) -> [Int] { (0..<n).map { n - 1 - $0 } }
}
