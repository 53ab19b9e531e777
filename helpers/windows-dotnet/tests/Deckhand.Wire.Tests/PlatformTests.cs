using System.IO.Compression;
using System.Runtime.InteropServices;
using System.Text.Json;
using Deckhand.Platform;
using Xunit;

namespace Deckhand.Wire.Tests;

public class VocabularyTests
{
    private static List<string> SchemaList(string key)
    {
        using var doc = JsonDocument.Parse(File.ReadAllText(RepoFiles.Schema));
        return doc.RootElement.GetProperty("vocabulary").GetProperty(key).EnumerateArray().Select(e => e.GetString()!).ToList();
    }

    [Fact]
    public void WordsAreTheSchemasWords()
    {
        Assert.Equal(SchemaList("roles"), Vocabulary.Roles);
        Assert.Equal(SchemaList("states"), Vocabulary.States);
        Assert.Equal(SchemaList("actions"), Vocabulary.Actions);
        Assert.Equal(SchemaList("permission_ids"), Vocabulary.PermissionIds);
    }
}

public class RoleMapTests
{
    [Theory]
    [InlineData(ControlType.Button, "button")]
    [InlineData(ControlType.CheckBox, "checkbox")]
    [InlineData(ControlType.RadioButton, "radio")]
    [InlineData(ControlType.Edit, "text_field")]
    [InlineData(ControlType.ComboBox, "combo_box")]
    [InlineData(ControlType.MenuItem, "menu_item")]
    [InlineData(ControlType.MenuBar, "menu_bar")]
    [InlineData(ControlType.TabItem, "tab")]
    [InlineData(ControlType.Tab, "tab_list")]
    [InlineData(ControlType.Text, "label")]
    [InlineData(ControlType.Document, "document")]
    [InlineData(ControlType.Window, "window")]
    [InlineData(ControlType.Pane, "container")]
    [InlineData(ControlType.DataItem, "row")]
    [InlineData(ControlType.HeaderItem, "column_header")]
    [InlineData(ControlType.Hyperlink, "link")]
    [InlineData(ControlType.Custom, "other")]
    [InlineData(ControlType.TitleBar, "other")]
    [InlineData(99999, "other")]
    public void ControlTypeToRole(int controlType, string role)
    {
        Assert.Equal(role, RoleMap.Role(controlType));
    }

    [Fact]
    public void FactsRefineTheRole()
    {
        Assert.Equal("secure_text_field", RoleMap.Role(ControlType.Edit, isPassword: true));
        Assert.Equal("toggle_button", RoleMap.Role(ControlType.Button, hasToggle: true));
        Assert.Equal("text_area", RoleMap.Role(ControlType.Edit, multiLine: true));
        Assert.Equal("dialog", RoleMap.Role(ControlType.Window, modal: true));
    }

    [Fact]
    public void EveryControlTypeMapsIntoTheVocabularyAndHasANativeName()
    {
        for (int id = ControlType.Button; id <= ControlType.AppBar; id++)
        {
            Assert.Contains(RoleMap.Role(id), Vocabulary.Roles);
            Assert.False(string.IsNullOrEmpty(ControlType.Name(id)));
            Assert.DoesNotContain("ControlType", ControlType.Name(id));
        }
        Assert.Equal("Button", ControlType.Name(ControlType.Button));
        Assert.Equal("Edit", ControlType.Name(ControlType.Edit));
        Assert.Equal("AppBar", ControlType.Name(ControlType.AppBar));
        Assert.Equal("ControlType12", ControlType.Name(12));
    }

    [Fact]
    public void StatesAndActionsAreVocabularyWords()
    {
        var facts = new ElementFacts
        {
            Enabled = true, HasKeyboardFocus = true, KeyboardFocusable = true, Password = true, RequiredForForm = true,
            ToggleState = 1, ExpandCollapseState = 1, Selected = true, ValueReadOnly = false, HasInvoke = true, HasScrollItem = true,
        };
        var states = StateMap.States(facts);
        Assert.All(states, s => Assert.Contains(s, Vocabulary.States));
        Assert.Equal(new[] { "focused", "focusable", "checked", "enabled", "editable", "selected", "selectable", "expandable", "expanded", "visible", "secure", "required" }, states);
        var actions = StateMap.Actions(facts);
        Assert.All(actions, a => Assert.Contains(a.Name, Vocabulary.Actions));
        Assert.All(actions, a => Assert.Contains(a.Native, NativeAction.All));
        Assert.Equal(("press", "Invoke"), actions[0]);
    }

