// The AX -> neutral mapping (roles, actions, states): every word it returns
// is in the protocol's vocabulary, and the mappings that decide behaviour
// (secure fields, press routing, containers) are pinned.

import DeckhandMac
import XCTest

final class VocabularyTests: XCTestCase {
    // src/wire/vocabulary.ts (schema.json `vocabulary`).
    static let roles: Set<String> = [
        "button", "toggle_button", "checkbox", "radio", "text_field", "secure_text_field", "text_area", "combo_box", "list", "list_item",
        "menu_bar", "menu", "menu_item", "tab", "tab_list", "slider", "spin_button", "scroll_bar", "link", "image", "table", "row", "cell",
        "column_header", "tree", "tree_item", "window", "dialog", "group", "toolbar", "label", "heading", "document", "web_document", "form",
        "progress_bar", "separator", "status_bar", "container", "other",
    ]
    static let states: Set<String> = [
        "focused", "focusable", "checked", "mixed", "pressed", "enabled", "editable", "read_only", "multi_line", "selected", "selectable",
        "expandable", "expanded", "collapsed", "visible", "offscreen", "secure", "modal", "default", "required", "invalid", "busy",
    ]
    static let actions: Set<String> = [
        "press", "toggle", "expand", "collapse", "expand_collapse", "select", "show_menu", "increment", "decrement", "focus", "scroll_into_view", "other",
    ]

    static let axRoles = [
        "AXButton", "AXCheckBox", "AXRadioButton", "AXTextField", "AXTextArea", "AXComboBox", "AXPopUpButton", "AXList", "AXMenuBar",
        "AXMenu", "AXMenuItem", "AXMenuBarItem", "AXTabGroup", "AXSlider", "AXIncrementor", "AXScrollBar", "AXLink", "AXImage", "AXTable",
        "AXRow", "AXCell", "AXOutline", "AXBrowser", "AXWindow", "AXSheet", "AXGroup", "AXToolbar", "AXStaticText", "AXHeading", "AXWebArea",
        "AXProgressIndicator", "AXSplitter", "AXScrollArea", "AXSplitGroup", "AXUnknown", "AXSomethingNew", "",
    ]

    func testEveryRoleIsANeutralWord() {
        for r in Self.axRoles {
            for sub in [nil, "AXSecureTextField", "AXDialog", "AXToggle", "AXOutlineRow", "AXTabButton", "AXSearchField"] as [String?] {
                for named in [true, false] {
                    let n = AXVocabulary.role(axRole: r, subrole: sub, named: named)
                    XCTAssertTrue(Self.roles.contains(n), "\(r)/\(sub ?? "-") -> \(n)")
                }
            }
        }
    }

    func testRolesThatDecideBehaviour() {
        XCTAssertEqual(AXVocabulary.role(axRole: "AXTextField", subrole: "AXSecureTextField", named: true), "secure_text_field")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXTextField", subrole: "AXSearchField", named: false), "text_field")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXButton", subrole: nil, named: true), "button")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXButton", subrole: "AXCloseButton", named: false), "button")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXRadioButton", subrole: "AXTabButton", named: true), "tab")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXWindow", subrole: "AXStandardWindow", named: true), "window")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXWindow", subrole: "AXDialog", named: true), "dialog")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXGroup", subrole: nil, named: false), "container")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXGroup", subrole: nil, named: true), "group")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXRow", subrole: "AXOutlineRow", named: false), "tree_item")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXCheckBox", subrole: "AXSwitch", named: true), "toggle_button")
        XCTAssertEqual(AXVocabulary.role(axRole: "AXNewRole", subrole: nil, named: true), "other")
    }

    func testActions() {
        XCTAssertEqual(AXVocabulary.action("AXPress"), "press")
        XCTAssertEqual(AXVocabulary.action("AXShowMenu"), "show_menu")
        XCTAssertEqual(AXVocabulary.action("AXIncrement"), "increment")
        XCTAssertEqual(AXVocabulary.action("AXDecrement"), "decrement")
        XCTAssertEqual(AXVocabulary.action("AXScrollToVisible"), "scroll_into_view")
        XCTAssertEqual(AXVocabulary.action("AXConfirm"), "other")
        XCTAssertEqual(AXVocabulary.action("AXRaise"), "other")
        for a in ["AXPress", "AXPick", "AXCancel", "custom"] { XCTAssertTrue(Self.actions.contains(AXVocabulary.action(a))) }
        XCTAssertEqual(AXVocabulary.clickActions.first, "AXPress")
        XCTAssertFalse(AXVocabulary.clickActions.contains("AXShowMenu"))
    }

    func testStates() {
        let secure = AXVocabulary.states(.init(role: "secure_text_field", axRole: "AXTextField", enabled: true, focused: true, hasBounds: true))
        XCTAssertTrue(secure.contains("secure"))
        XCTAssertTrue(secure.contains("editable"))
        XCTAssertTrue(secure.contains("focused"))
        let box = AXVocabulary.states(.init(role: "checkbox", axRole: "AXCheckBox", enabled: true, numericValue: 1))
        XCTAssertTrue(box.contains("checked"))
        XCTAssertTrue(AXVocabulary.states(.init(role: "checkbox", axRole: "AXCheckBox", numericValue: 2)).contains("mixed"))
        let off = AXVocabulary.states(.init(role: "button", axRole: "AXButton", enabled: false))
        XCTAssertFalse(off.contains("enabled"))
        XCTAssertFalse(off.contains("focusable"))
        let row = AXVocabulary.states(.init(role: "tree_item", axRole: "AXRow", disclosing: false))
        XCTAssertTrue(row.contains("expandable"))
        XCTAssertTrue(row.contains("collapsed"))
        let area = AXVocabulary.states(.init(role: "text_area", axRole: "AXTextArea", enabled: true, valueSettable: false))
        XCTAssertTrue(area.contains("read_only"))
        XCTAssertTrue(area.contains("multi_line"))
        for s in secure + box + off + row + area { XCTAssertTrue(Self.states.contains(s), s) }
    }

    func testNativeRoleAndNames() {
        XCTAssertEqual(nativeRoleString(axRole: "AXButton", subrole: "AXCloseButton"), "AXButton:AXCloseButton")
        XCTAssertEqual(nativeRoleString(axRole: "AXButton", subrole: nil), "AXButton")
        XCTAssertEqual(nativeRoleString(axRole: "AXGroup", subrole: "AXUnknown"), "AXGroup")
        XCTAssertEqual(nativeRoleString(axRole: "", subrole: nil), "AXUnknown")
        XCTAssertEqual(accessibleName(title: "OK", description: "confirm"), "OK")
        XCTAssertEqual(accessibleName(title: "", description: "close"), "close")
        XCTAssertEqual(accessibleName(title: nil, description: nil), "")
        XCTAssertEqual(accessibleDescription(title: "OK", description: "confirm", help: "h"), "confirm")
        XCTAssertEqual(accessibleDescription(title: nil, description: "close", help: "h"), "h")
    }
}
