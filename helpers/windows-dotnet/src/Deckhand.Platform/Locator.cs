namespace Deckhand.Platform;

/// <summary>
/// An element's address: child indices from the window's root element in
/// UIA's control view (deckhand records it as a `uia-path`), plus the
/// identity it must still have when deckhand acts on it.
/// </summary>
public sealed record Locator(IReadOnlyList<int> Path, string Role, string NativeRole, string Name, string Identifier)
{
    /// <summary>The identity of a node as the tree reports it.</summary>
    public static Locator Of(IReadOnlyList<int> path, string role, string nativeRole, string name, string identifier) => new(path, role, nativeRole, name, identifier);

    /// <summary>
    /// Why <paramref name="found"/> is not the element this locator names, or
    /// null when it is: the native role is compared when the locator has one
    /// (more precise), else the neutral role; then the name and the
    /// AutomationId. Never a fuzzy match: a different element at the old path
    /// is refused.
    /// </summary>
    public Mismatch? Compare(Locator found)
    {
        if (NativeRole.Length > 0)
        {
            if (NativeRole != found.NativeRole) return new Mismatch("native_role", NativeRole, found.NativeRole);
        }
        else if (Role != found.Role)
        {
            return new Mismatch("role", Role, found.Role);
        }
        if (Name != found.Name) return new Mismatch("name", Name, found.Name);
        if (Identifier != found.Identifier) return new Mismatch("identifier", Identifier, found.Identifier);
        return null;
    }

    public static string PathText(IReadOnlyList<int> path) => "[" + string.Join(",", path) + "]";
}

public sealed record Mismatch(string Field, string Expected, string Found)
{
    public override string ToString() => $"{Field} differs: expected '{Expected}', found '{Found}'";
}

/// <summary>
/// Builds a node's path from its ancestry: the index of each element among
/// its parent's children, from the window root down.
/// </summary>
public static class PathBuilder
{
    /// <summary>
    /// <paramref name="indicesFromNode"/> is the child index of the node, then
    /// of its parent, and so on up to (not including) the root: the order in
    /// which a walk up the tree finds them. Returns the root-first path.
    /// </summary>
    public static List<int> FromAncestry(IEnumerable<int> indicesFromNode)
    {
        var path = indicesFromNode.ToList();
        path.Reverse();
        return path;
    }

    /// <summary>A path is valid when every index is non-negative and it is not absurdly deep.</summary>
    public static bool Valid(IReadOnlyList<int> path, int maxDepth = 256) => path.Count <= maxDepth && path.All(i => i >= 0);
}