    [Fact]
    public void ToggleAndExpandStates()
    {
        Assert.Contains("mixed", StateMap.States(new ElementFacts { ToggleState = 2 }));
        Assert.DoesNotContain("checked", StateMap.States(new ElementFacts { ToggleState = 0 }));
        Assert.Contains("collapsed", StateMap.States(new ElementFacts { ExpandCollapseState = 0 }));
        Assert.DoesNotContain("expandable", StateMap.States(new ElementFacts { ExpandCollapseState = 3 })); // a leaf
        Assert.Contains("offscreen", StateMap.States(new ElementFacts { Offscreen = true }));
        Assert.Contains("read_only", StateMap.States(new ElementFacts { ValueReadOnly = true }));
    }
}

public class LocatorTests
{
    private static readonly Locator Save = new(new[] { 0, 2, 1 }, "button", "Button", "Save", "SaveButton");

    [Fact]
    public void SameIdentityMatches()
    {
        Assert.Null(Save.Compare(Save with { Path = new[] { 0, 2, 1 } }));
    }

    [Fact]
    public void NativeRoleIsComparedWhenPresent()
    {
        var m = Save.Compare(Save with { NativeRole = "SplitButton" });
        Assert.NotNull(m);
        Assert.Equal("native_role", m!.Field);
        // Same neutral role, different native role: refused.
        Assert.NotNull(Save.Compare(Save with { NativeRole = "SplitButton", Role = "button" }));
    }

    [Fact]
    public void NeutralRoleIsComparedWithoutANativeOne()
    {
        var loc = Save with { NativeRole = "" };
        Assert.Null(loc.Compare(Save));
        Assert.Equal("role", loc.Compare(Save with { Role = "label" })!.Field);
    }

    [Fact]
    public void NameAndIdentifierMustMatch()
    {
        Assert.Equal("name", Save.Compare(Save with { Name = "Save As" })!.Field);
        Assert.Equal("identifier", Save.Compare(Save with { Identifier = "Other" })!.Field);
        Assert.Contains("expected 'Save'", Save.Compare(Save with { Name = "Open" })!.ToString());
    }

    [Fact]
    public void PathsFromAncestry()
    {
        // A walk up finds the node's index first, then its parent's, ...
        Assert.Equal(new[] { 0, 2, 1 }, PathBuilder.FromAncestry(new[] { 1, 2, 0 }));
        Assert.Empty(PathBuilder.FromAncestry(Array.Empty<int>()));
        Assert.True(PathBuilder.Valid(new[] { 0, 1 }));
        Assert.False(PathBuilder.Valid(new[] { 0, -1 }));
        Assert.Equal("[0,2,1]", Locator.PathText(Save.Path));
    }
}

public class GeometryTests
{
    [Fact]
    public void UiaRectsRoundOutward()
    {
        Assert.Equal(new PixelRect(10, 20, 31, 11), PixelRect.FromUia(10.5, 20.2, 30.1, 10.5));
        Assert.Null(PixelRect.FromUia(0, 0, 0, 0));
        Assert.Null(PixelRect.FromUia(double.NaN, 0, 10, 10));
    }

    [Fact]
    public void DpiConversion()
    {
        Assert.Equal(150, Geometry.LogicalToPhysical(100, 144));
        Assert.Equal(100, Geometry.PhysicalToLogical(150, 144));
        Assert.Equal(100, Geometry.LogicalToPhysical(100, 96));
        Assert.Equal(new PixelRect(20, 40, 200, 100), Geometry.LogicalToPhysical(new PixelRect(10, 20, 100, 50), 192));
    }

