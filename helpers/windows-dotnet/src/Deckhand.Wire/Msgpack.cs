using System.Buffers;
using MessagePack;

namespace Deckhand.Wire;

/// <summary>
/// msgpack values as plain .NET objects: a map is
/// <see cref="Dictionary{TKey,TValue}"/> of string keys, an array is
/// <see cref="List{T}"/>, integers are <see cref="long"/> (or
/// <see cref="ulong"/> above long.MaxValue), floats are <see cref="double"/>,
/// strings <see cref="string"/>, binary <see cref="byte"/>[], nil null.
/// The protocol is a free-form map per frame and tolerates unknown fields, so
/// frames stay values; ops read what they know through <see cref="Args"/>.
/// Encoded with MessagePack-CSharp's MessagePackWriter: integers in their
/// smallest form, maps with string keys (rmp-serde's to_vec_named).
/// </summary>
public static class Msgpack
{
    /// <summary>How deep a value may nest before decoding refuses it (a hostile frame cannot blow the stack).</summary>
    public const int MaxDepth = 64;

    public static object? Decode(ReadOnlyMemory<byte> body)
    {
        var reader = new MessagePackReader(body);
        var value = ReadValue(ref reader, 0);
        if (!reader.End)
        {
            throw new WireFormatException($"{body.Length - reader.Consumed} trailing bytes after the msgpack value");
        }
        return value;
    }

