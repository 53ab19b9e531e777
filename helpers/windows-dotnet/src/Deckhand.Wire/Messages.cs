using System.Text.Json;

namespace Deckhand.Wire;

/// <summary>The protocol version this helper speaks (src/wire/messages.ts PROTOCOL_VERSION).</summary>
public static class Protocol
{
    public const int Major = 2;
    public const int Minor = 3;

    /// <summary>The largest request frame read (deckhand never sends more than 16 MiB).</summary>
    public const long MaxFrameBytes = 16 * 1024 * 1024;

    /// <summary>Error codes of docs/protocol.md (helper_error_codes in schema.json).</summary>
    public static class Codes
    {
        public const string InvalidArguments = "INVALID_ARGUMENTS";
        public const string AppNotFound = "APP_NOT_FOUND";
        public const string WindowNotFound = "WINDOW_NOT_FOUND";
        public const string ElementUnresolvable = "ELEMENT_UNRESOLVABLE";
        public const string ActionUnsupported = "ACTION_UNSUPPORTED";
        public const string ActionFailed = "ACTION_FAILED";
        public const string PermissionDenied = "PERMISSION_DENIED";
        public const string ScreenshotFailed = "SCREENSHOT_FAILED";
        public const string Timeout = "TIMEOUT";
        public const string Internal = "INTERNAL";
        public const string FocusMismatch = "FOCUS_MISMATCH";
        public const string PolicyDenied = "POLICY_DENIED";
        public const string VerificationFailed = "VERIFICATION_FAILED";
        public const string AppExited = "APP_EXITED";
    }

    /// <summary>The ops that change the desktop: their responses always carry a receipt.</summary>
    public static bool Mutates(string op) => op is "element_action" or "input" or "launch" or "window_op" or "paste" or "menu_close" or "point_click";
}

public enum Delivery { NotDispatched, Submitted, Partial, Unknown }

public enum Route { Accessibility, Synthetic, ForegroundInput }

/// <summary>What a mutation did (docs/protocol.md, Receipts).</summary>
public sealed record Receipt(Delivery Delivery, Route Route, bool KeysReleased = true, bool ButtonsReleased = true, bool? PointerRestored = null) : IWireValue
{
    public static Receipt Accessibility(Delivery d) => new(d, Route.Accessibility);

    public static Receipt Foreground(Delivery d) => new(d, Route.ForegroundInput);

    public object? ToWire() => new Dictionary<string, object?>
    {
        ["delivery"] = Delivery switch
        {
            Delivery.NotDispatched => "not_dispatched",
            Delivery.Submitted => "submitted",
            Delivery.Partial => "partial",
            _ => "unknown",
        },
        ["route"] = Route switch
        {
            Route.Accessibility => "accessibility",
            Route.Synthetic => "synthetic",
            _ => "foreground_input",
        },
        ["cleanup"] = new Dictionary<string, object?>
        {
            ["keys_released"] = KeysReleased,
            ["buttons_released"] = ButtonsReleased,
            ["pointer_restored"] = PointerRestored,
        },
    };
}

/// <summary>
/// An error answer: code, message, flat details, and for a mutation the
/// receipt of what reached the OS. The one way ops report failure.
/// </summary>
public sealed class HelperError : Exception
{
    public string Code { get; }

    public Dictionary<string, object?> Details { get; } = new(StringComparer.Ordinal);

    public Receipt? Receipt { get; private set; }

    public HelperError(string code, string message) : base(message)
    {
        Code = code;
    }

    public HelperError With(string key, object? value)
    {
        Details[key] = value;
        return this;
    }

    public HelperError WithReceipt(Receipt receipt)
    {
        Receipt = receipt;
        return this;
    }

    public static HelperError Invalid(string message) => new(Protocol.Codes.InvalidArguments, message);

    public static HelperError Unsupported(string message) => new(Protocol.Codes.ActionUnsupported, message);

    public Dictionary<string, object?> ToWire() => new()
    {
        ["code"] = Code,
        ["message"] = Message,
        ["details"] = Details,
    };
}

