// The one mapping from AX words to the protocol's neutral vocabulary
// (src/wire/vocabulary.ts; docs/protocol.md "Vocabulary"). Pure: strings in,
// strings out, so it is unit-tested on any OS.

public enum AXVocabulary {
    /// Neutral role for an AXRole/AXSubrole pair. `named`: the element has a
    /// title or description (an unnamed AXGroup only groups: `container`).
    public static func role(axRole: String, subrole: String?, named: Bool) -> String {
        switch subrole ?? "" {
        case "AXSecureTextField": return "secure_text_field"
        case "AXTabButton": return "tab"
        case "AXToggle", "AXSwitch": return "toggle_button"
        case "AXOutlineRow": return "tree_item"
        case "AXSortButton": return "column_header"
        case "AXDialog", "AXSystemDialog":
            if axRole == "AXWindow" { return "dialog" }
        case "AXApplicationStatus": return "status_bar"
        case "AXLandmarkForm": return "form"
        default: break
        }
        switch axRole {
        case "AXButton", "AXMenuButton", "AXColorWell", "AXDisclosureTriangle": return "button"
        case "AXCheckBox": return "checkbox"
        case "AXRadioButton": return "radio"
        case "AXTextField", "AXDateField", "AXTimeField": return "text_field"
        case "AXTextArea": return "text_area"
        case "AXComboBox", "AXPopUpButton": return "combo_box"
        case "AXList": return "list"
        case "AXMenuBar": return "menu_bar"
        case "AXMenu": return "menu"
        case "AXMenuItem", "AXMenuBarItem": return "menu_item"
        case "AXTabGroup": return "tab_list"
        case "AXSlider": return "slider"
        case "AXIncrementor", "AXStepper": return "spin_button"
        case "AXScrollBar": return "scroll_bar"
        case "AXLink": return "link"
        case "AXImage": return "image"
        case "AXTable", "AXGrid": return "table"
        case "AXRow": return "row"
        case "AXCell": return "cell"
        case "AXOutline", "AXBrowser": return "tree"
        case "AXWindow": return "window"
        case "AXSheet", "AXPopover": return "dialog"
        case "AXGroup", "AXRadioGroup": return named ? "group" : "container"
        case "AXToolbar": return "toolbar"
        case "AXStaticText": return "label"
        case "AXHeading": return "heading"
        case "AXWebArea": return "web_document"
        case "AXProgressIndicator", "AXBusyIndicator", "AXLevelIndicator", "AXRelevanceIndicator": return "progress_bar"
        case "AXSplitter": return "separator"
        case "AXScrollArea", "AXSplitGroup", "AXLayoutArea", "AXLayoutItem", "AXMatte", "AXDrawer", "AXColumn", "AXGrowArea":
            return "container"
        default: return "other"
        }
    }

    /// Neutral name of an AX action; the native name is kept beside it.
    public static func action(_ native: String) -> String {
        switch native {
        case "AXPress": return "press"
        case "AXIncrement": return "increment"
        case "AXDecrement": return "decrement"
        case "AXShowMenu": return "show_menu"
        case "AXPick": return "select"
        case "AXScrollToVisible": return "scroll_into_view"
        default: return "other"  // AXConfirm, AXCancel, AXRaise, AXShowAlternateUI, ...
        }
    }

    /// The actions `click` may run, in preference order (a press-like action
    /// chosen by name, never an arbitrary first one).
    public static let clickActions = ["AXPress", "AXConfirm"]

    /// What one element said about itself (absent attributes are nil).
    public struct Facts: Equatable {
        public var role: String  // the neutral role
        public var axRole: String
        public var enabled: Bool?
        public var focused: Bool?
        public var selected: Bool?
        public var expanded: Bool?
        public var disclosing: Bool?
        /// AXValue as a number (checkbox / radio / switch: 0, 1, 2 = mixed).
        public var numericValue: Double?
        public var modal: Bool?
        public var required: Bool?
        public var busy: Bool?
        public var valueSettable: Bool?
        public var hasBounds: Bool

        public init(role: String, axRole: String, enabled: Bool? = nil, focused: Bool? = nil, selected: Bool? = nil, expanded: Bool? = nil,
                    disclosing: Bool? = nil, numericValue: Double? = nil, modal: Bool? = nil, required: Bool? = nil, busy: Bool? = nil,
                    valueSettable: Bool? = nil, hasBounds: Bool = false) {
            self.role = role
            self.axRole = axRole
            self.enabled = enabled
            self.focused = focused
            self.selected = selected
            self.expanded = expanded
            self.disclosing = disclosing
            self.numericValue = numericValue
            self.modal = modal
            self.required = required
            self.busy = busy
            self.valueSettable = valueSettable
            self.hasBounds = hasBounds
        }
    }

    static let textRoles: Set<String> = ["text_field", "secure_text_field", "text_area", "combo_box"]
    static let focusableRoles: Set<String> = [
        "button", "toggle_button", "checkbox", "radio", "text_field", "secure_text_field", "text_area", "combo_box",
        "list", "table", "tree", "slider", "spin_button", "link", "tab", "web_document",
    ]

    /// Neutral states, in a fixed order. A platform state with no neutral word is dropped.
    public static func states(_ f: Facts) -> [String] {
        var out: [String] = []
        let enabled = f.enabled ?? true
        if f.focused == true { out.append("focused") }
        if enabled && (focusableRoles.contains(f.role) || f.focused == true) { out.append("focusable") }
        if f.role == "checkbox" || f.role == "radio" || f.role == "toggle_button" {
            switch f.numericValue {
            case .some(1): out.append(f.role == "toggle_button" && f.axRole == "AXButton" ? "pressed" : "checked")
            case .some(2): out.append("mixed")
            default: break
            }
        }
        if enabled { out.append("enabled") }
        if textRoles.contains(f.role) {
            if enabled && f.valueSettable != false { out.append("editable") } else { out.append("read_only") }
            if f.role == "text_area" { out.append("multi_line") }
        }
        if f.selected == true { out.append("selected") }
        if ["list_item", "row", "tree_item", "tab", "cell", "menu_item"].contains(f.role) { out.append("selectable") }
        if let open = f.expanded ?? f.disclosing {
            out.append("expandable")
            out.append(open ? "expanded" : "collapsed")
        }
        if f.hasBounds { out.append("visible") }
        if f.role == "secure_text_field" { out.append("secure") }
        if f.modal == true { out.append("modal") }
        if f.required == true { out.append("required") }
        if f.busy == true { out.append("busy") }
        return out
    }
}