    public static byte[] Encode(object? value)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        var writer = new MessagePackWriter(buffer);
        WriteValue(ref writer, value, 0);
        writer.Flush();
        return buffer.WrittenSpan.ToArray();
    }

    private static object? ReadValue(ref MessagePackReader reader, int depth)
    {
        if (depth > MaxDepth)
        {
            throw new WireFormatException("msgpack value nested too deep");
        }
        try
        {
            switch (reader.NextMessagePackType)
            {
                case MessagePackType.Nil:
                    reader.ReadNil();
                    return null;
                case MessagePackType.Boolean:
                    return reader.ReadBoolean();
                case MessagePackType.Integer:
                    if (reader.NextCode == MessagePackCode.UInt64)
                    {
                        ulong u = reader.ReadUInt64();
                        return u <= long.MaxValue ? (object)(long)u : u;
                    }
                    return reader.ReadInt64();
                case MessagePackType.Float:
                    return reader.NextCode == MessagePackCode.Float32 ? (double)reader.ReadSingle() : reader.ReadDouble();
                case MessagePackType.String:
                    return reader.ReadString() ?? "";
                case MessagePackType.Binary:
                    {
                        var seq = reader.ReadBytes();
                        return seq.HasValue ? seq.Value.ToArray() : Array.Empty<byte>();
                    }
                case MessagePackType.Array:
                    {
                        int n = reader.ReadArrayHeader();
                        var list = new List<object?>(Math.Min(n, 1024));
                        for (int i = 0; i < n; i++)
                        {
                            list.Add(ReadValue(ref reader, depth + 1));
                        }
                        return list;
                    }
                case MessagePackType.Map:
                    {
                        int n = reader.ReadMapHeader();
                        var map = new Dictionary<string, object?>(Math.Min(n, 1024), StringComparer.Ordinal);
                        for (int i = 0; i < n; i++)
                        {
                            if (reader.NextMessagePackType != MessagePackType.String)
                            {
                                throw new WireFormatException("a map key is not a string");
                            }
                            string key = reader.ReadString() ?? "";
                            map[key] = ReadValue(ref reader, depth + 1);
                        }
                        return map;
                    }
                case MessagePackType.Extension:
                    throw new WireFormatException("msgpack extension types are not part of the protocol");
                default:
                    throw new WireFormatException($"unknown msgpack code 0x{reader.NextCode:x2}");
            }
        }
        catch (EndOfStreamException e)
        {
            throw new WireFormatException("truncated msgpack value", e);
        }
        catch (MessagePackSerializationException e)
        {
            throw new WireFormatException(e.Message, e);
        }
    }

    private static void WriteValue(ref MessagePackWriter writer, object? value, int depth)
    {
        if (depth > MaxDepth)
        {
            throw new InvalidOperationException("value nested too deep to encode");
        }
        switch (value)
        {
            case null:
                writer.WriteNil();
                break;
            case bool b:
                writer.Write(b);
                break;
            case string s:
                writer.Write(s);
                break;
            case byte[] bytes:
                writer.Write(bytes.AsSpan());
                break;
            case int i:
                writer.Write((long)i);
                break;
            case long l:
                writer.Write(l);
                break;
            case uint ui:
                writer.Write((ulong)ui);
                break;
            case ulong ul:
                writer.Write(ul);
                break;
            case short sh:
                writer.Write((long)sh);
                break;
            case ushort us:
                writer.Write((ulong)us);
                break;
            case byte by:
                writer.Write((ulong)by);
                break;
            case double d:
                writer.Write(d);
                break;
            case float f:
                writer.Write((double)f);
                break;
            case Enum e:
                writer.Write(Convert.ToInt64(e, System.Globalization.CultureInfo.InvariantCulture));
                break;
            case IWireValue w:
                WriteValue(ref writer, w.ToWire(), depth);
                break;
            case IDictionary<string, object?> map:
                writer.WriteMapHeader(map.Count);
                foreach (var (k, v) in map)
                {
                    writer.Write(k);
                    WriteValue(ref writer, v, depth + 1);
                }
                break;
            case System.Collections.IEnumerable seq:
                {
                    var items = seq.Cast<object?>().ToList();
                    writer.WriteArrayHeader(items.Count);
                    foreach (var item in items)
                    {
                        WriteValue(ref writer, item, depth + 1);
                    }
                    break;
                }
            default:
                throw new InvalidOperationException($"cannot encode a {value.GetType().Name} as msgpack");
        }
    }

    /// <summary>
    /// Semantic equality of two decoded values: maps as sets of entries, numbers
    /// by value whatever their width (an integer equals a float of the same
    /// value), arrays in order.
    /// </summary>
    public static bool Same(object? a, object? b)
    {
        if (a is null || b is null)
        {
            return a is null && b is null;
        }
        if (IsNumber(a) && IsNumber(b))
        {
            if (IsInteger(a) && IsInteger(b))
            {
                return ToInt128(a) == ToInt128(b);
            }
            return Convert.ToDouble(a, System.Globalization.CultureInfo.InvariantCulture) == Convert.ToDouble(b, System.Globalization.CultureInfo.InvariantCulture);
        }
        if (a is IDictionary<string, object?> ma && b is IDictionary<string, object?> mb)
        {
            return ma.Count == mb.Count && ma.All(kv => mb.TryGetValue(kv.Key, out var v) && Same(kv.Value, v));
        }
        if (a is string sa && b is string sb)
        {
            return sa == sb;
        }
        if (a is byte[] ba && b is byte[] bb)
        {
            return ba.AsSpan().SequenceEqual(bb);
        }
        if (a is IList<object?> la && b is IList<object?> lb)
        {
            if (la.Count != lb.Count)
            {
                return false;
            }
            for (int i = 0; i < la.Count; i++)
            {
                if (!Same(la[i], lb[i]))
                {
                    return false;
                }
            }
            return true;
        }
        return a.Equals(b);
    }

    private static bool IsInteger(object o) => o is long or ulong or int or uint or short or ushort or byte or sbyte;

    private static bool IsNumber(object o) => IsInteger(o) || o is double or float;

    private static Int128 ToInt128(object o) => o switch
    {
        ulong u => u,
        _ => Convert.ToInt64(o, System.Globalization.CultureInfo.InvariantCulture),
    };
}

/// <summary>A typed wire struct that renders itself as a msgpack value (a map).</summary>
public interface IWireValue
{
    object? ToWire();
}

/// <summary>A frame that is not valid msgpack, or not the protocol's shape.</summary>
public sealed class WireFormatException : Exception
{
    public WireFormatException(string message) : base(message) { }

    public WireFormatException(string message, Exception inner) : base(message, inner) { }
}