    [Fact]
    public void AbsoluteCoordinatesSpanTheVirtualDesktop()
    {
        var screen = new PixelRect(-1920, 0, 3840, 1080); // a monitor left of the primary
        Assert.Equal((0, 0), Geometry.ToAbsolute(-1920, 0, screen));
        Assert.Equal((65535, 65535), Geometry.ToAbsolute(1919, 1079, screen));
        Assert.Equal((0, 0), Geometry.ToAbsolute(-5000, -5, screen)); // clamped
        foreach (var (x, y) in new[] { (0, 0), (100, 200), (-1, 539), (1918, 1078), (-1919, 1) })
        {
            var (dx, dy) = Geometry.ToAbsolute(x, y, screen);
            Assert.Equal((x, y), Geometry.FromAbsolute(dx, dy, screen));
        }
    }

    [Fact]
    public void FitWidthScalesDownNeverUp()
    {
        Assert.Equal((800, 600, 1.0), Geometry.FitWidth(800, 600, null));
        Assert.Equal((800, 600, 1.0), Geometry.FitWidth(800, 600, 1000));
        Assert.Equal((400, 300, 0.5), Geometry.FitWidth(800, 600, 400));
    }

    [Fact]
    public void ScreenRectsMapIntoTheImage()
    {
        Assert.Equal(new PixelRect(10, 10, 20, 20), Geometry.ScreenToImage(new PixelRect(110, 210, 20, 20), 100, 200, 640, 480));
        Assert.Equal(new PixelRect(0, 0, 5, 5), Geometry.ScreenToImage(new PixelRect(95, 195, 10, 10), 100, 200, 640, 480));
        Assert.Null(Geometry.ScreenToImage(new PixelRect(0, 0, 10, 10), 100, 200, 640, 480));
    }

    [Fact]
    public void Intersections()
    {
        var a = new PixelRect(0, 0, 10, 10);
        Assert.Equal(new PixelRect(5, 5, 5, 5), a.Intersect(new PixelRect(5, 5, 10, 10)));
        Assert.Null(a.Intersect(new PixelRect(10, 0, 5, 5)));
        Assert.True(a.Contains(9, 9));
        Assert.False(a.Contains(10, 9));
    }
}

public class KeyNameTests
{
    [Theory]
    [InlineData("ctrl", 0x11, false)]
    [InlineData("alt", 0x12, false)]
    [InlineData("shift", 0x10, false)]
    [InlineData("super", 0x5B, true)]
    [InlineData("Return", 0x0D, false)]
    [InlineData("BackSpace", 0x08, false)]
    [InlineData("Tab", 0x09, false)]
    [InlineData("Escape", 0x1B, false)]
    [InlineData("Page_Up", 0x21, true)]
    [InlineData("Page_Down", 0x22, true)]
    [InlineData("Home", 0x24, true)]
    [InlineData("End", 0x23, true)]
    [InlineData("Left", 0x25, true)]
    [InlineData("Up", 0x26, true)]
    [InlineData("Right", 0x27, true)]
    [InlineData("Down", 0x28, true)]
    [InlineData("Delete", 0x2E, true)]
    [InlineData("Insert", 0x2D, true)]
    [InlineData("F1", 0x70, false)]
    [InlineData("F12", 0x7B, false)]
    [InlineData("F24", 0x87, false)]
    [InlineData("space", 0x20, false)]
    [InlineData("a", 0x41, false)]
    [InlineData("Z", 0x5A, false)]
    [InlineData("7", 0x37, false)]
    [InlineData("KP_5", 0x65, false)]
    public void NamedKeys(string name, int vk, bool extended)
    {
        var k = KeyNames.Lookup(name);
        Assert.NotNull(k);
        Assert.Equal(vk, k!.Value.Vk);
        Assert.Equal(extended, k.Value.Extended);
    }

    [Fact]
    public void CharactersAreLeftToTheLayout()
    {
        Assert.Null(KeyNames.Lookup("plus"));
        Assert.Equal('+', KeyNames.CharacterOf("plus"));
        Assert.Equal('/', KeyNames.CharacterOf("slash"));
        Assert.Equal('é', KeyNames.CharacterOf("é"));
        Assert.Null(KeyNames.Lookup("no_such_key"));
        Assert.Null(KeyNames.CharacterOf("no_such_key"));
    }

