using System.Text.Json;
using Xunit;

namespace Deckhand.Wire.Tests;

/// <summary>
/// Every golden vector of helpers/protocol/vectors (read at run time): its
/// frame decodes to its `message`, and our encoding of the message decodes
/// back to the same meaning (map key order and integer widths free).
/// </summary>
public class VectorTests
{
    public static IEnumerable<object[]> Vectors() =>
        Directory.GetFiles(RepoFiles.Vectors, "*.json").OrderBy(f => f, StringComparer.Ordinal).Select(f => new object[] { Path.GetFileName(f) });

    private static (object? Message, byte[] Frame) Load(string name)
    {
        using var doc = JsonDocument.Parse(File.ReadAllText(Path.Combine(RepoFiles.Vectors, name)));
        var message = JsonValues.From(doc.RootElement.GetProperty("message"));
        var frame = Convert.FromHexString(doc.RootElement.GetProperty("frame_hex").GetString()!);
        return (message, frame);
    }

    [Fact]
    public void ThereAreVectors()
    {
        Assert.True(Vectors().Count() >= 40, "expected the golden vectors of helpers/protocol/vectors");
    }

    [Theory]
    [MemberData(nameof(Vectors))]
    public void FrameDecodesToTheMessage(string name)
    {
        var (message, frame) = Load(name);
        var read = new FrameReader(new MemoryStream(frame), Protocol.MaxFrameBytes).Read();
        var body = Assert.IsType<FrameRead.Body>(read);
        var decoded = Msgpack.Decode(body.Bytes);
        Assert.True(Msgpack.Same(decoded, message), $"{name}: the frame does not decode to the message");
    }

    [Theory]
    [MemberData(nameof(Vectors))]
    public void BinFileIsTheFrame(string name)
    {
        var (_, frame) = Load(name);
        var bin = Path.Combine(RepoFiles.Vectors, Path.ChangeExtension(name, ".bin"));
        Assert.True(File.Exists(bin), $"{bin} is missing");
        Assert.Equal(frame, File.ReadAllBytes(bin));
    }

    [Theory]
    [MemberData(nameof(Vectors))]
    public void MessageReencodesToTheSameMeaning(string name)
    {
        var (message, _) = Load(name);
        var ours = FrameWriter.Frame(message);
        var body = Assert.IsType<FrameRead.Body>(new FrameReader(new MemoryStream(ours), Protocol.MaxFrameBytes).Read());
        Assert.True(Msgpack.Same(Msgpack.Decode(body.Bytes), message), $"{name}: our encoding changes the meaning");
    }

    [Theory]
    [MemberData(nameof(Vectors))]
    public void RequestsReadThroughArgs(string name)
    {
        var (message, _) = Load(name);
        var m = Assert.IsAssignableFrom<IDictionary<string, object?>>(message);
        if (m["type"] as string != "request") return;
        var f = new Args(m);
        Assert.True(f.Long("id") > 0);
        Assert.False(string.IsNullOrEmpty(f.String("op")));
        // Unknown fields (vector 17) are tolerated: reading the known ones never throws.
        _ = f.Map("args");
    }
}
