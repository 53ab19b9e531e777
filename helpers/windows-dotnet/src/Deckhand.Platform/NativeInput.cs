using System.Runtime.InteropServices;

namespace Deckhand.Platform;

// SendInput's structs (winuser.h). Declared sequentially with the union as an
// explicit-layout struct, so the runtime aligns the union to its largest
// member (ULONG_PTR dwExtraInfo): on x64 INPUT is 40 bytes with the union at
// offset 8 (type, 4 bytes of padding, union); on x86 28 bytes at offset 4. A
// hard-coded [FieldOffset(4)] would be the classic x64 bug. The layout is
// unit-tested (NativeInputTests), so it is checked on any 64-bit runner.

[StructLayout(LayoutKind.Sequential)]
public struct MOUSEINPUT
{
    public int dx;
    public int dy;
    public uint mouseData;
    public uint dwFlags;
    public uint time;
    public nuint dwExtraInfo;
}

[StructLayout(LayoutKind.Sequential)]
public struct KEYBDINPUT
{
    public ushort wVk;
    public ushort wScan;
    public uint dwFlags;
    public uint time;
    public nuint dwExtraInfo;
}

[StructLayout(LayoutKind.Sequential)]
public struct HARDWAREINPUT
{
    public uint uMsg;
    public ushort wParamL;
    public ushort wParamH;
}

[StructLayout(LayoutKind.Explicit)]
public struct InputUnion
{
    [FieldOffset(0)] public MOUSEINPUT mi;
    [FieldOffset(0)] public KEYBDINPUT ki;
    [FieldOffset(0)] public HARDWAREINPUT hi;
}

[StructLayout(LayoutKind.Sequential)]
public struct INPUT
{
    public uint type;
    public InputUnion u;
}

/// <summary>Builders of INPUT records and their flags.</summary>
public static class NativeInput
{
    public const uint InputMouse = 0, InputKeyboard = 1;
    public const uint KeyeventfExtendedKey = 0x0001, KeyeventfKeyUp = 0x0002, KeyeventfUnicode = 0x0004, KeyeventfScanCode = 0x0008;
    public const uint MouseeventfMove = 0x0001, MouseeventfLeftDown = 0x0002, MouseeventfLeftUp = 0x0004, MouseeventfRightDown = 0x0008,
        MouseeventfRightUp = 0x0010, MouseeventfMiddleDown = 0x0020, MouseeventfMiddleUp = 0x0040, MouseeventfXDown = 0x0080,
        MouseeventfXUp = 0x0100, MouseeventfWheel = 0x0800, MouseeventfHWheel = 0x01000, MouseeventfVirtualDesk = 0x4000,
        MouseeventfAbsolute = 0x8000;
    public const uint XButton1 = 1, XButton2 = 2;
    public const int WheelDelta = 120;

    /// <summary>
    /// Tag on every event this helper injects (dwExtraInfo), so its own
    /// watcher can tell them apart beyond LLMHF_INJECTED. "DECK" in ASCII.
    /// </summary>
    public const uint Signature = 0x4445434B;

    public static INPUT Key(ushort vk, bool extended, bool up) => new()
    {
        type = InputKeyboard,
        u = new InputUnion
        {
            ki = new KEYBDINPUT
            {
                wVk = vk,
                dwFlags = (extended ? KeyeventfExtendedKey : 0) | (up ? KeyeventfKeyUp : 0),
                dwExtraInfo = Signature,
            },
        },
    };

    /// <summary>One UTF-16 unit typed as a Unicode "key" (wVk 0, wScan the unit).</summary>
    public static INPUT Unicode(char unit, bool up) => new()
    {
        type = InputKeyboard,
        u = new InputUnion
        {
            ki = new KEYBDINPUT
            {
                wScan = unit,
                dwFlags = KeyeventfUnicode | (up ? KeyeventfKeyUp : 0),
                dwExtraInfo = Signature,
            },
        },
    };

    public static INPUT MoveAbsolute(int dx, int dy) => Mouse(dx, dy, 0, MouseeventfMove | MouseeventfAbsolute | MouseeventfVirtualDesk);

    public static INPUT Mouse(int dx, int dy, uint data, uint flags) => new()
    {
        type = InputMouse,
        u = new InputUnion
        {
            mi = new MOUSEINPUT { dx = dx, dy = dy, mouseData = data, dwFlags = flags, dwExtraInfo = Signature },
        },
    };

    /// <summary>The down/up flags and mouseData of a wire button name.</summary>
    public static (uint Down, uint Up, uint Data)? Button(string name) => name switch
    {
        "left" => (MouseeventfLeftDown, MouseeventfLeftUp, 0u),
        "right" => (MouseeventfRightDown, MouseeventfRightUp, 0u),
        "middle" => (MouseeventfMiddleDown, MouseeventfMiddleUp, 0u),
        "back" => (MouseeventfXDown, MouseeventfXUp, XButton1),
        "forward" => (MouseeventfXDown, MouseeventfXUp, XButton2),
        _ => null,
    };

    /// <summary>
    /// Wheel events of a scroll step: dy notches down (positive, as X11
    /// button 5) is a negative WHEEL delta on Windows; dx right is positive
    /// HWHEEL.
    /// </summary>
    public static List<INPUT> Wheel(int dx, int dy)
    {
        var list = new List<INPUT>();
        if (dy != 0) list.Add(Mouse(0, 0, unchecked((uint)(-dy * WheelDelta)), MouseeventfWheel));
        if (dx != 0) list.Add(Mouse(0, 0, unchecked((uint)(dx * WheelDelta)), MouseeventfHWheel));
        return list;
    }

    /// <summary>
    /// A text cut into chunks of at most <paramref name="max"/> UTF-16 units,
    /// never splitting a surrogate pair (the focus guard is checked before each chunk).
    /// </summary>
    public static List<string> Chunks(string text, int max = 8)
    {
        var chunks = new List<string>();
        int i = 0;
        while (i < text.Length)
        {
            int n = Math.Min(max, text.Length - i);
            if (n < text.Length - i && char.IsHighSurrogate(text[i + n - 1]) && n > 1) n--;
            chunks.Add(text.Substring(i, n));
            i += n;
        }
        return chunks;
    }

    /// <summary>Characters as deckhand counts them for chars_sent (Unicode scalar values).</summary>
    public static int CountChars(string text)
    {
        int n = 0;
        for (int i = 0; i < text.Length; i++)
        {
            if (!(char.IsHighSurrogate(text[i]) && i + 1 < text.Length && char.IsLowSurrogate(text[i + 1]))) n++;
        }
        return n;
    }
}