    [Fact]
    public void Modifiers()
    {
        Assert.True(KeyNames.IsModifier("ctrl"));
        Assert.True(KeyNames.IsModifier("shift"));
        Assert.True(KeyNames.IsModifier("super"));
        Assert.False(KeyNames.IsModifier("a"));
        Assert.False(KeyNames.IsModifier("Return"));
    }
}

public class NativeInputTests
{
    [Fact]
    public void SendInputLayoutMatchesWinuser()
    {
        if (IntPtr.Size == 8)
        {
            Assert.Equal(40, Marshal.SizeOf<INPUT>());
            Assert.Equal(8, (int)Marshal.OffsetOf<INPUT>(nameof(INPUT.u)));
            Assert.Equal(32, Marshal.SizeOf<MOUSEINPUT>());
            Assert.Equal(24, (int)Marshal.OffsetOf<MOUSEINPUT>(nameof(MOUSEINPUT.dwExtraInfo)));
            Assert.Equal(24, Marshal.SizeOf<KEYBDINPUT>());
            Assert.Equal(16, (int)Marshal.OffsetOf<KEYBDINPUT>(nameof(KEYBDINPUT.dwExtraInfo)));
        }
        else
        {
            Assert.Equal(28, Marshal.SizeOf<INPUT>());
            Assert.Equal(4, (int)Marshal.OffsetOf<INPUT>(nameof(INPUT.u)));
        }
    }

    [Fact]
    public void EventsAreTaggedAndFlagged()
    {
        var up = NativeInput.Key(0x25, extended: true, up: true);
        Assert.Equal(NativeInput.InputKeyboard, up.type);
        Assert.Equal(NativeInput.KeyeventfExtendedKey | NativeInput.KeyeventfKeyUp, up.u.ki.dwFlags);
        Assert.Equal((nuint)NativeInput.Signature, up.u.ki.dwExtraInfo);
        var u = NativeInput.Unicode('é', up: false);
        Assert.Equal(0, u.u.ki.wVk);
        Assert.Equal('é', (char)u.u.ki.wScan);
        Assert.Equal(NativeInput.KeyeventfUnicode, u.u.ki.dwFlags);
        var move = NativeInput.MoveAbsolute(100, 200);
        Assert.Equal(NativeInput.MouseeventfMove | NativeInput.MouseeventfAbsolute | NativeInput.MouseeventfVirtualDesk, move.u.mi.dwFlags);
    }

    [Fact]
    public void WheelDirections()
    {
        var down = NativeInput.Wheel(0, 3);
        Assert.Single(down);
        Assert.Equal(-360, unchecked((int)down[0].u.mi.mouseData));
        var right = NativeInput.Wheel(2, 0);
        Assert.Equal(NativeInput.MouseeventfHWheel, right[0].u.mi.dwFlags);
        Assert.Equal(240, unchecked((int)right[0].u.mi.mouseData));
    }

    [Fact]
    public void ButtonsOfTheWire()
    {
        Assert.Equal((NativeInput.MouseeventfLeftDown, NativeInput.MouseeventfLeftUp, 0u), NativeInput.Button("left"));
        Assert.Equal(NativeInput.XButton2, NativeInput.Button("forward")!.Value.Data);
        Assert.Null(NativeInput.Button("fifth"));
    }

    [Fact]
    public void ChunksKeepSurrogatePairsWhole()
    {
        Assert.Equal(new[] { "hello wo", "rld" }, NativeInput.Chunks("hello world"));
        string emoji = "1234567\U0001F600x"; // the pair would straddle the 8th unit
        var chunks = NativeInput.Chunks(emoji);
        Assert.Equal("1234567", chunks[0]);
        Assert.Equal("\U0001F600x", chunks[1]);
        Assert.Equal(9, NativeInput.CountChars(emoji));
        Assert.Empty(NativeInput.Chunks(""));
    }
}

