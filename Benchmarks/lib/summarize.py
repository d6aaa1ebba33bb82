#!/usr/bin/env python3
"""Helpers for Benchmarks/run (standard library only).

  summarize.py parse  SERVER SHAPE H2LOAD_STDOUT H2LOAD_LOG [LOAD1 CORES]  -> one JSON object
                                                  (parse() also returns it, for other scripts)
  summarize.py table  RESULTS.jsonl [MARKDOWN_OUT]              -> prints the table and ratios
  summarize.py figures RESULTS.jsonl DIR                        -> the ratios into DIR/figures.json

`table` with MARKDOWN_OUT also writes figures.json (the ratios, for Benchmarks/check) beside it.
The goals printed next to the ratios are read from Benchmarks/Thresholds/run.json, the one
place they are kept.

`parse` reads h2load's summary (req/s, request counts, status codes, "time for request"
min/max/mean/sd) and its --log-file (tab-separated: start time in us since epoch, HTTP
status, microseconds until end of response) to compute latency percentiles.
"""

import json
import math
import pathlib
import re
import sys

from figures import record

UNIT_US = {"us": 1.0, "ms": 1000.0, "s": 1_000_000.0}
SERVER_ORDER = ["ours", "go", "swift", "nghttpd"]
THRESHOLDS = pathlib.Path(__file__).resolve().parent.parent / "Thresholds" / "run.json"
# (figure name in figures.json and Thresholds/run.json, label, numerator server, denominator
# server, shape, field); a latency ratio below 1 is ours being faster.
RATIOS = [
    ("ours_per_grpc_go_rps_16x16", "ours / grpc-go   req/s @16x16", "ours", "go", "16x16", "rps"),
    ("ours_per_nghttpd_rps_16x16", "ours / nghttpd   req/s @16x16", "ours", "nghttpd", "16x16", "rps"),
    ("ours_per_nghttpd_mean_latency_1x1", "ours / nghttpd   mean latency @1x1", "ours", "nghttpd", "1x1", "mean_us"),
    ("ours_per_grpc_go_mean_latency_1x1", "ours / grpc-go   mean latency @1x1", "ours", "go", "1x1", "mean_us"),
    ("ours_per_grpc_swift_rps_16x16", "ours / grpc-swift req/s @16x16", "ours", "swift", "16x16", "rps"),
    ("grpc_go_per_nghttpd_rps_16x16", "grpc-go / nghttpd req/s @16x16", "go", "nghttpd", "16x16", "rps"),
    ("grpc_swift_per_nghttpd_rps_16x16", "grpc-swift / nghttpd req/s @16x16", "swift", "nghttpd", "16x16", "rps"),
]
SERVER_LABEL = {
    "ours": "ours (bench-server)",
    "go": "grpc-go",
    "swift": "grpc-swift-2",
    "nghttpd": "nghttpd (static GET)",
}


