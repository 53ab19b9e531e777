// Key names, locators, geometry, text offsets and input step parsing.

import DeckhandMac
import DeckhandWire
import XCTest

final class KeyTableTests: XCTestCase {
    func testNamedKeys() {
        XCTAssertEqual(KeyTable.lookup("Return"), .code(0x24, shift: false))
        XCTAssertEqual(KeyTable.lookup("BackSpace"), .code(0x33, shift: false))
        XCTAssertEqual(KeyTable.lookup("Delete"), .code(0x75, shift: false))
        XCTAssertEqual(KeyTable.lookup("Page_Up"), .code(0x74, shift: false))
        XCTAssertEqual(KeyTable.lookup("Escape"), .code(0x35, shift: false))
        XCTAssertEqual(KeyTable.lookup("F1"), .code(0x7A, shift: false))
        XCTAssertEqual(KeyTable.lookup("F12"), .code(0x6F, shift: false))
        XCTAssertEqual(KeyTable.lookup("Left"), .code(0x7B, shift: false))
        XCTAssertEqual(KeyTable.lookup("Caps_Lock"), .code(0x39, shift: false))
        XCTAssertEqual(KeyTable.lookup("Print"), .code(0x69, shift: false))
        XCTAssertEqual(KeyTable.lookup("KP_Enter"), .code(0x4C, shift: false))
        XCTAssertNil(KeyTable.lookup("F24"))  // no such key on a Mac
        XCTAssertNil(KeyTable.lookup("Menu"))
        XCTAssertNil(KeyTable.lookup("NoSuchKey"))
    }

    func testModifiers() {
        XCTAssertEqual(KeyTable.lookup("ctrl"), .modifier(0x3B, .control))
        XCTAssertEqual(KeyTable.lookup("alt"), .modifier(0x3A, .option))
        XCTAssertEqual(KeyTable.lookup("shift"), .modifier(0x38, .shift))
        XCTAssertEqual(KeyTable.lookup("super"), .modifier(0x37, .command))
        XCTAssertEqual(KeyTable.lookup("cmd"), .modifier(0x37, .command))
        XCTAssertEqual(KeyModifier.command.flag, 0x10_0000)
        XCTAssertEqual(KeyModifier.shift.flag, 0x2_0000)
    }

    func testCharacters() {
        XCTAssertEqual(KeyTable.lookup("a"), .code(0x00, shift: false))
        XCTAssertEqual(KeyTable.lookup("A"), .code(0x00, shift: true))
        XCTAssertEqual(KeyTable.lookup("1"), .code(0x12, shift: false))
        XCTAssertEqual(KeyTable.lookup("!"), .code(0x12, shift: true))
        XCTAssertEqual(KeyTable.lookup("plus"), .code(0x18, shift: true))
        XCTAssertEqual(KeyTable.lookup("minus"), .code(0x1B, shift: false))
        XCTAssertEqual(KeyTable.lookup("space"), .code(0x31, shift: false))
        XCTAssertEqual(KeyTable.lookup("é"), .unicode("é"))
        XCTAssertEqual(KeyTable.lookup("€"), .unicode("€"))
    }
}

final class LocatorTests: XCTestCase {
    func testParseAndMatch() throws {
        let v = MsgValue.map([("path", .array([.uint(0), .uint(3)])), ("role", .string("button")), ("native_role", .string("AXButton")),
                              ("name", .string("OK")), ("identifier", .string("")), ("future", .bool(true))])
        let l = try Locator(v)
        XCTAssertEqual(l.path, [0, 3])
        XCTAssertTrue(l.matches(.init(role: "button", nativeRole: "AXButton", name: "OK", identifier: "")))
        XCTAssertFalse(l.matches(.init(role: "button", nativeRole: "AXButton:AXCloseButton", name: "OK", identifier: "")))
        XCTAssertEqual(l.mismatch(.init(role: "button", nativeRole: "AXButton", name: "Cancel", identifier: "")), "name")
        XCTAssertEqual(l.mismatch(.init(role: "button", nativeRole: "AXButton", name: "OK", identifier: "x")), "identifier")
    }

