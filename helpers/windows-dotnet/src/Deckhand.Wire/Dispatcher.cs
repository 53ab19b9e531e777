using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;

namespace Deckhand.Wire;

/// <summary>One request as an op sees it.</summary>
public sealed class OpCall
{
    private readonly CancellationTokenSource _cts;
    private volatile bool _cancelled;

    internal OpCall(long id, string op, Args args, TimeSpan budget, Action<Dictionary<string, object?>> emit)
    {
        Id = id;
        Op = op;
        Args = args;
        Budget = budget;
        Clock = Stopwatch.StartNew();
        _cts = new CancellationTokenSource(budget);
        Emit = emit;
    }

    public long Id { get; }

    public string Op { get; }

    public Args Args { get; }

    /// <summary>The request's deadline_ms (10 s when none was given).</summary>
    public TimeSpan Budget { get; }

    public Stopwatch Clock { get; }

    /// <summary>Fires at the deadline, or when deckhand cancels the request.</summary>
    public CancellationToken Token => _cts.Token;

    /// <summary>deckhand sent a cancel frame for this id.</summary>
    public bool Cancelled => _cancelled;

    public TimeSpan Remaining => TimeSpan.FromTicks(Math.Max(0, (Budget - Clock.Elapsed).Ticks));

    public bool Expired => Clock.Elapsed >= Budget;

    /// <summary>Sends an unsolicited frame (an event).</summary>
    public Action<Dictionary<string, object?>> Emit { get; }

    internal void Cancel()
    {
        _cancelled = true;
        try
        {
            _cts.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }
}

/// <summary>What an op answered: its result, and a receipt when it mutates.</summary>
public sealed record OpOutcome(object Result, Receipt? Receipt = null);

/// <summary>The platform's ops behind the dispatcher.</summary>
public interface IOpHandler
{
    /// <summary>The ops this helper knows (any other is INVALID_ARGUMENTS).</summary>
    bool Knows(string op);

    /// <summary>Ops run one at a time in arrival order (input); the rest run concurrently.</summary>
    bool Serialized(string op);

    /// <summary>The route a mutation's receipt names when it is refused before reaching the op.</summary>
    Route RouteOf(string op);

    /// <summary>Runs the op; failures are <see cref="HelperError"/>.</summary>
    Task<OpOutcome> HandleAsync(OpCall call);
}

/// <summary>
/// The helper's main loop: hello, then frames from stdin until EOF.
/// Requests are pipelined (each answered once, in any order); serialised ops
/// (input) go through one queue; a cancel stops a queued request and tells a
/// running one; every request is answered by its deadline (TIMEOUT), even if
/// the op is stuck in an OS call; a request frame above the limit is refused
/// and the loop goes on.
/// </summary>
public sealed class Dispatcher
{
    private readonly FrameReader _reader;
    private readonly FrameWriter _writer;
    private readonly IOpHandler _handler;
    private readonly TextWriter _log;
    private readonly string _name;
    private readonly ConcurrentDictionary<long, OpCall> _live = new();
    private readonly HashSet<long> _seen = new();
    private readonly List<Task> _inflight = new();
    private readonly Channel<OpCall> _serial = Channel.CreateUnbounded<OpCall>(new UnboundedChannelOptions { SingleReader = true });

    public Dispatcher(Stream input, Stream output, IOpHandler handler, TextWriter log, string name)
    {
        _reader = new FrameReader(input, Protocol.MaxFrameBytes);
        _writer = new FrameWriter(output);
        _handler = handler;
        _log = log;
        _name = name;
    }

    public FrameWriter Writer => _writer;

    /// <summary>Runs until stdin closes (0) or the stream breaks the protocol (2).</summary>
    public int Run(Dictionary<string, object?> hello)
    {
        _writer.Write(hello);
        var serialLoop = Task.Run(SerialLoopAsync);
        while (true)
        {
            FrameRead read;
            try
            {
                read = _reader.Read();
            }
            catch (WireFormatException e)
            {
                Log($"malformed frame: {e.Message}; exiting with code 2");
                return 2;
            }
            catch (IOException e)
            {
                Log($"stdin failed: {e.Message}; exiting");
                return 2;
            }
            switch (read)
            {
                case FrameRead.Eof:
                    // stdin closed: let the requests in flight and in the input queue answer (each is bounded by its deadline).
                    _serial.Writer.TryComplete();
                    serialLoop.Wait(TimeSpan.FromSeconds(60));
                    WaitInflight();
                    return 0;
                case FrameRead.Skipped skipped:
                    if (!RefuseOversized(skipped))
                    {
                        return 2;
                    }
                    break;
                case FrameRead.Body body:
                    if (!Accept(body.Bytes))
                    {
                        return 2;
                    }
                    break;
            }
        }
    }

