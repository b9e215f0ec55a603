"""The rounds a comparison script ran: each round's Google Benchmark JSON, by benchmark name."""
import json


def load_rounds(work, side, rounds):
    """Every iteration run of rounds 1..rounds of `side` ({work}/{side}_{round}.json), by name."""
    runs = {}
    for r in range(1, rounds + 1):
        for b in json.load(open(f"{work}/{side}_{r}.json"))["benchmarks"]:
            if b.get("run_type", "iteration") == "iteration":
                runs.setdefault(b["name"], []).append(b)
    return runs


def rate_name(run):
    """The rate counter (a name ending in /s) a table shows for `run`: slot-forces/s where it has
    one, else its first; "" where it has none."""
    rates = [k for k, v in run.items() if k.endswith("/s") and isinstance(v, (int, float))]
    return "slot-forces/s" if "slot-forces/s" in rates else (rates[0] if rates else "")
