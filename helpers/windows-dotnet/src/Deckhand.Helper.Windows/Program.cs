using System.Reflection;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Helper.Windows.Ops;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows;

/// <summary>
/// deckhand-helper-windows: speaks the wire protocol on stdin/stdout (u32
/// big-endian length + one msgpack map per frame), writes diagnostics to
/// stderr, exits when stdin closes. No arguments.
/// </summary>
internal static class Program
{
    public const string Name = "deckhand-helper-windows";

    [MTAThread]
    private static int Main()
    {
        // Physical pixels everywhere (the manifest says so too; this covers a host that ignores it).
        Win32.SetProcessDpiAwarenessContext(Win32.DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2);
        CapabilityFile caps;
        try
        {
            caps = LoadCapabilities();
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"{Name}: cannot read the embedded capabilities.json: {e.Message}");
            return 1;
        }
        string version = Assembly.GetExecutingAssembly().GetName().Version?.ToString(3) ?? "0.1.0";
        using var stdin = Console.OpenStandardInput();
        using var stdout = Console.OpenStandardOutput();
        var dispatcher = new Dispatcher(stdin, stdout, new Handler(caps), Console.Error, Name);
        int code = dispatcher.Run(caps.Hello(version));
        // Background threads (the input watcher, a UIA call stuck in a hung app) must not keep the process alive.
        Environment.Exit(code);
        return code;
    }

    public static CapabilityFile LoadCapabilities()
    {
        using var stream = Assembly.GetExecutingAssembly().GetManifestResourceStream("capabilities.json")
            ?? throw new InvalidOperationException("resource capabilities.json is missing");
        using var reader = new StreamReader(stream);
        return CapabilityFile.Parse(reader.ReadToEnd());
    }
}