public class RasterTests
{
    private static BgraImage Solid(int w, int h, byte b, byte g, byte r)
    {
        var img = new BgraImage(w, h);
        for (int i = 0; i < img.Pixels.Length; i += 4)
        {
            img.Pixels[i] = b;
            img.Pixels[i + 1] = g;
            img.Pixels[i + 2] = r;
            img.Pixels[i + 3] = 255;
        }
        return img;
    }

    [Fact]
    public void FillBlackClipsAndReports()
    {
        var img = Solid(10, 10, 255, 255, 255);
        Assert.True(img.FillBlack(new PixelRect(8, 8, 5, 5)));
        Assert.Equal(0, img.Pixels[(9 * 10 + 9) * 4]);
        Assert.Equal(255, img.Pixels[(7 * 10 + 7) * 4]);
        Assert.False(img.FillBlack(new PixelRect(20, 20, 5, 5)));
    }

    [Fact]
    public void CropAndBoxScale()
    {
        var img = Solid(4, 2, 0, 0, 0);
        // Left half white, right half black: scaled to 2x1 each half averages to its colour.
        for (int y = 0; y < 2; y++)
        {
            for (int x = 0; x < 2; x++)
            {
                int p = (y * 4 + x) * 4;
                img.Pixels[p] = img.Pixels[p + 1] = img.Pixels[p + 2] = 255;
            }
        }
        var small = img.ScaleDown(2, 1);
        Assert.Equal(2, small.Width);
        Assert.Equal(255, small.Pixels[0]);
        Assert.Equal(0, small.Pixels[4]);
        var crop = img.Crop(new PixelRect(1, 0, 2, 2));
        Assert.Equal(2, crop.Width);
        Assert.Equal(255, crop.Pixels[0]);
        Assert.Equal(0, crop.Pixels[4]);
    }

    [Fact]
    public void PngIsWellFormed()
    {
        var img = Solid(3, 2, 10, 20, 30);
        byte[] png = Png.Encode(img);
        Assert.Equal(new byte[] { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A }, png[..8]);
        // IHDR: width 3, height 2, 8-bit RGB.
        Assert.Equal(3, (png[16] << 24) | (png[17] << 16) | (png[18] << 8) | png[19]);
        Assert.Equal(2, (png[20] << 24) | (png[21] << 16) | (png[22] << 8) | png[23]);
        Assert.Equal(8, png[24]);
        Assert.Equal(2, png[25]);
        // The IEND chunk's CRC is the well-known AE 42 60 82.
        Assert.Equal(new byte[] { 0xAE, 0x42, 0x60, 0x82 }, png[^4..]);
        // IDAT inflates to height * (1 + width * 3) bytes, RGB order.
        int idat = IndexOf(png, "IDAT"u8.ToArray());
        int len = (png[idat - 4] << 24) | (png[idat - 3] << 16) | (png[idat - 2] << 8) | png[idat - 1];
        using var z = new ZLibStream(new MemoryStream(png, idat + 4, len), CompressionMode.Decompress);
        var raw = new MemoryStream();
        z.CopyTo(raw);
        var bytes = raw.ToArray();
        Assert.Equal(2 * (1 + 3 * 3), bytes.Length);
        Assert.Equal(new byte[] { 0, 30, 20, 10 }, bytes[..4]);
    }

    private static int IndexOf(byte[] haystack, byte[] needle)
    {
        for (int i = 0; i <= haystack.Length - needle.Length; i++)
        {
            if (haystack.AsSpan(i, needle.Length).SequenceEqual(needle)) return i;
        }
        return -1;
    }
}

public class CapabilityFileTests
{
    private static List<string> SchemaKeys()
    {
        using var doc = JsonDocument.Parse(File.ReadAllText(RepoFiles.Schema));
        return doc.RootElement.GetProperty("capability_keys").EnumerateArray().Select(e => e.GetString()!).ToList();
    }

