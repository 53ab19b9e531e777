// screenshot: ScreenCaptureKit single-window capture (a covered window
// gives its own pixels) or the main display for window_id 0; secure fields
// found by a bounded AX walk are blacked out (a walk that cannot finish
// fails the screenshot rather than leak); then region crop, scaling, and
// PNG/JPEG encoding by ImageIO into a 0600 file renamed into place.

#if os(macOS)
import AppKit
import ApplicationServices
import DeckhandWire
import ImageIO
@preconcurrency import ScreenCaptureKit

/// Carries an async result back to a synchronous op.
final class AsyncBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, Error>?

    func set(_ r: Result<T, Error>) {
        lock.lock()
        result = r
        lock.unlock()
    }

    func get() -> Result<T, Error>? {
        lock.lock()
        defer { lock.unlock() }
        return result
    }
}

/// Runs async work and waits for it until the deadline (TIMEOUT after).
func awaitWithin<T>(_ deadline: Deadline, _ what: String, _ body: @escaping () async throws -> T) throws -> T {
    let box = AsyncBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    if done.wait(timeout: .now() + .nanoseconds(Int(min(deadline.remainingNs, UInt64(Int.max))))) == .timedOut {
        throw HelperError(.timeout, "\(what) did not finish before the deadline")
    }
    guard let r = box.get() else { throw HelperError(.internalError, "\(what) finished without a result") }
    return try r.get()
}

struct Capture {
    var image: CGImage
    /// The screen rectangle (points) the image shows.
    var screen: RectD
    var method: String
}

enum SecureFields {
    /// Frames of every secure text field in `window` that intersects
    /// `visible`. Subtrees whose frame lies wholly outside `visible` are not
    /// walked. Throws SCREENSHOT_FAILED when the walk cannot finish.
    static func find(in window: AXUIElement, visible: RectD, session s: AXSession, maxNodes: Int = 20_000) throws -> [RectD] {
        var found: [RectD] = []
        var stack: [(AXUIElement, Int)] = [(window, 0)]
        var visited = 0
        while let item = stack.popLast() {
            let (e, depth) = item
            visited += 1
            if visited > maxNodes || s.exhausted {
                throw HelperError(.screenshotFailed, "the search for secure fields to redact could not finish (\(visited) elements, \(s.calls) calls); refusing to capture unredacted pixels",
                                  details: [("reason", .string("secure-search-incomplete"))])
            }
            s.prepare(e)
            let (err, v) = s.copyMultiple(e, [AXAttr.role, AXAttr.subrole, AXAttr.position, AXAttr.size])
            guard err == .success, v.count == 4 else {
                if depth == 0 { throw HelperError(.screenshotFailed, "the window could not be read for secure fields (AXError \(err.rawValue))", details: [("reason", .string("secure-search-failed"))]) }
                continue
            }
            var frame: RectD?
            if let p = v[2].flatMap(AXCF.point), let sz = v[3].flatMap(AXCF.size) {
                frame = RectD(x: Double(p.x), y: Double(p.y), width: Double(sz.width), height: Double(sz.height))
            }
            let axRole = v[0].flatMap(AXCF.string) ?? ""
            if NodeReader.isSecure(axRole: axRole, subrole: v[1].flatMap(AXCF.string)) {
                guard let f = frame else {
                    throw HelperError(.screenshotFailed, "a secure field has no frame to black out", details: [("reason", .string("secure-field-no-bounds"))])
                }
                if f.intersection(visible) != nil { found.append(f) }
                continue
            }
            if let f = frame, !f.isEmpty, f.intersection(visible) == nil, depth > 0 { continue }
            if depth >= 128 { continue }
            let (cerr, n) = s.childCount(e)
            guard cerr == .success, n > 0 else { continue }
            var from = 0
            while from < n {
                let (kerr, kids) = s.children(e, from: from, max: min(512, n - from))
                guard kerr == .success, !kids.isEmpty else { break }
                for k in kids.reversed() { stack.append((k, depth + 1)) }
                from += kids.count
                if s.exhausted { break }
            }
        }
        return found
    }
}

