using System.Buffers.Binary;
using Xunit;

namespace Deckhand.Wire.Tests;

/// <summary>The dispatcher against scripted frames: hello, tolerance, deadlines, cancel, oversized frames, EOF.</summary>
public class DispatcherTests
{
    private sealed class FakeHandler : IOpHandler
    {
        public bool Knows(string op) => op is "echo" or "slow" or "input" or "boom" or "element_action";

        public bool Serialized(string op) => op == "input";

        public Route RouteOf(string op) => op == "input" ? Route.ForegroundInput : Route.Accessibility;

        public async Task<OpOutcome> HandleAsync(OpCall call)
        {
            switch (call.Op)
            {
                case "echo":
                    return new OpOutcome(new Dictionary<string, object?> { ["x"] = call.Args.LongOrNull("x") });
                case "slow":
                    await Task.Delay(TimeSpan.FromSeconds(5));
                    return new OpOutcome(new Dictionary<string, object?>());
                case "input":
                    await Task.Delay(call.Args.Int("ms", 0));
                    return new OpOutcome(new Dictionary<string, object?> { ["steps_completed"] = 1L }, Receipt.Foreground(Delivery.Submitted));
                case "element_action":
                    throw new HelperError(Protocol.Codes.ActionFailed, "no receipt given");
                default:
                    throw new InvalidOperationException("boom");
            }
        }
    }

    private static byte[] Frame(Dictionary<string, object?> m) => FrameWriter.Frame(m);

    private static Dictionary<string, object?> Request(long id, string op, long deadline = 1000, Dictionary<string, object?>? args = null) => new()
    {
        ["type"] = "request",
        ["id"] = id,
        ["op"] = op,
        ["deadline_ms"] = deadline,
        ["args"] = args ?? new Dictionary<string, object?>(),
    };

    private static (int Code, List<Dictionary<string, object?>> Frames) Run(params byte[][] frames)
    {
        var input = new MemoryStream(frames.SelectMany(f => f).ToArray());
        var output = new MemoryStream();
        var d = new Dispatcher(input, output, new FakeHandler(), TextWriter.Null, "test");
        int code = d.Run(new Dictionary<string, object?> { ["type"] = "hello" });
        output.Position = 0;
        var reader = new FrameReader(output, Protocol.MaxFrameBytes);
        var list = new List<Dictionary<string, object?>>();
        try
        {
            while (reader.Read() is FrameRead.Body b) list.Add((Dictionary<string, object?>)Msgpack.Decode(b.Bytes)!);
        }
        catch (WireFormatException)
        {
            // After a fatal exit (code 2) a request still in flight may be half written: what came before is enough.
            Assert.Equal(2, code);
        }
        return (code, list);
    }

    private static Dictionary<string, object?> Answer(List<Dictionary<string, object?>> frames, long id) =>
        frames.Single(f => f["type"] as string == "response" && Equals(f["id"], id));

    private static string? Code(Dictionary<string, object?> response) =>
        (response["error"] as Dictionary<string, object?>)?["code"] as string;

    [Fact]
    public void HelloFirstThenAnswersThenExitsAtEof()
    {
        var (code, frames) = Run(Frame(Request(1, "echo", args: new() { ["x"] = 7L, ["unknown_field"] = "ignored" })));
        Assert.Equal(0, code);
        Assert.Equal("hello", frames[0]["type"]);
        var r = Answer(frames, 1);
        Assert.Equal(true, r["ok"]);
        Assert.Equal(7L, ((Dictionary<string, object?>)r["result"]!)["x"]);
    }

    [Fact]
    public void UnknownOpIsInvalidArguments()
    {
        var (_, frames) = Run(Frame(Request(1, "no_such_op")));
        Assert.Equal("INVALID_ARGUMENTS", Code(Answer(frames, 1)));
    }

    [Fact]
    public void DeadlineIsAnsweredWithTimeout()
    {
        var (_, frames) = Run(Frame(Request(1, "slow", deadline: 100)));
        Assert.Equal("TIMEOUT", Code(Answer(frames, 1)));
    }

    [Fact]
    public void InternalErrorsAreAnswered()
    {
        var (_, frames) = Run(Frame(Request(1, "boom")));
        Assert.Equal("INTERNAL", Code(Answer(frames, 1)));
    }

    [Fact]
    public void MutationErrorsAlwaysCarryAReceipt()
    {
        var (_, frames) = Run(Frame(Request(1, "element_action")));
        var r = Answer(frames, 1);
        Assert.Equal("ACTION_FAILED", Code(r));
        Assert.True(r.ContainsKey("receipt"));
    }

    [Fact]
    public void CancelledQueuedInputIsNotDispatched()
    {
        var (_, frames) = Run(
            Frame(Request(1, "input", args: new() { ["ms"] = 300L })),
            Frame(Request(2, "input")),
            Frame(new Dictionary<string, object?> { ["type"] = "cancel", ["id"] = 2L }));
        Assert.Equal(true, Answer(frames, 1)["ok"]);
        var r2 = Answer(frames, 2);
        Assert.Equal("ACTION_FAILED", Code(r2));
        var receipt = (Dictionary<string, object?>)r2["receipt"]!;
        Assert.Equal("not_dispatched", receipt["delivery"]);
    }

    [Fact]
    public void OversizedRequestIsRefusedAndTheNextOneAnswered()
    {
        var big = Frame(Request(1, "echo", args: new() { ["blob"] = new byte[Protocol.MaxFrameBytes] }));
        Assert.True(BinaryPrimitives.ReadUInt32BigEndian(big) > Protocol.MaxFrameBytes);
        var (code, frames) = Run(big, Frame(Request(2, "echo")));
        Assert.Equal(0, code);
        var r1 = Answer(frames, 1);
        Assert.Equal("INVALID_ARGUMENTS", Code(r1));
        Assert.Equal(true, Answer(frames, 2)["ok"]);
    }

    [Fact]
    public void UnknownFrameTypeEndsTheHelper()
    {
        var (code, _) = Run(Frame(new Dictionary<string, object?> { ["type"] = "bogus" }));
        Assert.Equal(2, code);
    }

    [Fact]
    public void DuplicateIdEndsTheHelper()
    {
        // Unknown ops are answered on the reading thread: nothing is in flight at the exit.
        var (code, _) = Run(Frame(Request(1, "no_such_op")), Frame(Request(1, "no_such_op")));
        Assert.Equal(2, code);
    }
}
