"""The longest files and functions of a folder at a revision: what a newcomer reads first.

    python scripts/longest.py [REV] [--folder engine] [--top 5]

Reads the folder's Python files as `git show REV:FILE` gives them (REV: default HEAD) and prints the
--top longest files (lines) and functions (lines from `def` to their last, methods included).
"""

from __future__ import annotations

import argparse
import ast
import subprocess


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("rev", nargs="?", default="HEAD")
    parser.add_argument("--folder", default="engine")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", args.rev, args.folder], capture_output=True,
                           text=True, check=True).stdout.split()
    files: list[tuple[int, str]] = []
    functions: list[tuple[int, str]] = []
    for name in names:
        if not name.endswith(".py"):
            continue
        source = subprocess.run(["git", "show", f"{args.rev}:{name}"], capture_output=True, text=True,
                                check=True).stdout
        files.append((source.count("\n"), name))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                functions.append((node.end_lineno - node.lineno + 1, f"{name}:{node.name}"))
    files.sort(reverse=True)
    functions.sort(reverse=True)
    print(f"{args.rev} files: " + ", ".join(f"{name} {lines}" for lines, name in files[:args.top]))
    print(f"{args.rev} functions: " + ", ".join(f"{name} {lines}" for lines, name in functions[:args.top]))


if __name__ == "__main__":
    main()