    private void WaitInflight()
    {
        Task[] tasks;
        lock (_inflight)
        {
            tasks = _inflight.ToArray();
        }
        // Each request is bounded by its deadline; give them that, no more.
        Task.WaitAll(tasks.Select(t => t.WaitAsync(TimeSpan.FromSeconds(30)).ContinueWith(_ => { })).ToArray());
    }

    private bool RefuseOversized(FrameRead.Skipped skipped)
    {
        var (type, id, op) = Frames.PeekHead(skipped.Head);
        if (type != "request" || id is null || !_seen.Add(id.Value))
        {
            Log($"a frame of {skipped.Length} bytes exceeds the limit of {Protocol.MaxFrameBytes} and is not a request with a fresh id; exiting with code 2");
            return false;
        }
        Log($"{op} #{id}: request frame of {skipped.Length} bytes exceeds the limit of {Protocol.MaxFrameBytes}: skipped, refused");
        var e = HelperError.Invalid($"the request frame of {skipped.Length} bytes exceeds max_frame_bytes ({Protocol.MaxFrameBytes}): not read")
            .With("frame_bytes", skipped.Length)
            .With("max_frame_bytes", Protocol.MaxFrameBytes);
        if (op is not null && Protocol.Mutates(op))
        {
            e.WithReceipt(new Receipt(Delivery.NotDispatched, _handler.RouteOf(op)));
        }
        _writer.Write(Frames.Error(id.Value, e));
        return true;
    }

    private bool Accept(byte[] body)
    {
        object? value;
        try
        {
            value = Msgpack.Decode(body);
        }
        catch (WireFormatException e)
        {
            Log($"a frame body is not msgpack: {e.Message}; exiting with code 2");
            return false;
        }
        if (value is not IDictionary<string, object?> frame)
        {
            Log("a frame body is not a msgpack map; exiting with code 2");
            return false;
        }
        var f = new Args(frame);
        string? type = frame.TryGetValue("type", out var t) ? t as string : null;
        switch (type)
        {
            case "request":
                return AcceptRequest(f);
            case "cancel":
                {
                    long? id = SafeLong(f, "id");
                    if (id is not null && _live.TryGetValue(id.Value, out var call))
                    {
                        call.Cancel();
                    }
                    return true; // a cancel for a finished or unknown id is ignored
                }
            default:
                Log($"unknown frame type {type ?? "(none)"}; exiting with code 2");
                return false;
        }
    }

    private static long? SafeLong(Args f, string key)
    {
        try
        {
            return f.LongOrNull(key);
        }
        catch (HelperError)
        {
            return null;
        }
    }

    private bool AcceptRequest(Args f)
    {
        long? id = SafeLong(f, "id");
        if (id is null)
        {
            Log("a request without an integer id; exiting with code 2");
            return false;
        }
        if (!_seen.Add(id.Value))
        {
            Log($"duplicate request id {id}: protocol breach; exiting with code 2");
            return false;
        }
        string op = f.Raw("op") as string ?? "";
        long deadlineMs = SafeLong(f, "deadline_ms") ?? 0;
        var budget = TimeSpan.FromMilliseconds(deadlineMs <= 0 ? 10_000 : Math.Min(deadlineMs, 3_600_000));
        var args = f.Raw("args") is IDictionary<string, object?> m ? new Args(m) : new Args(null);
        var call = new OpCall(id.Value, op, args, budget, _writer.Write);
        if (!_handler.Knows(op))
        {
            var e = HelperError.Invalid($"unknown op '{op}'").With("op", op);
            if (Protocol.Mutates(op))
            {
                e.WithReceipt(new Receipt(Delivery.NotDispatched, _handler.RouteOf(op)));
            }
            _writer.Write(Frames.Error(id.Value, e));
            return true;
        }
        _live[id.Value] = call;
        if (_handler.Serialized(op))
        {
            _serial.Writer.TryWrite(call);
        }
        else
        {
            Track(Task.Run(() => RunAsync(call)));
        }
        return true;
    }

    private void Track(Task task)
    {
        lock (_inflight)
        {
            _inflight.RemoveAll(t => t.IsCompleted);
            _inflight.Add(task);
        }
    }