/// <summary>A successful mutation's result with its receipt.</summary>
public sealed record MutationResult(Dictionary<string, object?> Result, Receipt Receipt);

/// <summary>
/// Typed reads of a request's args map. Unknown keys are ignored (the
/// protocol's tolerance rule); a known key of the wrong type is
/// INVALID_ARGUMENTS naming it.
/// </summary>
public sealed class Args
{
    private readonly IDictionary<string, object?> _map;

    public Args(IDictionary<string, object?>? map)
    {
        _map = map ?? new Dictionary<string, object?>();
    }

    public static Args Of(object? value) => new(value as IDictionary<string, object?>);

    public bool Has(string key) => _map.TryGetValue(key, out var v) && v is not null;

    public object? Raw(string key) => _map.TryGetValue(key, out var v) ? v : null;

    public long Long(string key)
    {
        return LongOrNull(key) ?? throw HelperError.Invalid($"args.{key} is required (an integer)");
    }

    public long? LongOrNull(string key)
    {
        var v = Raw(key);
        return v switch
        {
            null => null,
            long l => l,
            ulong u when u <= long.MaxValue => (long)u,
            double d when Math.Floor(d) == d && Math.Abs(d) < 9.2e18 => (long)d,
            _ => throw HelperError.Invalid($"args.{key} is not an integer"),
        };
    }

    public int Int(string key, int fallback)
    {
        long? v = LongOrNull(key);
        if (v is null)
        {
            return fallback;
        }
        return (int)Math.Clamp(v.Value, int.MinValue, int.MaxValue);
    }

    public bool Bool(string key, bool fallback = false)
    {
        var v = Raw(key);
        return v switch
        {
            null => fallback,
            bool b => b,
            _ => throw HelperError.Invalid($"args.{key} is not a boolean"),
        };
    }

    public string? StringOrNull(string key)
    {
        var v = Raw(key);
        return v switch
        {
            null => null,
            string s => s,
            _ => throw HelperError.Invalid($"args.{key} is not a string"),
        };
    }

    public string String(string key) => StringOrNull(key) ?? throw HelperError.Invalid($"args.{key} is required (a string)");

    public Args? Map(string key)
    {
        var v = Raw(key);
        return v switch
        {
            null => null,
            IDictionary<string, object?> m => new Args(m),
            _ => throw HelperError.Invalid($"args.{key} is not a map"),
        };
    }

    public IReadOnlyList<object?> List(string key)
    {
        var v = Raw(key);
        return v switch
        {
            null => Array.Empty<object?>(),
            IList<object?> l => l.ToList(),
            _ => throw HelperError.Invalid($"args.{key} is not an array"),
        };
    }

    public IReadOnlyList<Args> Maps(string key) => List(key).Select((o, i) => o is IDictionary<string, object?> m ? new Args(m) : throw HelperError.Invalid($"args.{key}[{i}] is not a map")).ToList();

    public IReadOnlyList<string> Strings(string key) => List(key).Select((o, i) => o as string ?? throw HelperError.Invalid($"args.{key}[{i}] is not a string")).ToList();

    public IReadOnlyList<long> Longs(string key) => List(key).Select((o, i) => o switch
    {
        long l => l,
        ulong u when u <= long.MaxValue => (long)u,
        _ => throw HelperError.Invalid($"args.{key}[{i}] is not an integer"),
    }).ToList();
}

/// <summary>One capability entry of the hello.</summary>
public sealed record Capability(bool Supported, string Verified, string? Note);

/// <summary>
/// The hello capabilities, read from capabilities.json (the source of truth,
/// embedded in the executable; scripts/gen-support.ts renders docs/support.md
/// from the same file). Every entry must say "unverified" until a Windows run
/// proves it.
/// </summary>
public sealed class CapabilityFile
{
    public required string Helper { get; init; }

    public required string Platform { get; init; }

    public required string Backend { get; init; }