enum MacScreenshot {
    static func capture(windowID: UInt64, deadline: Deadline) throws -> Capture {
        if windowID == 0 {
            let displayID = CGMainDisplayID()
            let b = CGDisplayBounds(displayID)
            let image: CGImage = try awaitWithin(deadline, "the screen capture") {
                let content = try await SCShareableContent.excludingDesktopWindows(false, onScreenWindowsOnly: true)
                guard let display = content.displays.first(where: { $0.displayID == displayID }) ?? content.displays.first else {
                    throw HelperError(.screenshotFailed, "ScreenCaptureKit lists no display")
                }
                let filter = SCContentFilter(display: display, excludingWindows: [])
                let config = SCStreamConfiguration()
                let scale = Double(filter.pointPixelScale)
                config.width = max(1, Int((Double(filter.contentRect.width) * scale).rounded()))
                config.height = max(1, Int((Double(filter.contentRect.height) * scale).rounded()))
                config.showsCursor = false
                config.captureResolution = .best
                return try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: config)
            }
            return Capture(image: image, screen: RectD(x: Double(b.origin.x), y: Double(b.origin.y), width: Double(b.width), height: Double(b.height)),
                           method: "screencapturekit-display")
        }
        guard windowID <= UInt64(UInt32.max), let cg = CGWindows.info(CGWindowID(windowID)) else {
            throw HelperError(.windowNotFound, "no window \(windowID)", details: [("window_id", .uint(windowID))])
        }
        let wid = CGWindowID(windowID)
        let image: CGImage = try awaitWithin(deadline, "the window capture") {
            let content = try await SCShareableContent.excludingDesktopWindows(false, onScreenWindowsOnly: false)
            guard let window = content.windows.first(where: { $0.windowID == wid }) else {
                throw HelperError(.windowNotFound, "ScreenCaptureKit does not list window \(wid)", details: [("window_id", .integer(wid))])
            }
            let filter = SCContentFilter(desktopIndependentWindow: window)
            let config = SCStreamConfiguration()
            let scale = Double(filter.pointPixelScale)
            config.width = max(1, Int((Double(filter.contentRect.width) * scale).rounded()))
            config.height = max(1, Int((Double(filter.contentRect.height) * scale).rounded()))
            config.showsCursor = false
            config.captureResolution = .best
            config.ignoreShadowsSingleWindow = true
            return try await SCScreenshotManager.captureImage(contentFilter: filter, configuration: config)
        }
        return Capture(image: image, screen: cg.bounds, method: "screencapturekit-window")
    }

    /// A ScreenCaptureKit error as the protocol's: the user declined
    /// (no Screen Recording grant) is PERMISSION_DENIED, anything else
    /// SCREENSHOT_FAILED with the framework's domain and code.
    static func captureFailure(_ error: Error) -> HelperError {
        let ns = error as NSError
        let details: [(String, MsgValue)] = [("domain", .string(ns.domain)), ("code", .integer(ns.code))]
        if ns.domain == SCStreamErrorDomain && ns.code == SCStreamError.Code.userDeclined.rawValue {
            return HelperError(.permissionDenied, "screen recording was declined: \(Remediation.screenRecording)", details: details)
        }
        return HelperError(.screenshotFailed, "ScreenCaptureKit: \(ns.localizedDescription)", details: details)
    }

    /// Secure-field frames to black out: of the window, or of every
    /// on-screen window with a pid for the screen.
    static func secureFrames(windowID: UInt64, capture: RectD, deadline: Deadline) throws -> [RectD] {
        guard AXIsProcessTrusted() else {
            throw HelperError(.permissionDenied, "redact_secure needs accessibility access to find secure fields: \(Remediation.accessibility)",
                              details: [("reason", .string("secure-search-needs-accessibility"))])
        }
        let s = AXSession(deadline: deadline, perCallMax: 1.0)
        var targets: [(pid_t, CGWindowID)] = []
        if windowID != 0 {
            guard let cg = CGWindows.info(CGWindowID(windowID)), let pid = cg.pid else {
                throw HelperError(.screenshotFailed, "the owner of window \(windowID) is unknown: its secure fields cannot be found", details: [("reason", .string("unknown-owner"))])
            }
            targets = [(pid, cg.id)]
        } else {
            targets = CGWindows.all(onScreenOnly: true).filter { $0.layer == WindowLayers.normal && $0.bounds.intersection(capture) != nil }
                .compactMap { w in w.pid.map { ($0, w.id) } }
        }
        var frames: [RectD] = []
        var axByPid: [pid_t: (AXError, [CGWindowID: AXWindowInfo])] = [:]
        let cgAll = CGWindows.all(onScreenOnly: false)
        for (pid, wid) in targets {
            if axByPid[pid] == nil { axByPid[pid] = AXTargets.windows(pid: pid, session: s, cg: cgAll) }
            let (err, map) = axByPid[pid]!
            guard let w = map[wid] else {
                // An app that does not answer AX at all has no fields to find
                // (and no way to find them); one that answers but does not
                // list this window might hide one: fail.
                if windowID == 0 && (err == .cannotComplete || err == .notImplemented || err == .apiDisabled || err == .attributeUnsupported) {
                    FileHandle.standardError.write("deckhand-helper-macos: screenshot: pid \(pid) does not answer AX (\(err.rawValue)); window \(wid) not searched for secure fields\n".data(using: .utf8)!)
                    continue
                }
                throw HelperError(.screenshotFailed, "window \(wid) of pid \(pid) is not found through accessibility: its secure fields cannot be redacted",
                                  details: [("reason", .string("secure-search-no-window")), ("window_id", .integer(wid))])
            }
            frames += try SecureFields.find(in: w.element, visible: capture, session: s)
        }
        return frames
    }

    static func run(_ ctx: OpContext) throws -> OpResult {
        let a = ctx.args
        let windowID = try a.uint("window_id")
        let path = try a.string("path")
        guard path.hasPrefix("/") else { throw HelperError.invalidArguments("args.path must be absolute") }
        let redactSecure = try a.bool("redact_secure", default: true)
        var redact: [RectD] = []
        let redactValues = a.value["redact"]?.arrayValue ?? []
        for r in redactValues { redact.append(RectD(try WireRect(r, field: "args.redact[]"))) }
        var region: RectD?
        if let r = try a.optionalMap("region") { region = RectD(try WireRect(r.value, field: "args.region")) }
        let maxWidth = try a.optionalUInt("max_width")
        if let mw = maxWidth, mw < 16 { throw HelperError.invalidArguments("args.max_width must be at least 16") }
        let format = try a.optionalString("format") ?? "png"
        guard ["png", "jpeg", "webp"].contains(format) else { throw HelperError.invalidArguments("args.format must be png, jpeg or webp") }
        if format == "webp" {
            throw HelperError(.actionUnsupported, "this helper cannot write WebP (ImageIO has no WebP encoder); ask for png or jpeg",
                              details: [("reason", .string("webp-encoder-unavailable"))])
        }
        let quality = try a.optionalUInt("quality") ?? 80
        guard (1...100).contains(quality) else { throw HelperError.invalidArguments("args.quality must be 1-100") }

        guard CGPreflightScreenCaptureAccess() else {
            throw HelperError(.permissionDenied, "screen recording is not granted: \(Remediation.screenRecording)", details: [("permission", .string("screen_capture"))])
        }
        if redactSecure && !AXIsProcessTrusted() {
            throw HelperError(.permissionDenied, "redact_secure needs accessibility access to find secure fields: \(Remediation.accessibility)",
                              details: [("reason", .string("secure-search-needs-accessibility"))])
        }
        let cap: Capture
        do {
            cap = try capture(windowID: windowID, deadline: ctx.deadline)
        } catch let e as HelperError {
            throw e
        } catch {
            throw captureFailure(error)
        }
        let imgW = cap.image.width, imgH = cap.image.height
        guard imgW > 0, imgH > 0, cap.screen.width > 0 else { throw HelperError(.screenshotFailed, "the capture is empty") }
        let scale = Double(imgW) / cap.screen.width

        var blackouts = redact
        if redactSecure { blackouts += try secureFrames(windowID: windowID, capture: cap.screen, deadline: ctx.deadline) }
        let pixelRects = blackouts.compactMap {
            ImageGeometry.imageRect(of: $0, originX: cap.screen.x, originY: cap.screen.y, scale: scale, imageWidth: imgW, imageHeight: imgH)
        }

        var keep = PixelRect(x: 0, y: 0, width: imgW, height: imgH)
        var originX = cap.screen.x, originY = cap.screen.y
        if let r = region {
            guard let c = ImageGeometry.crop(region: r, capture: cap.screen, scale: scale, imageWidth: imgW, imageHeight: imgH) else {
                throw HelperError.invalidArguments("args.region does not overlap the captured area")
            }
            keep = c.pixels
            originX = c.originX
            originY = c.originY
        }
        let out = ImageGeometry.scaledSize(width: keep.width, height: keep.height, maxWidth: maxWidth.map { Int(min($0, 1 << 20)) })
        guard let finalImage = ImageOps.render(cap.image, blackouts: pixelRects, keep: keep, outWidth: out.width, outHeight: out.height) else {
            throw HelperError(.screenshotFailed, "the image could not be redacted/cropped/scaled")
        }
        try ImageOps.write(finalImage, to: path, format: format, quality: Int(quality))
        try ctx.deadline.check("screenshot")
        var result: [(String, MsgValue)] = [
            ("path", .string(path)), ("width", .integer(finalImage.width)), ("height", .integer(finalImage.height)),
            ("origin", .map([("x", .integer(Int64(originX.rounded()))), ("y", .integer(Int64(originY.rounded())))])),
            ("scale", .float(scale * out.factor)), ("method", .string(cap.method)), ("redacted", .integer(pixelRects.count)),
            ("popups", .integer(0)),
        ]
        result.append(("format", .string(format)))
        return OpResult(.map(result))
    }
}

