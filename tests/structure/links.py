#!/usr/bin/env python3
"""Every link in the repository's Markdown resolves inside the repository:
relative paths to files or folders that exist, #anchors to headings that
exist (GitHub's slugs), and nothing that points outside the tree; and every
path the sources and docs name in their text (src/..., docs/..., tests/...,
bench/..., scripts/..., include/..., fuzz/...) exists. Prints TAP.

usage: links.py SOURCE_ROOT
"""
import os
import re
import subprocess
import sys

root = os.path.realpath(sys.argv[1])
files = subprocess.run(["git", "-C", root, "ls-files", "*.md"], capture_output=True, text=True)
md = [f for f in files.stdout.split() if f] if files.returncode == 0 else [
    os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
    if f.endswith(".md") and "/build" not in d]


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[`*_]", "", s)
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    out, fence = set(), False
    for line in open(path, errors="replace"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out


link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
bad, n = [], 0
for f in md:
    path = os.path.join(root, f)
    fence = False
    for i, line in enumerate(open(path, errors="replace"), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for target in link.findall(line):
            if re.match(r"[a-z]+://|mailto:", target):
                continue
            n += 1
            file_part, _, anchor = target.partition("#")
            dest = os.path.realpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not dest.startswith(root + os.sep) and dest != root:
                bad.append(f"{f}:{i}: {target} points outside the repository")
            elif not os.path.exists(dest):
                bad.append(f"{f}:{i}: {target}: no such file")
            elif anchor and dest.endswith(".md") and slug(anchor) not in anchors(dest):
                bad.append(f"{f}:{i}: {target}: no such heading")
ok = not bad
print(f"{'ok' if ok else 'not ok'} 1 - every link of {len(md)} Markdown files resolves ({n} links)")
for b in bad:
    print(f"#   {b}")

# paths named in text: a file that moved leaves its old name behind
tracked = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True).stdout.split()
named = re.compile(r"\b((?:docs|src|tests|bench|scripts|include|fuzz)/[A-Za-z0-9_./-]+"
                   r"\.(?:md|c|h|sh|py|json|yaml|build)(?:\.gz)?)\b")  # a.json.gz whole
stale, m = [], 0
for f in tracked:
    if f.startswith(("fuzz/corpus/", "tests/fixtures/")) or not os.path.isfile(os.path.join(root, f)):
        continue
    try:
        text = open(os.path.join(root, f), errors="strict").read()
    except (UnicodeDecodeError, OSError):
        continue
    for i, line in enumerate(text.splitlines(), 1):
        for ref in named.findall(line):
            m += 1
            if not os.path.exists(os.path.join(root, ref)):
                stale.append(f"{f}:{i}: {ref}")
print(f"{'ok' if not stale else 'not ok'} 2 - every path named in the sources and docs exists "
      f"({m} names)")
for b in stale:
    print(f"#   {b}")
print("1..2")
sys.exit(0 if ok and not stale else 1)