    public required IReadOnlyDictionary<string, Capability> Capabilities { get; init; }

    public static CapabilityFile Parse(string json)
    {
        using var doc = JsonDocument.Parse(json);
        var root = doc.RootElement;
        var caps = new SortedDictionary<string, Capability>(StringComparer.Ordinal);
        foreach (var entry in root.GetProperty("capabilities").EnumerateObject())
        {
            var v = entry.Value;
            string? note = v.TryGetProperty("note", out var n) && n.ValueKind == JsonValueKind.String ? n.GetString() : null;
            caps[entry.Name] = new Capability(v.GetProperty("supported").GetBoolean(), v.GetProperty("verified").GetString() ?? "unverified", note);
        }
        return new CapabilityFile
        {
            Helper = root.GetProperty("helper").GetString() ?? "",
            Platform = root.GetProperty("platform").GetString() ?? "",
            Backend = root.GetProperty("backend").GetString() ?? "",
            Capabilities = caps,
        };
    }

    public bool Supports(string key) => Capabilities.TryGetValue(key, out var c) && c.Supported;

    /// <summary>The hello frame (docs/protocol.md, Frames).</summary>
    public Dictionary<string, object?> Hello(string version) => new()
    {
        ["type"] = "hello",
        ["protocol"] = new List<object?> { (long)Protocol.Major, (long)Protocol.Minor },
        ["helper"] = new Dictionary<string, object?>
        {
            ["name"] = Helper,
            ["version"] = version,
            ["platform"] = Platform,
            ["backend"] = Backend,
        },
        ["capabilities"] = Capabilities.ToDictionary(
            kv => kv.Key,
            kv =>
            {
                var m = new Dictionary<string, object?> { ["supported"] = kv.Value.Supported, ["verified"] = kv.Value.Verified };
                if (kv.Value.Note is not null)
                {
                    m["note"] = kv.Value.Note;
                }
                return (object?)m;
            }),
        ["limits"] = new Dictionary<string, object?> { ["max_frame_bytes"] = Protocol.MaxFrameBytes },
    };
}

/// <summary>Builders of the frames a helper sends.</summary>
public static class Frames
{
    public static Dictionary<string, object?> Ok(long id, object? result, Receipt? receipt)
    {
        var m = new Dictionary<string, object?> { ["type"] = "response", ["id"] = id, ["ok"] = true, ["result"] = result };
        if (receipt is not null)
        {
            m["receipt"] = receipt;
        }
        return m;
    }

    public static Dictionary<string, object?> Error(long id, HelperError e)
    {
        var m = new Dictionary<string, object?> { ["type"] = "response", ["id"] = id, ["ok"] = false, ["error"] = e.ToWire() };
        if (e.Receipt is not null)
        {
            m["receipt"] = e.Receipt;
        }
        return m;
    }

    public static Dictionary<string, object?> Event(string name, Dictionary<string, object?> data) => new()
    {
        ["type"] = "event",
        ["event"] = name,
        ["data"] = data,
    };

    /// <summary>
    /// The first entries of a truncated request body: type, id and op when they
    /// come before the first value that does not fit (deckhand writes type, id,
    /// op, deadline_ms, then args). Never throws.
    /// </summary>
    public static (string? Type, long? Id, string? Op) PeekHead(byte[] head)
    {
        string? type = null;
        long? id = null;
        string? op = null;
        try
        {
            var reader = new MessagePack.MessagePackReader(head);
            int n = reader.ReadMapHeader();
            for (int i = 0; i < Math.Min(n, 64); i++)
            {
                string? key = reader.ReadString();
                switch (key)
                {
                    case "type":
                        type = reader.ReadString();
                        break;
                    case "id":
                        id = reader.ReadInt64();
                        break;
                    case "op":
                        op = reader.ReadString();
                        break;
                    default:
                        reader.Skip();
                        break;
                }
            }
        }
        catch (Exception)
        {
            // a value ran past the kept head: what was read so far is all we know
        }
        return (type, id, op);
    }
}
