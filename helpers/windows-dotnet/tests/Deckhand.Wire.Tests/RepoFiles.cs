namespace Deckhand.Wire.Tests;

/// <summary>Files of the repository the tests read at run time (so new golden vectors are covered without a rebuild).</summary>
internal static class RepoFiles
{
    public static string Root
    {
        get
        {
            var env = Environment.GetEnvironmentVariable("DECKHAND_REPO");
            if (!string.IsNullOrEmpty(env)) return env;
            var dir = new DirectoryInfo(AppContext.BaseDirectory);
            while (dir is not null)
            {
                if (Directory.Exists(Path.Combine(dir.FullName, "helpers", "protocol", "vectors"))) return dir.FullName;
                dir = dir.Parent;
            }
            throw new DirectoryNotFoundException("helpers/protocol/vectors not found above " + AppContext.BaseDirectory);
        }
    }

    public static string Vectors => Path.Combine(Root, "helpers", "protocol", "vectors");

    public static string Schema => Path.Combine(Root, "helpers", "protocol", "schema.json");

    public static string Capabilities => Path.Combine(Root, "helpers", "windows-dotnet", "capabilities.json");
}
