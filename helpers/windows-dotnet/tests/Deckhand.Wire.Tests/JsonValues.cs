using System.Text.Json;

namespace Deckhand.Wire.Tests;

/// <summary>A vector's JSON `message` as the same plain values the msgpack decoder gives.</summary>
internal static class JsonValues
{
    public static object? From(JsonElement e) => e.ValueKind switch
    {
        JsonValueKind.Null or JsonValueKind.Undefined => null,
        JsonValueKind.True => true,
        JsonValueKind.False => false,
        JsonValueKind.String => e.GetString(),
        JsonValueKind.Number => e.TryGetInt64(out long l) ? l : e.TryGetUInt64(out ulong u) ? u : e.GetDouble(),
        JsonValueKind.Array => e.EnumerateArray().Select(From).ToList(),
        JsonValueKind.Object => e.EnumerateObject().ToDictionary(p => p.Name, p => From(p.Value), StringComparer.Ordinal),
        _ => throw new InvalidOperationException($"unexpected JSON {e.ValueKind}"),
    };
}
