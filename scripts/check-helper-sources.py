#!/usr/bin/env python3
"""Syntax check of the helpers this machine cannot build: every Swift file of
helpers/macos-swift and every C# file of helpers/windows-dotnet is parsed with
a tree-sitter grammar (PyPI: tree-sitter-swift, tree-sitter-c-sharp, pinned in
scripts/setup.sh). A parse with an ERROR or MISSING node fails, naming the
file, line and column. This is a syntax check only: types, overloads and API
names are checked by the macOS and Windows CI workflows that build them.

usage: check-helper-sources.py [PATH ...]   (default: the two helper folders)
exit: 0 all parsed, 1 a syntax error, 2 the grammars are not installed or a
PATH does not exist.
"""
import os
import sys

LANGS = {".swift": "swift", ".cs": "c_sharp"}
DEFAULT_ROOTS = ["helpers/macos-swift", "helpers/windows-dotnet"]
# Build output and package caches are not ours to check.
SKIP_DIRS = {".build", "bin", "obj", ".swiftpm", "node_modules", ".git"}


def load_parsers():
    try:
        import tree_sitter
        import tree_sitter_c_sharp
        import tree_sitter_swift
    except ImportError as e:  # never a silent pass: a missing grammar is an error
        print(f"check-helper-sources: tree-sitter grammars not installed ({e}); run scripts/setup.sh", file=sys.stderr)
        sys.exit(2)
    return {
        "swift": tree_sitter.Parser(tree_sitter.Language(tree_sitter_swift.language())),
        "c_sharp": tree_sitter.Parser(tree_sitter.Language(tree_sitter_c_sharp.language())),
    }


def files_under(root):
    if os.path.isfile(root):
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for f in sorted(filenames):
            if os.path.splitext(f)[1] in LANGS:
                yield os.path.join(dirpath, f)


def problems(tree, limit=5):
    """The first ERROR / MISSING nodes, in source order."""
    out = []
    stack = [tree.root_node]
    while stack and len(out) < limit:
        node = stack.pop()
        if node.is_error or node.is_missing:
            kind = "missing " + node.type if node.is_missing else "unexpected syntax"
            out.append((node.start_point[0] + 1, node.start_point[1] + 1, kind))
            continue
        if node.has_error:
            stack.extend(reversed(node.children))
    return out


def main(argv):
    roots = argv or [r for r in DEFAULT_ROOTS if os.path.exists(r)]
    for r in roots:
        if not os.path.exists(r):
            print(f"check-helper-sources: no such path: {r}", file=sys.stderr)
            return 2
    parsers = load_parsers()
    counts = {"swift": 0, "c_sharp": 0}
    bad = 0
    for root in roots:
        for path in files_under(root):
            lang = LANGS.get(os.path.splitext(path)[1])
            if lang is None:
                continue
            with open(path, "rb") as fh:
                src = fh.read()
            counts[lang] += 1
            found = problems(parsers[lang].parse(src))
            for line, col, kind in found:
                text = src.splitlines()[line - 1].decode("utf-8", "replace").strip() if line - 1 < len(src.splitlines()) else ""
                print(f"{path}:{line}:{col}: {kind}: {text[:120]}")
            bad += bool(found)
    print(f"check-helper-sources: {counts['swift']} Swift and {counts['c_sharp']} C# files parsed, {bad} with syntax errors", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