    [Fact]
    public void EveryCapabilityKeyIsDeclaredAndUnverified()
    {
        var file = CapabilityFile.Parse(File.ReadAllText(RepoFiles.Capabilities));
        Assert.Equal("deckhand-helper-windows", file.Helper);
        Assert.Equal("windows", file.Platform);
        Assert.Equal(SchemaKeys().OrderBy(k => k, StringComparer.Ordinal), file.Capabilities.Keys.OrderBy(k => k, StringComparer.Ordinal));
        Assert.All(file.Capabilities.Values, c => Assert.Equal("unverified", c.Verified));
    }

    [Fact]
    public void HelloCarriesExactlyTheFile()
    {
        var file = CapabilityFile.Parse(File.ReadAllText(RepoFiles.Capabilities));
        var hello = file.Hello("0.1.0");
        var decoded = (Dictionary<string, object?>)Msgpack.Decode(Msgpack.Encode(hello))!;
        Assert.Equal("hello", decoded["type"]);
        Assert.True(Msgpack.Same(new List<object?> { (long)Protocol.Major, (long)Protocol.Minor }, decoded["protocol"]));
        var caps = (Dictionary<string, object?>)decoded["capabilities"]!;
        Assert.Equal(file.Capabilities.Count, caps.Count);
        foreach (var (key, c) in file.Capabilities)
        {
            var entry = (Dictionary<string, object?>)caps[key]!;
            Assert.Equal(c.Supported, entry["supported"]);
            Assert.Equal("unverified", entry["verified"]);
        }
        var helper = (Dictionary<string, object?>)decoded["helper"]!;
        Assert.Equal("windows", helper["platform"]);
    }

    [Fact]
    public void ProtocolVersionIsTheOrchestrators()
    {
        var hello = File.ReadAllText(Path.Combine(RepoFiles.Vectors, "00-hello.json"));
        using var doc = JsonDocument.Parse(hello);
        var p = doc.RootElement.GetProperty("message").GetProperty("protocol");
        Assert.Equal(Protocol.Major, p[0].GetInt32());
        Assert.Equal(Protocol.Minor, p[1].GetInt32());
    }
}

public class GuardTests
{
    private static readonly IReadOnlySet<long> Allowed = new HashSet<long> { 0x10010, 0x20020 };

    [Fact]
    public void PointerOverAnAllowedWindowPasses()
    {
        Assert.True(Guards.PointerAccepts(0x10010, popup: false, appPid: 7, ownerPid: 7, guardPid: 42, Allowed));
    }

    [Fact]
    public void PointerOverNothingOrAnotherWindowIsRefused()
    {
        Assert.False(Guards.PointerAccepts(0, popup: false, appPid: 0, ownerPid: 0, guardPid: 42, Allowed));
        Assert.False(Guards.PointerAccepts(0x30030, popup: false, appPid: 42, ownerPid: 42, guardPid: 42, Allowed)); // the app's other, unlisted window
        Assert.False(Guards.PointerAccepts(0x30030, popup: true, appPid: 9, ownerPid: 9, guardPid: 42, Allowed)); // another app's menu
    }

    [Fact]
    public void PointerOverTheTargetsPopupPasses()
    {
        Assert.True(Guards.PointerAccepts(0x30030, popup: true, appPid: 42, ownerPid: 42, guardPid: 42, Allowed));
        Assert.True(Guards.PointerAccepts(0x30030, popup: true, appPid: 5, ownerPid: 42, guardPid: 42, Allowed));
    }

    [Fact]
    public void FocusOnTheTargetOrItsOwnedDialogPasses()
    {
        Assert.True(Guards.FocusAccepts(0x10010, 42, owner: 0, target: 0x10010, targetPid: 42));
        Assert.True(Guards.FocusAccepts(0x40040, 42, owner: 0x10010, target: 0x10010, targetPid: 42));
    }

    [Fact]
    public void FocusElsewhereIsRefused()
    {
        Assert.False(Guards.FocusAccepts(0, 0, 0, 0x10010, 42));
        Assert.False(Guards.FocusAccepts(0x40040, 9, owner: 0x10010, target: 0x10010, targetPid: 42)); // owned, but another process
        Assert.False(Guards.FocusAccepts(0x40040, 42, owner: 0, target: 0x10010, targetPid: 42)); // same app, not owned by the target
    }
}
