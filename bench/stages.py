#!/usr/bin/env python3
"""Draws where a frame's time goes: one stacked bar per thread count of BM_world_256 from a result
file (the medians of its per-stage counters, "<stage> ms", measured by instrumentation), as an SVG.
Standard library only.

    python3 bench/stages.py bench/results/world.json docs/figures/world_stages.svg
"""
import json
import re
import sys

# The counters' stage names as a reader knows them.
NAMES = {"core": "core: solve, integrate, grab", "cloth@0.curvature": "cloth curvature",
         "colliders": "colliders (mesh, ball, floor)", "self_collision": "self-collision"}
COLOURS = ["#5b7fb8", "#2a9d8f", "#e8741c", "#7b5ea7", "#d62828", "#6b4f3a", "#e9c46a", "#8d99ae", "#43aa8b"]


def bars(path):
    out = []
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median" or not b["run_name"].startswith("BM_world_256/"):
            continue
        threads = int(re.search(r"threads:(\d+)", b["run_name"]).group(1))
        stages = {NAMES.get(k[:-3], k[:-3]): v for k, v in b.items() if k.endswith(" ms")}
        out.append((threads, b["ms/frame"], stages))
    return sorted(out)


def main(source, target):
    rows = bars(source)
    if not rows:
        sys.exit(f"{source} holds no BM_world_256 medians")
    # One colour per stage, the same in every bar, ordered by the one-thread cost.
    order = sorted(rows[0][2], key=lambda s: -rows[0][2][s])
    colour = {s: COLOURS[i % len(COLOURS)] for i, s in enumerate(order)}
    longest = max(total for _, total, _ in rows)
    left, width, bar, gap, top = 110, 620, 34, 22, 50
    scale = width / longest
    height = top + len(rows) * (bar + gap) + 40 + 22 * ((len(order) + 2) // 3)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" height="{height}" '
           'font-family="DejaVu Sans, sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{(left + width) / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">'
           'BM_world_256: where a 60 Hz frame (6 substeps) goes, ms</text>']
    for row, (threads, total, stages) in enumerate(rows):
        y = top + row * (bar + gap)
        svg.append(f'<text x="{left - 8}" y="{y + bar / 2 + 4}" text-anchor="end">'
                   f'{threads} thread{"s" if threads > 1 else ""}</text>')
        x = left
        for s in order:
            w = stages.get(s, 0) * scale
            svg.append(f'<rect x="{x:.1f}" y="{y}" width="{max(w, 0):.1f}" height="{bar}" fill="{colour[s]}">'
                       f'<title>{s}: {stages.get(s, 0):.2f} ms</title></rect>')
            if w > 34:
                svg.append(f'<text x="{x + w / 2:.1f}" y="{y + bar / 2 + 4}" text-anchor="middle" fill="white" '
                           f'font-size="11">{stages.get(s, 0):.2f}</text>')
            x += w
        svg.append(f'<text x="{x + 6:.1f}" y="{y + bar / 2 + 4}">{total:.2f}</text>')
    y = top + len(rows) * (bar + gap) + 10
    for i, s in enumerate(order):
        lx, ly = left + (i % 3) * 230 - 60, y + (i // 3) * 22
        svg.append(f'<rect x="{lx}" y="{ly}" width="14" height="14" fill="{colour[s]}"/>')
        svg.append(f'<text x="{lx + 20}" y="{ly + 11}">{s}</text>')
    svg.append("</svg>")
    open(target, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