    private async Task SerialLoopAsync()
    {
        await foreach (var call in _serial.Reader.ReadAllAsync())
        {
            if (call.Cancelled)
            {
                // Queued, never dispatched: a cancelled mutation is refused with its receipt.
                var e = new HelperError(Protocol.Codes.ActionFailed, "cancelled before it was dispatched")
                    .With("cancelled", true)
                    .WithReceipt(new Receipt(Delivery.NotDispatched, _handler.RouteOf(call.Op)));
                Answer(call, Frames.Error(call.Id, e));
                continue;
            }
            if (call.Expired)
            {
                var e = new HelperError(Protocol.Codes.Timeout, "the deadline passed while the request waited for the one before it")
                    .WithReceipt(new Receipt(Delivery.NotDispatched, _handler.RouteOf(call.Op)));
                Answer(call, Frames.Error(call.Id, e));
                continue;
            }
            var run = RunAsync(call);
            Track(run);
            await run;
        }
    }

    private async Task RunAsync(OpCall call)
    {
        bool mutates = Protocol.Mutates(call.Op);
        Dictionary<string, object?> frame;
        try
        {
            // The op gets the whole budget and is expected to answer TIMEOUT
            // itself with a receipt; the wait below is the backstop for an OS
            // call that never returns (a hung app): the answer goes out at the
            // deadline and the stuck thread is left behind.
            var outcome = await Task.Run(() => _handler.HandleAsync(call)).WaitAsync(call.Budget + TimeSpan.FromMilliseconds(50));
            var receipt = outcome.Receipt ?? (mutates ? new Receipt(Delivery.Unknown, _handler.RouteOf(call.Op)) : null);
            frame = Frames.Ok(call.Id, outcome.Result, receipt);
        }
        catch (HelperError e)
        {
            if (mutates && e.Receipt is null)
            {
                e.WithReceipt(new Receipt(Delivery.Unknown, _handler.RouteOf(call.Op)));
            }
            frame = Frames.Error(call.Id, e);
        }
        catch (Exception e) when (e is TimeoutException || (e is OperationCanceledException && call.Expired))
        {
            var err = new HelperError(Protocol.Codes.Timeout, $"{call.Op} did not finish within {call.Budget.TotalMilliseconds:0} ms")
                .With("deadline_ms", (long)call.Budget.TotalMilliseconds);
            if (mutates)
            {
                err.WithReceipt(new Receipt(Delivery.Unknown, _handler.RouteOf(call.Op)));
            }
            frame = Frames.Error(call.Id, err);
        }
        catch (OperationCanceledException) when (call.Cancelled)
        {
            var err = new HelperError(Protocol.Codes.ActionFailed, "cancelled").With("cancelled", true);
            if (mutates)
            {
                err.WithReceipt(new Receipt(Delivery.Unknown, _handler.RouteOf(call.Op)));
            }
            frame = Frames.Error(call.Id, err);
        }
        catch (Exception e)
        {
            Log($"{call.Op} #{call.Id}: internal error: {e}");
            var err = new HelperError(Protocol.Codes.Internal, $"{e.GetType().Name}: {e.Message}");
            if (mutates)
            {
                err.WithReceipt(new Receipt(Delivery.Unknown, _handler.RouteOf(call.Op)));
            }
            frame = Frames.Error(call.Id, err);
        }
        Answer(call, frame);
    }

    private void Answer(OpCall call, Dictionary<string, object?> frame)
    {
        _live.TryRemove(call.Id, out _);
        try
        {
            _writer.Write(frame);
        }
        catch (Exception e) when (e is IOException or ObjectDisposedException)
        {
            Log($"cannot answer #{call.Id}: {e.Message}");
        }
        catch (InvalidOperationException e)
        {
            // A result the encoder cannot write is a bug: say so on the wire, not by dying.
            Log($"{call.Op} #{call.Id}: cannot encode the answer: {e.Message}");
            var err = new HelperError(Protocol.Codes.Internal, $"cannot encode the answer: {e.Message}");
            if (Protocol.Mutates(call.Op))
            {
                err.WithReceipt(new Receipt(Delivery.Unknown, _handler.RouteOf(call.Op)));
            }
            _writer.Write(Frames.Error(call.Id, err));
        }
    }

    private void Log(string line)
    {
        lock (_log)
        {
            _log.WriteLine($"{_name}: {line}");
            _log.Flush();
        }
    }
}
