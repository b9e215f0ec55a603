#!/usr/bin/env python3
"""Runs every example twice into two empty folders and checks that each SVG it writes
parses as XML (xml.etree, a real parser), draws something, and is byte-identical across the two
runs. With --committed DIR, also checks that docs/figures holds exactly what the examples draw
now, so a committed figure cannot go stale. The two runs go side by side: each is one process at a
time, and the material-cloth examples take most of a minute each.

    check_figures.py [--committed DIR] EXAMPLE...
"""
import concurrent.futures
import filecmp
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def run_all(examples, folder):
    for exe in examples:
        subprocess.run([exe, folder], check=True, stdout=subprocess.DEVNULL)
    return sorted(f for f in os.listdir(folder) if f.endswith(".svg"))


def main(argv):
    committed = None
    if argv[:1] == ["--committed"]:
        committed, argv = argv[1], argv[2:]
    examples = argv
    problems = []
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            runs = [pool.submit(run_all, examples, folder) for folder in (a, b)]
            first, second = (run.result() for run in runs)
        if first != second:
            problems.append(f"the two runs wrote different files: {first} vs {second}")
        for name in first:
            path = os.path.join(a, name)
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError as e:
                problems.append(f"{name}: not well-formed XML: {e}")
                continue
            if root.tag != SVG + "svg":
                problems.append(f"{name}: root element is {root.tag}, not svg")
            if not list(root.iter(SVG + "polyline")):
                problems.append(f"{name}: draws no polyline")
            if name in second and not filecmp.cmp(path, os.path.join(b, name), shallow=False):
                problems.append(f"{name}: differs between two runs")
            if committed is not None:
                mine = os.path.join(committed, name)
                if not os.path.exists(mine):
                    problems.append(f"{name}: missing from {committed} (run the figures target)")
                elif not filecmp.cmp(path, mine, shallow=False):
                    problems.append(f"{name}: {committed} is stale (run the figures target)")
        print(f"{len(first)} figures from {len(examples)} examples checked")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
