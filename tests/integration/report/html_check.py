#!/usr/bin/env python3
"""Helpers for report_html.sh, standard library only.

  html_check.py page FILE   the structure of an HTML report (the file, or the
                            DOM Chromium dumped) as JSON: section ids in order,
                            each svg plot's data-kind, axis titles, legend,
                            number of dots and series lines, the bars in each stacked layer, the verdict boxes (status, name, text), the
                            check table's statuses in order, every table's
                            cells (with its section), the visible text
  html_check.py png FILE    a PNG's size and colours as JSON: width, height,
                            distinct colours, share of the commonest colour
                            (decoded here with zlib: no PIL on a bare CI)
"""
import json
import struct
import sys
import zlib
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections, self.plots, self.verdicts, self.checks = [], [], [], []
        self.tables = []
        self.text, self.stack = [], []
        self.plot = None
        self.in_check = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag not in ("meta", "path", "rect", "circle", "br", "link", "img", "input"):
            self.stack.append((tag, cls))
        if tag == "section":
            self.sections.append(a.get("id"))
            self.in_check = a.get("id") == "check"
        if tag == "svg":
            self.plot = {"kind": a.get("data-kind"), "class": cls, "axis_titles": [],
                         "texts": [], "circles": 0, "series": 0, "bars": [], "rects": 0,
                         "spans": 0}
        elif self.plot is not None:
            if tag == "circle":
                self.plot["circles"] += 1
            elif tag == "path" and "s" in cls:
                self.plot["series"] += 1
            elif tag == "path" and "bars" in cls:
                self.plot["bars"].append((a.get("d") or "").count("M"))
            elif tag == "rect":
                self.plot["rects"] += 1
                self.plot["spans"] += "span" in cls
        if tag == "table":
            self.tables.append({"section": self.sections[-1] if self.sections else None,
                                "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]["rows"]:
            self.tables[-1]["rows"][-1].append("")
        if tag == "div" and "box" in cls:
            self.verdicts.append({"status": [c for c in cls if c != "box"], "name": "",
                                  "text": ""})

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break
        if tag == "svg" and self.plot is not None:
            self.plots.append(self.plot)
            self.plot = None

    def handle_data(self, data):
        tag, cls = self.stack[-1] if self.stack else ("", [])
        if tag in ("style", "title") and self.plot is None:
            return
        self.text.append(data)
        if self.plot is not None and tag == "text":
            self.plot["texts"].append(data)
            if "at" in cls:
                self.plot["axis_titles"].append(data)
        if any(t == "div" and "box" in c for t, c in self.stack) and self.verdicts:
            self.verdicts[-1]["text"] += data
            if tag == "div" and "name" in cls:
                self.verdicts[-1]["name"] += data
        cells = [t for t, _ in self.stack if t in ("td", "th")]
        if cells and self.tables and self.tables[-1]["rows"] and self.tables[-1]["rows"][-1]:
            self.tables[-1]["rows"][-1][-1] += data
        if self.in_check and tag == "span" and "st" in cls:
            self.checks.append(data)


def page(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    p.close()
    return {"sections": p.sections, "plots": p.plots, "verdicts": p.verdicts,
            "check_statuses": p.checks, "tables": p.tables, "text": "".join(p.text)}


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return {"error": "not a PNG"}
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            return {"error": "bad CRC in %s" % kind}
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        return {"width": w, "height": h, "error": "unhandled PNG format"}
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = {}
    for y in range(h):
        f = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                row[i] = (row[i] + row[i - bpp]) & 255
        elif f == 2:
            row = bytearray((x + p) & 255 for x, p in zip(row, prev))
        elif f == 3:
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                ul = prev[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + paeth(left, prev[i], ul)) & 255
        # colours of every 4th pixel: enough to tell a page from a blank
        for i in range(0, stride, 4 * bpp):
            c = bytes(row[i:i + 3])
            colours[c] = colours.get(c, 0) + 1
        prev = row
    total = sum(colours.values())
    return {"width": w, "height": h, "colours": len(colours),
            "commonest_share": max(colours.values()) / total if total else 1.0}


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    print(json.dumps(page(path) if what == "page" else png(path)))
