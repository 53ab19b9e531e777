namespace Deckhand.Platform;

/// <summary>A key as SendInput sends it: a virtual-key code, and whether it is an extended key (KEYEVENTF_EXTENDEDKEY).</summary>
public readonly record struct VirtualKey(ushort Vk, bool Extended)
{
    public bool IsModifier => Vk is KeyNames.VkShift or KeyNames.VkControl or KeyNames.VkMenu or KeyNames.VkLWin or KeyNames.VkRWin;
}

/// <summary>
/// deckhand's key names (xdotool style, normalised by deckhand's chord
/// parser: `ctrl`, `alt`, `shift`, `super`, `Return`, `BackSpace`,
/// `Page_Up`, `F1`..`F24`, `plus`, X keysym names, single characters) to
/// Windows virtual keys. A single character with no fixed key here (most
/// punctuation, non-ASCII) is resolved by the platform through the active
/// keyboard layout (VkKeyScanExW) or typed as a Unicode character.
/// </summary>
public static class KeyNames
{
    public const ushort VkBack = 0x08, VkTab = 0x09, VkClear = 0x0C, VkReturn = 0x0D, VkShift = 0x10, VkControl = 0x11, VkMenu = 0x12,
        VkPause = 0x13, VkCapital = 0x14, VkEscape = 0x1B, VkSpace = 0x20, VkPrior = 0x21, VkNext = 0x22, VkEnd = 0x23, VkHome = 0x24,
        VkLeft = 0x25, VkUp = 0x26, VkRight = 0x27, VkDown = 0x28, VkSnapshot = 0x2C, VkInsert = 0x2D, VkDelete = 0x2E,
        VkLWin = 0x5B, VkRWin = 0x5C, VkApps = 0x5D, VkF1 = 0x70, VkNumLock = 0x90, VkScroll = 0x91,
        VkLShift = 0xA0, VkRShift = 0xA1, VkLControl = 0xA2, VkRControl = 0xA3, VkLMenu = 0xA4, VkRMenu = 0xA5,
        VkMultiply = 0x6A, VkAdd = 0x6B, VkSubtract = 0x6D, VkDecimal = 0x6E, VkDivide = 0x6F, VkNumpad0 = 0x60,
        VkOemPlus = 0xBB, VkOemComma = 0xBC, VkOemMinus = 0xBD, VkOemPeriod = 0xBE,
        VkVolumeMute = 0xAD, VkVolumeDown = 0xAE, VkVolumeUp = 0xAF, VkMediaNext = 0xB0, VkMediaPrev = 0xB1, VkMediaStop = 0xB2, VkMediaPlayPause = 0xB3;

    private static readonly Dictionary<string, VirtualKey> Named = Build();

