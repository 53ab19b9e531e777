// Screen geometry. On macOS deckhand's "screen pixels" are global display
// points with the origin at the top-left of the main display (the space of
// kCGWindowBounds, AXPosition/AXSize and CGEvent locations); a screenshot's
// `scale` is image pixels per point (2 on a Retina display). Pure.

import DeckhandWire

public struct RectD: Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var isEmpty: Bool { !(width > 0 && height > 0) }

    public func contains(x px: Double, y py: Double) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }

    public func intersection(_ o: RectD) -> RectD? {
        let x0 = max(x, o.x), y0 = max(y, o.y)
        let x1 = min(maxX, o.maxX), y1 = min(maxY, o.maxY)
        guard x1 > x0, y1 > y0 else { return nil }
        return RectD(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public init(_ r: WireRect) {
        self.init(x: Double(r.x), y: Double(r.y), width: Double(r.width), height: Double(r.height))
    }

    /// Integer bounds for the wire: edges rounded to the nearest point, so
    /// adjacent rectangles stay adjacent; nil for non-finite input.
    public var wire: WireRect? {
        guard x.isFinite, y.isFinite, width.isFinite, height.isFinite,
              abs(x) < 1e12, abs(y) < 1e12, abs(width) < 1e12, abs(height) < 1e12 else { return nil }
        let x0 = x.rounded(), y0 = y.rounded()
        let x1 = (x + max(width, 0)).rounded(), y1 = (y + max(height, 0)).rounded()
        return WireRect(x: Int64(x0), y: Int64(y0), width: Int64(x1 - x0), height: Int64(y1 - y0))
    }
}

/// Integer rectangles in image pixels (top-left origin).
public struct PixelRect: Equatable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

public enum ImageGeometry {
    /// A screen rectangle in the pixels of an image whose top-left pixel
    /// shows `origin` at `scale` pixels per point: outward to whole pixels
    /// (a redaction must cover every pixel it touches), clipped to the image.
    public static func imageRect(of screen: RectD, originX: Double, originY: Double, scale: Double, imageWidth: Int, imageHeight: Int) -> PixelRect? {
        guard scale > 0, !screen.isEmpty else { return nil }
        let x0 = max(0, Int(((screen.x - originX) * scale).rounded(.down)))
        let y0 = max(0, Int(((screen.y - originY) * scale).rounded(.down)))
        let x1 = min(imageWidth, Int(((screen.maxX - originX) * scale).rounded(.up)))
        let y1 = min(imageHeight, Int(((screen.maxY - originY) * scale).rounded(.up)))
        guard x1 > x0, y1 > y0 else { return nil }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// `region` (screen) cropped from an image of `capture` (screen) at
    /// `scale`: the pixel rectangle to keep and the screen point its top-left
    /// pixel shows. nil when they do not overlap (INVALID_ARGUMENTS).
    public static func crop(region: RectD, capture: RectD, scale: Double, imageWidth: Int, imageHeight: Int) -> (pixels: PixelRect, originX: Double, originY: Double)? {
        guard let overlap = region.intersection(capture) else { return nil }
        // Inward to whole pixels so that every kept pixel lies in the region.
        let x0 = max(0, Int(((overlap.x - capture.x) * scale).rounded(.up)))
        let y0 = max(0, Int(((overlap.y - capture.y) * scale).rounded(.up)))
        let x1 = min(imageWidth, Int(((overlap.maxX - capture.x) * scale).rounded(.down)))
        let y1 = min(imageHeight, Int(((overlap.maxY - capture.y) * scale).rounded(.down)))
        guard x1 > x0, y1 > y0 else { return nil }
        return (PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0), capture.x + Double(x0) / scale, capture.y + Double(y0) / scale)
    }

    /// The size after scaling down to at most `maxWidth` (never up), one
    /// factor for both axes; the factor is exactly newWidth / width.
    public static func scaledSize(width: Int, height: Int, maxWidth: Int?) -> (width: Int, height: Int, factor: Double) {
        guard let mw = maxWidth, mw > 0, width > mw else { return (width, height, 1) }
        // Integer arithmetic: no float rounding at exact ratios (600 * 64 / 800 = 48).
        return (mw, max(1, height * mw / width), Double(mw) / Double(width))
    }
}

/// A global point inside a window's frame (the pointer guard, hit tests).
public func windowContains(_ bounds: RectD, x: Double, y: Double) -> Bool { bounds.contains(x: x, y: y) }
