#!/usr/bin/env python3
"""Prints a Markdown table of the medians in a Google Benchmark JSON file (with repetitions; of
the single runs without them): the time per iteration and every counter, rates with their /s."""
import json
import sys


def fmt(value):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g}"


data = json.load(open(sys.argv[1]))
rows = [b for b in data["benchmarks"] if b.get("aggregate_name") == "median"]
if not rows:  # run once each (--benchmark_repetitions=1): the runs themselves
    rows = [b for b in data["benchmarks"] if b.get("run_type") == "iteration"]
# Every user counter: what is not one of Google Benchmark's own fields.
OWN = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
       "repetition_index", "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time",
       "cpu_time", "time_unit", "label", "error_occurred", "error_message"}
counters = []
for b in rows:
    for key, value in b.items():
        if key not in OWN and isinstance(value, (int, float)) and key not in counters:
            counters.append(key)
print("| benchmark | label | time per iteration | " + " | ".join(counters) + " |")
print("| --- | --- | --- | " + " | ".join("---" for _ in counters) + " |")
for b in rows:
    cells = [fmt(b[c]) if c in b else "" for c in counters]
    time = f"{b['real_time']:.4g} {b['time_unit']}"
    print(f"| {b['run_name']} | {b.get('label', '')} | {time} | " + " | ".join(cells) + " |")