    private static Dictionary<string, VirtualKey> Build()
    {
        var t = new Dictionary<string, VirtualKey>(StringComparer.Ordinal);
        void Add(ushort vk, bool ext, params string[] names)
        {
            foreach (var n in names) t[n] = new VirtualKey(vk, ext);
        }
        Add(VkControl, false, "ctrl", "control", "Control_L", "Control", "Ctrl");
        Add(VkRControl, true, "Control_R");
        Add(VkMenu, false, "alt", "Alt_L", "Alt", "Meta_L", "meta");
        Add(VkRMenu, true, "Alt_R", "ISO_Level3_Shift", "AltGr");
        Add(VkShift, false, "shift", "Shift_L", "Shift");
        Add(VkRShift, false, "Shift_R");
        Add(VkLWin, true, "super", "Super_L", "win", "Win", "cmd", "Hyper_L");
        Add(VkRWin, true, "Super_R");
        Add(VkApps, true, "Menu", "menu", "apps");
        Add(VkReturn, false, "Return", "return", "Enter", "enter", "KP_Enter");
        Add(VkBack, false, "BackSpace", "Backspace", "backspace");
        Add(VkTab, false, "Tab", "tab", "ISO_Left_Tab");
        Add(VkEscape, false, "Escape", "escape", "Esc", "esc");
        Add(VkSpace, false, "space", "Space");
        Add(VkPrior, true, "Page_Up", "Prior", "PageUp", "pageup");
        Add(VkNext, true, "Page_Down", "Next", "PageDown", "pagedown");
        Add(VkEnd, true, "End", "end");
        Add(VkHome, true, "Home", "home");
        Add(VkLeft, true, "Left", "left");
        Add(VkUp, true, "Up", "up");
        Add(VkRight, true, "Right", "right");
        Add(VkDown, true, "Down", "down");
        Add(VkInsert, true, "Insert", "insert");
        Add(VkDelete, true, "Delete", "delete", "Del");
        Add(VkSnapshot, true, "Print", "PrintScreen");
        Add(VkPause, false, "Pause", "Break");
        Add(VkCapital, false, "Caps_Lock", "CapsLock");
        Add(VkNumLock, true, "Num_Lock");
        Add(VkScroll, false, "Scroll_Lock");
        Add(VkClear, false, "Clear");
        Add(VkAdd, false, "KP_Add");
        Add(VkSubtract, false, "KP_Subtract");
        Add(VkMultiply, false, "KP_Multiply");
        Add(VkDivide, true, "KP_Divide");
        Add(VkDecimal, false, "KP_Decimal");
        for (int i = 0; i <= 9; i++) Add((ushort)(VkNumpad0 + i), false, $"KP_{i}");
        for (int i = 1; i <= 24; i++) Add((ushort)(VkF1 + i - 1), false, $"F{i}");
        Add(VkVolumeMute, true, "XF86AudioMute");
        Add(VkVolumeDown, true, "XF86AudioLowerVolume");
        Add(VkVolumeUp, true, "XF86AudioRaiseVolume");
        Add(VkMediaNext, true, "XF86AudioNext");
        Add(VkMediaPrev, true, "XF86AudioPrev");
        Add(VkMediaStop, true, "XF86AudioStop");
        Add(VkMediaPlayPause, true, "XF86AudioPlay");
        return t;
    }

    /// <summary>X keysym names of printable characters, to the character they type.</summary>
    private static readonly Dictionary<string, char> KeysymChars = new(StringComparer.Ordinal)
    {
        ["plus"] = '+', ["minus"] = '-', ["equal"] = '=', ["comma"] = ',', ["period"] = '.', ["slash"] = '/',
        ["backslash"] = '\\', ["semicolon"] = ';', ["apostrophe"] = '\'', ["quotedbl"] = '"', ["grave"] = '`',
        ["asciitilde"] = '~', ["exclam"] = '!', ["at"] = '@', ["numbersign"] = '#', ["dollar"] = '$',
        ["percent"] = '%', ["asciicircum"] = '^', ["ampersand"] = '&', ["asterisk"] = '*', ["parenleft"] = '(',
        ["parenright"] = ')', ["underscore"] = '_', ["bracketleft"] = '[', ["bracketright"] = ']',
        ["braceleft"] = '{', ["braceright"] = '}', ["bar"] = '|', ["colon"] = ':', ["less"] = '<',
        ["greater"] = '>', ["question"] = '?',
    };

    /// <summary>
    /// The fixed virtual key of a name, or null when the name is a character
    /// the keyboard layout decides (<see cref="CharacterOf"/>) or unknown.
    /// Letters map to VK_A..VK_Z and digits to VK_0..VK_9 whatever their case
    /// (the layout-independent virtual keys).
    /// </summary>
    public static VirtualKey? Lookup(string name)
    {
        if (Named.TryGetValue(name, out var k)) return k;
        if (name.Length == 1)
        {
            char c = name[0];
            if (c is >= 'a' and <= 'z') return new VirtualKey((ushort)(c - 'a' + 0x41), false);
            if (c is >= 'A' and <= 'Z') return new VirtualKey(c, false);
            if (c is >= '0' and <= '9') return new VirtualKey(c, false);
            if (c == ' ') return new VirtualKey(VkSpace, false);
        }
        return null;
    }

    /// <summary>The character a single-character name or a printable keysym name stands for, else null.</summary>
    public static char? CharacterOf(string name)
    {
        if (name.Length == 1) return name[0];
        return KeysymChars.TryGetValue(name, out var c) ? c : null;
    }

    /// <summary>Whether a name is a modifier (held around a click with modifiers).</summary>
    public static bool IsModifier(string name) => Lookup(name) is { IsModifier: true } || name is "Control_R" or "Alt_R" or "Shift_R";
}
