#!/usr/bin/env python3
"""Make one man page from the built binary's --help, so the page and --help
cannot drift apart: help2man formats `trainpath [CMD] --help`, and
docs/man/<page>.h2m adds only what --help lacks (FILES, EXAMPLES, SEE ALSO).

help2man reads GNU-style help ("Usage:", "  or:", "Options:"); trainpath's
is close, and this script bridges the rest as help2man's "program": the
usage block (lowercase "usage:", wrapped lines) becomes GNU's, section
headings get a capital, and the paragraph that starts "Exit" moves to the
end under *Exit status* (help2man's custom-section marker), so every page
has an EXIT STATUS section; a command whose --help names no exit codes gets
the general ones of `trainpath --help`.

usage: mkman.py --help2man PROG --binary TRAINPATH [--command CMD] --include FILE.h2m --output FILE.1
                 [--datadir DIR]
       mkman.py --emit-help TRAINPATH [CMD]     (help2man runs this as the program's --help)
"""
import argparse
import os
import re
import shlex
import stat
import subprocess
import sys
import tempfile


def run(argv):
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=dict(os.environ, LC_ALL="C"))
    if out.returncode != 0:
        sys.exit(f"mkman: {' '.join(argv)} exited {out.returncode}:\n{out.stdout}")
    return out.stdout


def general_exit(binary):
    """The exit codes every command shares, as `trainpath --help` states them."""
    text = " ".join(run([binary, "--help"]).split())
    m = re.search(r"Exit codes: (.*)", text)
    if not m:
        sys.exit("mkman: `trainpath --help` names no exit codes")
    return m.group(1)


def gnu_help(binary, words):
    """`trainpath WORDS --help` rewritten into the shape help2man parses."""
    lines = run([binary, *words, "--help"]).rstrip("\n").split("\n")
    out, i = [], 0
    if lines and lines[0].startswith("usage: "):
        usages = [lines[0][len("usage: "):].strip()]
        i = 1
        while i < len(lines) and lines[i].strip():
            if re.match(r"\s+trainpath\b", lines[i]):        # another form
                usages.append(lines[i].strip())
            elif re.match(r"\s{8,}\S", lines[i]):            # a wrapped one
                usages[-1] += " " + lines[i].strip()
            else:
                break
            i += 1
        out.append("Usage: " + usages[0])
        out += ["  or: " + u for u in usages[1:]]
        if i < len(lines) and lines[i].strip():
            out.append("")
    rest = lines[i:]

    # the exit codes: a line that starts "Exit" (or, in trainpath --help, a
    # sentence "Exit codes: ..." inside a line) up to the paragraph's end
    split = []
    for line in rest:
        m = re.match(r"(.*\S\.)\s+(Exit codes: .*)$", line)
        split += [m.group(1), m.group(2)] if m else [line]
    rest, exit_text = split, []
    for j, line in enumerate(rest):
        if re.match(r"Exit\b", line):
            k = j
            while k < len(rest) and rest[k].strip():
                k += 1
            exit_text = rest[j:k]
            del rest[j:k]
            break
    if exit_text:
        exit_text[0] = re.sub(r"^Exit( codes)?:\s*", "", exit_text[0])
    elif words:
        exit_text = ["As every trainpath command: " + general_exit(binary)]

    hang = 0
    for line in rest:
        # "options:", "server options:" -> "Options:" (help2man's OPTIONS
        # section), "Server options:" (a subsection)
        m = re.match(r"([a-z][a-z ]*):$", line)
        if m:
            line = m.group(1).capitalize() + ":"
        # "checkpoint  write SIZE ..." at the margin, its lines hanging
        # under the text: indented, help2man reads it as a tagged paragraph
        m = re.match(r"([a-z][a-z-]*  +)\S", line)
        if m:
            hang = len(m.group(1))
            line = "  " + line
        elif hang and re.match(" {%d}\\S" % hang, line):
            line = "  " + line
        else:
            hang = 0
        out.append(line)
    if exit_text:
        out += ["", "*Exit status*"] + exit_text
    return "\n".join(out) + "\n"