enum ImageOps {
    /// Black rectangles (image pixels, top-left origin), then the kept
    /// rectangle, scaled to the output size.
    static func render(_ image: CGImage, blackouts: [PixelRect], keep: PixelRect, outWidth: Int, outHeight: Int) -> CGImage? {
        let w = image.width, h = image.height
        guard let space = CGColorSpace(name: CGColorSpace.sRGB),
              let ctx = CGContext(data: nil, width: w, height: h, bitsPerComponent: 8, bytesPerRow: 0, space: space,
                                  bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue) else { return nil }
        ctx.draw(image, in: CGRect(x: 0, y: 0, width: w, height: h))
        ctx.setFillColor(CGColor(red: 0, green: 0, blue: 0, alpha: 1))
        for r in blackouts {
            // CGContext's origin is bottom-left.
            ctx.fill(CGRect(x: r.x, y: h - r.y - r.height, width: r.width, height: r.height))
        }
        guard var img = ctx.makeImage() else { return nil }
        if keep.x != 0 || keep.y != 0 || keep.width != w || keep.height != h {
            // CGImage cropping rectangles are top-left based.
            guard let c = img.cropping(to: CGRect(x: keep.x, y: keep.y, width: keep.width, height: keep.height)) else { return nil }
            img = c
        }
        if outWidth != img.width || outHeight != img.height {
            guard let sctx = CGContext(data: nil, width: outWidth, height: outHeight, bitsPerComponent: 8, bytesPerRow: 0, space: space,
                                       bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue) else { return nil }
            sctx.interpolationQuality = .high
            sctx.draw(img, in: CGRect(x: 0, y: 0, width: outWidth, height: outHeight))
            guard let s = sctx.makeImage() else { return nil }
            img = s
        }
        return img
    }

