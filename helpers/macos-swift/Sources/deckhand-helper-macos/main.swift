// deckhand-helper-macos: sends the hello, then reads request frames from
// stdin until EOF (then exits 0), answering on stdout; stderr is free-form.
// The main thread runs the main run loop (the user-input event tap lives
// there); frames are read on a thread of their own.

import DeckhandWire
import Foundation
#if os(macOS)
import AppKit
import DeckhandMac
#endif

func logLine(_ message: String) {
    FileHandle.standardError.write(("deckhand-helper-macos: " + message + "\n").data(using: .utf8) ?? Data())
}

#if os(macOS)
signal(SIGPIPE, SIG_IGN)
// ScreenCaptureKit aborts in a bare CLI (CGS_REQUIRE_INIT) unless
// CoreGraphics' connection is made first.
_ = CGMainDisplayID()
_ = NSApplication.shared
NSApplication.shared.setActivationPolicy(.prohibited)

let writer = FrameWriter(fd: 1)
let identity = HelperIdentity(name: MacCapabilities.helper, version: "0.1.0", platform: MacCapabilities.platform, backend: MacCapabilities.backend)
writer.send(Hello.message(identity: identity, capabilities: MacCapabilities.all, maxFrameBytes: Frame.maxFrameBytes))

let dispatcher = Dispatcher(ops: MacOps.all(), capabilities: MacCapabilities.all, send: { _ = writer.send($0) }, log: logLine)

let readerThread = Thread {
    let reader = FrameReader(input: FileDescriptorInput(fd: 0))
    while true {
        do {
            switch try reader.next() {
            case .message(let frame):
                dispatcher.handle(frame)
            case .oversized(let length, let id):
                dispatcher.refuseOversized(id: id, length: length, limit: Frame.maxFrameBytes)
            case .end:
                exit(0)
            }
        } catch {
            logLine("input: \(error); closing")
            exit(1)
        }
    }
}
readerThread.start()
CFRunLoopRun()
#else
logLine("this helper runs on macOS only (the wire library builds and tests everywhere)")
exit(2)
#endif