def escape_include(src, dst, datadir):
    """The .h2m file with @datadir@ made the install's (/usr/share), and every
    '-' of its text made '\\-' (a minus, so options and commands copy and
    paste as typed); requests stay as they are."""
    with open(src) as f, open(dst, "w") as g:
        for line in f:
            line = line.replace("@datadir@", datadir)
            if line.startswith("[") or line.startswith(".\\\""):
                g.write(line)
                continue
            head = ""
            if line.startswith("."):
                head, _, line = line.partition(" ")
                head += " " if line else ""
            g.write(head + re.sub(r"(?<!\\)-", r"\\-", line))


def make_page(a):
    version = run([a.binary, "--version"]).split("\n")[0].split()[-1]
    name = "trainpath" + ("-" + a.command if a.command else "")
    desc = None
    if a.command:  # the one-line description of `trainpath --help`'s command table
        for line in run([a.binary, "--help"]).split("\n"):
            m = re.match(r"\s+(\S+)\s{2,}(\S.*)$", line)
            if m and m.group(1) == a.command:
                desc = m.group(2)
        if desc is None:
            sys.exit(f"mkman: `trainpath --help` lists no command '{a.command}'")
    with tempfile.TemporaryDirectory(prefix="mkman.") as tmp:
        prog = os.path.join(tmp, name)  # help2man names the page after the program
        with open(prog, "w") as f:
            f.write("#!/bin/sh\nexec %s %s --emit-help %s %s\n" % (
                shlex.quote(sys.executable), shlex.quote(os.path.abspath(__file__)),
                shlex.quote(os.path.abspath(a.binary)), shlex.quote(a.command or "")))
        os.chmod(prog, stat.S_IRWXU)
        inc = os.path.join(tmp, "include.h2m")
        escape_include(a.include, inc, a.datadir)
        argv = [a.help2man, "--no-info", "--section=1", "--version-string=" + version,
                "--source=trainpath " + version, "--manual=trainpath manual",
                "--include=" + inc, "--output=" + a.output]
        if desc:
            argv.append("--name=" + desc)
        r = subprocess.run(argv + [prog], env=dict(os.environ, LC_ALL="C"))
        if r.returncode != 0:
            sys.exit(f"mkman: help2man failed for {name}")
    with open(a.output) as f:
        page = f.read()
    with open(a.output, "w") as f:
        f.write(whole_options(page))


# where an option may start: after a blank or punctuation, or a font change
OPT_START = r"(^|[\s\[(,'\"|/=]|\\f[BIRP]|\\f\([A-Z]{2}|\\,)"


def whole_options(page):
    """Options and page names as typed, on one line: each '-' of an option a
    minus (help2man leaves the synopsis' as hyphens) and '\\%' before it
    and before trainpath-CMD, so groff never hyphenates --insecure into
    --inse- cure."""
    out = []
    for line in page.split("\n"):
        if not line.startswith(('.\\"', ".TH")):
            line = re.sub(OPT_START + r"(--?[A-Za-z0-9][A-Za-z0-9-]*)",
                          lambda m: m.group(1) + m.group(2).replace("-", "\\-"), line)
            line = re.sub(OPT_START + r"(\\-(\\-)?[A-Za-z0-9]|trainpath\\-)", r"\1\\%\2", line)
        out.append(line)
    return "\n".join(out)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--emit-help":
        sys.stdout.write(gnu_help(sys.argv[2], [w for w in sys.argv[3:4] if w]))
        return
    p = argparse.ArgumentParser(description="one man page from trainpath's --help")
    p.add_argument("--help2man", required=True)
    p.add_argument("--binary", required=True)
    p.add_argument("--command", default="")
    p.add_argument("--include", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--datadir", default="/usr/share", help="where contrib/ is installed, less /trainpath")
    make_page(p.parse_args())


if __name__ == "__main__":
    main()