    func testNeutralRoleWhenNoNativeRole() throws {
        let l = Locator(path: [], role: "window", nativeRole: "", name: "Doc", identifier: "")
        XCTAssertTrue(l.matches(.init(role: "window", nativeRole: "AXWindow:AXStandardWindow", name: "Doc", identifier: "")))
        XCTAssertFalse(l.matches(.init(role: "dialog", nativeRole: "AXWindow:AXDialog", name: "Doc", identifier: "")))
    }

    func testMalformedLocatorsAreInvalidArguments() {
        XCTAssertThrowsError(try Locator(.map([("path", .string("0/1"))])))
        XCTAssertThrowsError(try Locator(.map([("path", .array([.int(-1)]))])))
        XCTAssertThrowsError(try Locator(.map([("path", .array(Array(repeating: .uint(0), count: 600)))])))
    }
}

final class GeometryTests: XCTestCase {
    func testWireBoundsRoundEdges() {
        XCTAssertEqual(RectD(x: 10.4, y: 20.6, width: 100.2, height: 50).wire, WireRect(x: 10, y: 21, width: 101, height: 50))
        XCTAssertEqual(RectD(x: -5, y: 0, width: 10, height: 10).wire, WireRect(x: -5, y: 0, width: 10, height: 10))
        XCTAssertNil(RectD(x: .nan, y: 0, width: 1, height: 1).wire)
    }

    func testRedactionRectsCoverTouchedPixelsAndClip() {
        // A 2x capture of the window at (100, 50).
        let r = ImageGeometry.imageRect(of: RectD(x: 110.5, y: 60, width: 10, height: 5), originX: 100, originY: 50, scale: 2, imageWidth: 400, imageHeight: 300)
        XCTAssertEqual(r, PixelRect(x: 21, y: 20, width: 20, height: 10))
        let clipped = ImageGeometry.imageRect(of: RectD(x: 0, y: 0, width: 120, height: 60), originX: 100, originY: 50, scale: 2, imageWidth: 400, imageHeight: 300)
        XCTAssertEqual(clipped, PixelRect(x: 0, y: 0, width: 40, height: 20))
        XCTAssertNil(ImageGeometry.imageRect(of: RectD(x: 0, y: 0, width: 10, height: 10), originX: 100, originY: 50, scale: 2, imageWidth: 400, imageHeight: 300))
    }

    func testCropGivesPixelsAndOrigin() {
        let c = ImageGeometry.crop(region: RectD(x: 150, y: 0, width: 100, height: 100), capture: RectD(x: 100, y: 50, width: 200, height: 150),
                                   scale: 2, imageWidth: 400, imageHeight: 300)
        XCTAssertEqual(c?.pixels, PixelRect(x: 100, y: 0, width: 200, height: 100))
        XCTAssertEqual(c?.originX, 150)
        XCTAssertEqual(c?.originY, 50)
        XCTAssertNil(ImageGeometry.crop(region: RectD(x: 0, y: 0, width: 10, height: 10), capture: RectD(x: 100, y: 50, width: 200, height: 150),
                                        scale: 2, imageWidth: 400, imageHeight: 300))
    }

    func testScaleDownNeverUp() {
        let s = ImageGeometry.scaledSize(width: 800, height: 600, maxWidth: 64)
        XCTAssertEqual(s.width, 64)
        XCTAssertEqual(s.height, 48)
        XCTAssertEqual(s.factor, 0.08, accuracy: 1e-12)
        XCTAssertEqual(ImageGeometry.scaledSize(width: 50, height: 40, maxWidth: 64).width, 50)
        XCTAssertEqual(ImageGeometry.scaledSize(width: 50, height: 40, maxWidth: nil).factor, 1)
    }

    func testWindowLayersAndZOrder() {
        XCTAssertTrue(WindowLayers.isListed(layer: 0))
        XCTAssertTrue(WindowLayers.isPopup(layer: 101))
        XCTAssertFalse(WindowLayers.isListed(layer: 25))
        XCTAssertEqual(WindowLayers.zIndices(frontToBackCount: 3), [2, 1, 0])
    }
}

