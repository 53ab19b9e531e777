using System.Buffers.Binary;

namespace Deckhand.Wire;

/// <summary>What <see cref="FrameReader.Read"/> found on the stream.</summary>
public abstract record FrameRead
{
    /// <summary>A whole frame body (one msgpack map).</summary>
    public sealed record Body(byte[] Bytes) : FrameRead;

    /// <summary>
    /// A frame above the limit that was skipped exactly (its body starts like a
    /// msgpack map, so its length prefix is believed): <see cref="Head"/> is its
    /// first bytes, where a request's type, id and op are.
    /// </summary>
    public sealed record Skipped(long Length, byte[] Head) : FrameRead;

    /// <summary>stdin closed between frames.</summary>
    public sealed record Eof : FrameRead;
}

/// <summary>
/// Length-prefixed frames: a 4-byte unsigned big-endian length N, then N
/// bytes of one msgpack map (docs/protocol.md, Transport).
/// </summary>
public sealed class FrameReader
{
    /// <summary>How much of an oversized frame is kept to find its request id.</summary>
    public const int SkippedHead = 4096;

    private readonly Stream _input;
    private readonly long _maxFrameBytes;

    public FrameReader(Stream input, long maxFrameBytes)
    {
        _input = input;
        _maxFrameBytes = maxFrameBytes;
    }

    /// <summary>
    /// The next frame. A frame above the limit whose body does not start with a
    /// map marker means the stream is out of step: <see cref="WireFormatException"/>
    /// (fatal). A stream that ends inside a frame is fatal too.
    /// </summary>
    public FrameRead Read()
    {
        var prefix = new byte[4];
        int got = ReadAtMost(prefix);
        if (got == 0)
        {
            return new FrameRead.Eof();
        }
        if (got < 4)
        {
            throw new WireFormatException("stdin ended inside a length prefix");
        }
        long len = BinaryPrimitives.ReadUInt32BigEndian(prefix);
        if (len > _maxFrameBytes)
        {
            return Skip(len);
        }
        var body = new byte[len];
        if (ReadAtMost(body) < len)
        {
            throw new WireFormatException($"stdin ended inside a frame of {len} bytes");
        }
        return new FrameRead.Body(body);
    }

    private FrameRead Skip(long len)
    {
        var first = new byte[1];
        if (ReadAtMost(first) < 1)
        {
            throw new WireFormatException("stdin ended inside an oversized frame");
        }
        if (!IsMapMarker(first[0]))
        {
            throw new WireFormatException($"a frame of {len} bytes exceeds the limit of {_maxFrameBytes} and is not a msgpack map: the stream is out of step");
        }
        int headLen = (int)Math.Min(SkippedHead, len);
        var head = new byte[headLen];
        head[0] = first[0];
        if (ReadAtMost(head.AsSpan(1)) < headLen - 1)
        {
            throw new WireFormatException("stdin ended inside an oversized frame");
        }
        long rest = len - headLen;
        var sink = new byte[64 * 1024];
        while (rest > 0)
        {
            int n = _input.Read(sink, 0, (int)Math.Min(sink.Length, rest));
            if (n <= 0)
            {
                throw new WireFormatException("stdin ended inside an oversized frame");
            }
            rest -= n;
        }
        return new FrameRead.Skipped(len, head);
    }

    private int ReadAtMost(Span<byte> buffer)
    {
        int total = 0;
        while (total < buffer.Length)
        {
            int n = _input.Read(buffer[total..]);
            if (n <= 0)
            {
                break;
            }
            total += n;
        }
        return total;
    }

    public static bool IsMapMarker(byte b) => (b >= 0x80 && b <= 0x8f) || b == 0xde || b == 0xdf;
}

/// <summary>Writes whole frames; one writer per stream, safe across threads.</summary>
public sealed class FrameWriter
{
    private readonly Stream _output;
    private readonly object _lock = new();

    public FrameWriter(Stream output)
    {
        _output = output;
    }

    public static byte[] Frame(object? message)
    {
        byte[] body = Msgpack.Encode(message);
        var frame = new byte[4 + body.Length];
        BinaryPrimitives.WriteUInt32BigEndian(frame, (uint)body.Length);
        body.CopyTo(frame, 4);
        return frame;
    }

    public void Write(object? message)
    {
        byte[] frame = Frame(message);
        lock (_lock)
        {
            _output.Write(frame, 0, frame.Length);
            _output.Flush();
        }
    }
}