def to_us(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s)", text.strip())
    if not m:
        return None
    return float(m.group(1)) * UNIT_US[m.group(2)]


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def parse(server, shape, stdout_path, log_path, load1=None, cores=None):
    row = {"server": server, "shape": shape, "ok": True, "problems": [], "warnings": []}
    if load1 is not None and cores is not None:
        row["load1"] = float(load1)
        # The run itself (server + h2load) keeps up to ~1.5 runnable threads per core busy.
        if float(load1) > 1.5 * float(cores):
            row["warnings"].append(f"busy machine: load {float(load1):.1f} on {cores} cores")
            row["busy"] = True
    with open(stdout_path, encoding="utf-8", errors="replace") as f:
        out = f.read()

    m = re.search(r"finished in ([0-9.]+\w+), ([0-9.]+) req/s", out)
    if m:
        row["rps"] = float(m.group(2))
        row["duration"] = m.group(1)
    else:
        row["ok"] = False
        row["problems"].append("no 'finished in' line in h2load output")

    m = re.search(
        r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
        r"(\d+) failed, (\d+) errored, (\d+) timeout",
        out,
    )
    if m:
        total, started, done, succeeded, failed, errored, timeout = map(int, m.groups())
        row.update(done=done, succeeded=succeeded, failed=failed, errored=errored, timeout=timeout)
        if failed or errored or timeout:
            row["ok"] = False
            row["problems"].append(f"{failed} failed, {errored} errored, {timeout} timed out")
        if succeeded == 0:
            row["ok"] = False
            row["problems"].append("no request succeeded")
    else:
        row["ok"] = False
        row["problems"].append("no 'requests:' line in h2load output")

    m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    if m:
        non2xx = sum(map(int, m.groups()[1:]))
        if non2xx:
            row["ok"] = False
            row["problems"].append(f"{non2xx} responses were not 2xx")

    m = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", out)
    if m:
        row["min_us"], row["max_us"], row["mean_us"], row["sd_us"] = (to_us(g) for g in m.groups())

    times = []
    bad_status = 0  # a real HTTP status other than 2xx
    no_status = 0  # -1 (failed stream) or 0: no status recorded for the stream
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                cols = line.split("\t")
                if len(cols) < 3:
                    continue
                try:
                    status = int(cols[1])
                    elapsed = int(cols[2])
                except ValueError:
                    continue
                if 200 <= status < 300:
                    times.append(elapsed)
                elif status >= 100:
                    bad_status += 1
                else:
                    no_status += 1
    except OSError:
        pass
    if times:
        times.sort()
        row["logged"] = len(times)
        row["p50_us"] = percentile(times, 50)
        row["p90_us"] = percentile(times, 90)
        row["p99_us"] = percentile(times, 99)
        row["p999_us"] = percentile(times, 99.9)
        if row.get("mean_us") is None:
            row["mean_us"] = sum(times) / len(times)
    if bad_status:
        row["ok"] = False
        row["problems"].append(f"{bad_status} logged requests had a non-2xx status")
    if no_status:
        # h2load occasionally logs a stream that straddles the warm-up/measurement boundary
        # without a status while counting it as succeeded; a handful is noise, more is a failure.
        if no_status > max(1, len(times) // 1000) or row.get("failed") or row.get("errored"):
            row["ok"] = False
            row["problems"].append(f"{no_status} logged requests had no HTTP status (failed streams)")
        else:
            row["warnings"].append(f"{no_status} logged request(s) without a status (ignored)")
    print(json.dumps(row))
    return row


def fmt_us(v):
    if v is None:
        return "-"
    if v >= 10_000:
        return f"{v / 1000:.1f}ms"
    if v >= 1000:
        return f"{v / 1000:.2f}ms"
    return f"{v:.0f}us"


def fmt_rps(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_ratio(v):
    return "-" if v is None else f"{v:.2f}x"


def pick_medians(rows):
    """With BENCH_REPEAT > 1 there are several rows per (server, shape): keep the median
    valid run by req/s (an invalid run makes the whole group invalid), noting the spread."""
    groups = {}
    for r in rows:
        groups.setdefault((r["server"], r["shape"]), []).append(r)
    picked = []
    for group in groups.values():
        if len(group) == 1:
            picked.append(group[0])
            continue
        bad = [r for r in group if not r.get("ok")]
        if bad:
            chosen = dict(bad[0])
            chosen["problems"] = [f"{len(bad)} of {len(group)} runs invalid"] + chosen.get("problems", [])
            picked.append(chosen)
            continue
        by_rps = sorted(group, key=lambda r: r.get("rps") or 0)
        chosen = dict(by_rps[(len(by_rps) - 1) // 2])
        rps = [r.get("rps") or 0 for r in by_rps]
        warnings = sorted({w for r in group for w in r.get("warnings", [])})
        chosen["warnings"] = [
            f"median of {len(group)} runs; req/s {fmt_rps(rps[0])}..{fmt_rps(rps[-1])}"
        ] + warnings
        picked.append(chosen)
    return picked


def read_rows(results_path):
    """The rows of results.jsonl, one per h2load run."""
    with open(results_path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ratio_figures(rows):
    """Name -> value of each ratio in RATIOS whose two valid rows are in `rows` (medians picked)."""
    picked = {(r["server"], r["shape"]): r for r in rows if r.get("ok")}
    values = {}
    for name, _, ours, reference, shape, field in RATIOS:
        a = picked.get((ours, shape), {}).get(field)
        b = picked.get((reference, shape), {}).get(field)
        if a is not None and b:
            values[name] = a / b
    return values


def table(results_path, markdown_out=None):
    rows = read_rows(results_path)

    def key(r):
        s = SERVER_ORDER.index(r["server"]) if r["server"] in SERVER_ORDER else 99
        c, m = (int(x) for x in r["shape"].split("x"))
        return (s, c * m)

    all_rows = rows
    rows = pick_medians(rows)
    rows.sort(key=key)
    header = ["server", "shape (conns x streams)", "req/s", "mean", "p50", "p99", "notes"]
    body = []
    for r in rows:
        notes = "; ".join(r.get("problems", []) + r.get("warnings", []))
        if not r.get("ok", False) and not notes:
            notes = "INVALID"
        body.append([
            SERVER_LABEL.get(r["server"], r["server"]),
            r["shape"],
            fmt_rps(r.get("rps")) if r.get("ok") else
            ("INVALID" + (f" ({fmt_rps(r['rps'])})" if r.get("rps") is not None else "")),
            fmt_us(r.get("mean_us")),
            fmt_us(r.get("p50_us")),
            fmt_us(r.get("p99_us")),
            notes,
        ])

    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    lines = []
    lines.append("| " + " | ".join(h.ljust(widths[i]) for i, h in enumerate(header)) + " |")
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for b in body:
        lines.append("| " + " | ".join(b[i].ljust(widths[i]) for i in range(len(header))) + " |")

    values = ratio_figures(rows)
    goals = {g["name"]: g for g in json.loads(THRESHOLDS.read_text())["figures"]} if THRESHOLDS.exists() else {}
    ratio_lines = []
    for name, label, *_ in RATIOS:
        value, goal = values.get(name), goals.get(name)
        if value is None:
            continue
        verdict = ""
        if goal is not None:
            met = value >= goal["threshold"] if goal["compare"] == ">=" else value <= goal["threshold"]
            verdict = f"  goal {goal['compare']} {goal['threshold']:g}x: {'MET' if met else 'NOT MET'}"
        ratio_lines.append(f"  {label.ljust(36)} {fmt_ratio(value)}{verdict}")

    if any(r.get("busy") for r in all_rows):
        lines.append("")
        lines.append("Warning: some runs started on a busy machine (1-minute load average above 1.5x the cores);")
        lines.append("other processes took CPU from the servers and h2load, so those figures are low and noisy.")
    text = "\n".join(lines)
    print(text)
    print()
    if ratio_lines:
        print("Ratios:")
        print("\n".join(ratio_lines))
    else:
        print("Ratios: none (they need 'ours' and a reference measured in the same run)")
    if markdown_out:
        record(pathlib.Path(markdown_out).parent, values)
        with open(markdown_out, "w", encoding="utf-8") as f:
            f.write(text + "\n\n")
            if ratio_lines:
                f.write("Ratios:\n\n```\n" + "\n".join(ratio_lines) + "\n```\n")


def main(argv):
    if len(argv) >= 2 and argv[1] == "parse" and len(argv) in (6, 8):
        parse(*argv[2:])
    elif len(argv) == 4 and argv[1] == "figures":
        record(argv[3], ratio_figures(pick_medians(read_rows(argv[2]))))
    elif len(argv) >= 2 and argv[1] == "table" and len(argv) in (3, 4):
        table(argv[2], argv[3] if len(argv) == 4 else None)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