final class TextOffsetTests: XCTestCase {
    func testScalarToUTF16() {
        let t = "a😀b"
        XCTAssertEqual(TextOffsets.utf16Offset(in: t, scalarOffset: 0), 0)
        XCTAssertEqual(TextOffsets.utf16Offset(in: t, scalarOffset: 1), 1)
        XCTAssertEqual(TextOffsets.utf16Offset(in: t, scalarOffset: 2), 3)
        XCTAssertEqual(TextOffsets.utf16Offset(in: t, scalarOffset: 3), 4)
        XCTAssertNil(TextOffsets.utf16Offset(in: t, scalarOffset: 4))
        XCTAssertEqual(TextOffsets.scalarOffset(in: t, utf16Offset: 3), 2)
    }

    func testInsertionExpectation() {
        XCTAssertEqual(TextOffsets.replacing("hello world", utf16Location: 5, length: 0, with: ","), "hello, world")
        XCTAssertEqual(TextOffsets.replacing("hello world", utf16Location: 6, length: 5, with: "there"), "hello there")
        XCTAssertEqual(TextOffsets.replacing("a😀", utf16Location: 3, length: 0, with: "!"), "a😀!")
        XCTAssertNil(TextOffsets.replacing("a😀", utf16Location: 2, length: 0, with: "!"))  // inside a surrogate pair
        XCTAssertNil(TextOffsets.replacing("abc", utf16Location: 2, length: 5, with: ""))
    }
}

final class InputStepTests: XCTestCase {
    func step(_ entries: [(String, MsgValue)]) throws -> InputStep { try InputStep.parse(.map(entries), index: 0) }

    func testParsesEveryKind() throws {
        XCTAssertTrue(try step([("kind", .string("move")), ("x", .int(-5)), ("y", .uint(7))]).isPointer)
        XCTAssertTrue(try step([("kind", .string("tap")), ("keys", .array([.string("ctrl"), .string("c")])), ("repeat", .uint(2))]).isKeyboard)
        XCTAssertTrue(try step([("kind", .string("type")), ("text", .string("hi"))]).isKeyboard)
        let click = try step([("kind", .string("click")), ("x", .uint(1)), ("y", .uint(2)), ("button", .string("left")), ("count", .uint(2)),
                              ("modifiers", .array([.string("shift")]))])
        XCTAssertTrue(click.isKeyboard)
        XCTAssertTrue(click.isPointer)
        let wait = try step([("kind", .string("wait")), ("ms", .uint(10))])
        XCTAssertFalse(wait.isPointer || wait.isKeyboard)
        XCTAssertTrue(try step([("kind", .string("scroll")), ("x", .null), ("y", .null), ("dx", .int(0)), ("dy", .int(-3))]).isPointer)
    }

    func testRefusals() {
        XCTAssertThrowsError(try step([("kind", .string("teleport"))]))
        XCTAssertThrowsError(try step([("kind", .string("key")), ("key", .string("Hyper_Q")), ("down", .bool(true))]))
        XCTAssertThrowsError(try step([("kind", .string("wait")), ("ms", .uint(10_001))]))
        XCTAssertThrowsError(try step([("kind", .string("click")), ("x", .uint(1)), ("y", .uint(2)), ("button", .string("left")), ("count", .uint(4)),
                                       ("modifiers", .array([]))]))
        XCTAssertThrowsError(try step([("kind", .string("button")), ("button", .string("thumb")), ("down", .bool(true))]))
    }

    func testTypedTextChunksOfEight() {
        XCTAssertEqual(InputStep.chunks("abcdefghij"), ["abcdefgh", "ij"])
        XCTAssertEqual(InputStep.chunks(""), [])
        XCTAssertEqual(InputStep.chunks("👍🏽👍🏽", size: 1), ["👍🏽", "👍🏽"])
    }
}