    /// Encodes and writes atomically: a 0600 temporary file in the same
    /// directory, then rename(2).
    static func write(_ image: CGImage, to path: String, format: String, quality: Int) throws {
        let data = NSMutableData()
        let type = format == "jpeg" ? "public.jpeg" : "public.png"
        guard let dest = CGImageDestinationCreateWithData(data as CFMutableData, type as CFString, 1, nil) else {
            throw HelperError(.screenshotFailed, "ImageIO cannot write \(format)")
        }
        let props: [CFString: Any] = format == "jpeg" ? [kCGImageDestinationLossyCompressionQuality: Double(quality) / 100] : [:]
        CGImageDestinationAddImage(dest, image, props as CFDictionary)
        guard CGImageDestinationFinalize(dest) else { throw HelperError(.screenshotFailed, "ImageIO could not encode the image") }
        let dir = (path as NSString).deletingLastPathComponent
        let tmp = (dir as NSString).appendingPathComponent(".deckhand-shot-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp")
        guard FileManager.default.createFile(atPath: tmp, contents: data as Data, attributes: [.posixPermissions: 0o600]) else {
            throw HelperError(.screenshotFailed, "cannot write \(tmp)", details: [("path", .string(path))])
        }
        chmod(tmp, 0o600)
        guard rename(tmp, path) == 0 else {
            let e = errno
            unlink(tmp)
            throw HelperError(.screenshotFailed, "cannot rename the screenshot into \(path) (errno \(e))", details: [("path", .string(path))])
        }
    }
}
#endif
