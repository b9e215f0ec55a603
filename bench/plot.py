#!/usr/bin/env python3
"""Draws docs/figures/performance.svg from bench/results/performance.json: particle-steps per
second of a whole step against particle count, one line per path and thread count, for float at
1 and 16 iterations (medians of the committed run). Standard library only.

    python3 bench/plot.py bench/results/performance.json docs/figures/performance.svg
"""
import json
import math
import re
import sys

COLOURS = ["#5b7fb8", "#2a9d8f", "#e8741c", "#7b5ea7", "#d62828", "#6b4f3a", "#e9c46a", "#8d99ae"]
PATHS = {"0": "grid", "1": "gather", "2": "scalar", "3": "scalar shuffled", "4": "reordered"}


def medians(path):
    rows = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        m = re.match(r"BM_step<(\w+)>/w:(\d+)/h:(\d+)/it:(\d+)/path:(\d)/threads:(\d)", b["run_name"])
        if not m:
            continue
        scalar, w, h, it, path, threads = m.groups()
        rows[(scalar, int(w) * int(h), int(it), PATHS[path], int(threads))] = b["particle-steps/s"]
    return rows


def panel(rows, it, x0, width, height):
    sizes = sorted({k[1] for k in rows})
    series = sorted({(k[3], k[4]) for k in rows if k[0] == "float" and k[2] == it},
                    key=lambda s: (list(PATHS.values()).index(s[0]), s[1]))
    values = [v for k, v in rows.items() if k[0] == "float" and k[2] == it]
    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    left, top, pw, ph = x0 + 70, 50, width - 90, height - 110
    px = lambda n: left + (math.log10(n) - math.log10(sizes[0])) / (math.log10(sizes[-1]) - math.log10(sizes[0])) * pw
    py = lambda v: top + (hi - math.log10(v)) / (hi - lo) * ph
    out = [f'<text x="{x0 + width / 2:.1f}" y="30" font-size="14" text-anchor="middle" font-weight="bold">'
           f'float, {it} iteration{"s" if it > 1 else ""}</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#f7f9fc" stroke="#b0b8c6"/>']
    for d in range(lo, hi + 1):
        out.append(f'<line x1="{left}" y1="{py(10 ** d):.1f}" x2="{left + pw}" y2="{py(10 ** d):.1f}" stroke="#e1e6ee"/>')
        out.append(f'<text x="{left - 6}" y="{py(10 ** d) + 4:.1f}" font-size="11" text-anchor="end">1e{d}</text>')
    for n in sizes:
        out.append(f'<text x="{px(n):.1f}" y="{top + ph + 16}" font-size="11" text-anchor="middle">{n}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{top + ph + 36}" font-size="12" text-anchor="middle">particles</text>')
    out.append(f'<text x="{x0 + 16}" y="{top + ph / 2:.1f}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 {x0 + 16} {top + ph / 2:.1f})">particle-steps per second</text>')
    for k, (path, threads) in enumerate(series):
        pts = [(px(n), py(rows[("float", n, it, path, threads)])) for n in sizes if ("float", n, it, path, threads) in rows]
        colour = COLOURS[k % len(COLOURS)]
        dash = ' stroke-dasharray="5,3"' if threads > 1 else ""
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.8"{dash} points="' +
                   " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
        ly = top + 14 + 16 * k
        out.append(f'<line x1="{left + 8}" y1="{ly - 4}" x2="{left + 28}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{left + 34}" y="{ly}" font-size="11">{path}, {threads} thread{"s" if threads > 1 else ""}</text>')
    return out


def main(source, target):
    rows = medians(source)
    width, height = 460, 380
    body = panel(rows, 1, 0, width, height) + panel(rows, 16, width, width, height)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width}" height="{height}" '
           f'viewBox="0 0 {2 * width} {height}" font-family="Helvetica, Arial, sans-serif">\n'
           '<rect width="100%" height="100%" fill="#ffffff"/>\n' + "\n".join(body) + "\n</svg>\n")
    open(target, "w").write(svg)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
