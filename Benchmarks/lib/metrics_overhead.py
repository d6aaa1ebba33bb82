"""Benchmarks/metrics-overhead's helpers: a /metrics scraper run beside a loaded run, and the summary.

  python3 lib/metrics_overhead.py scrape OUT.tsv EVERY_SECONDS PORT...
      GETs http://127.0.0.1:PORT/metrics for each PORT in turn, one every EVERY_SECONDS, until
      SIGTERM; one line per scrape: start and end (microseconds since the epoch, as h2load's
      --log-file), port, HTTP status, body bytes.
  python3 lib/metrics_overhead.py summary WORK ROUNDS CLIENTS STREAMS CPUS CLK_TCK SECONDS
      reads the runs the script left in WORK, prints each round and the medians, and records
      the figures in WORK/figures.json.
  python3 lib/metrics_overhead.py perf-share FILE.perf
      the share of a profile's samples (Benchmarks/profile-get-product, recorded with call
      graphs) that have a metrics frame on their stack — the metrics' CPU share of that
      process — and the frames they are under; times its CPU per call, the metrics' cost.
"""
import collections
import http.client
import math
import pathlib
import re
import signal
import statistics
import subprocess
import sys
import time

from figures import record


def scrape(out, every, ports):
    """Scrapes each of `ports` in turn every `every` seconds until SIGTERM, writing `out`."""
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    with open(out, "w", encoding="utf-8") as f:
        turn = 0
        while not stopping:
            port = ports[turn % len(ports)]
            turn += 1
            start = time.time()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                connection.request("GET", "/metrics")
                response = connection.getresponse()
                status, size = response.status, len(response.read())
            except OSError as error:
                status, size = f"error:{error.__class__.__name__}", 0
            finally:
                connection.close()
            end = time.time()
            f.write(f"{int(start * 1e6)}\t{int(end * 1e6)}\t{port}\t{status}\t{size}\n")
            f.flush()
            time.sleep(every)


def percentile(sorted_values, p):
    """The nearest-rank p-th percentile of `sorted_values` (NaN when empty)."""
    if not sorted_values:
        return float("nan")
    return sorted_values[max(1, math.ceil(p / 100 * len(sorted_values))) - 1]


def calls(log):
    """h2load's --log-file: (start µs since the epoch, duration µs) of each call."""
    rows = []
    for line in log.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) >= 3:
            rows.append((int(fields[0]), int(fields[2])))
    return rows


def h2load_counts(text):
    """req/s, calls done, and h2load's line of request counts, from its output."""
    rps = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", text).group(1))
    line = re.search(r"requests: .*", text).group(0)
    done = int(re.search(r"requests: \d+ total, \d+ started, (\d+) done", text).group(1))
    return rps, done, line


class Run:
    """One h2load run of the script: its throughput, latency and the CPU per call of each process."""

    def __init__(self, work, name, tick_us, seconds):
        text = (work / f"{name}.txt").read_text()
        self.rps, self.done, self.requests = h2load_counts(text)
        self.ok = bool(re.search(r" 0 failed, 0 errored, 0 timeout", self.requests))
        durations = sorted(d for _, d in calls(work / f"{name}.log"))
        self.p50, self.p99 = (percentile(durations, p) / 1000 for p in (50, 99))
        ticks = [int(t) for t in (work / f"{name}.cpu").read_text().split()]
        # CPU µs per completed call: catalog-svc, the gateway, h2load.
        self.catalog, self.gateway, self.client = (t * tick_us / max(self.done, 1) for t in ticks)
        # Cores these three kept busy on average during the run.
        self.busy = sum(ticks) * tick_us / 1e6 / seconds

    @property
    def servers(self):
        """CPU µs per call of the server processes the call passed through."""
        return self.catalog + self.gateway


def implied_cost_us(on, off):
    """The CPU per call the throughput's change implies: (1/on − 1/off) × the cores busy, in µs."""
    cores = (on.busy + off.busy) / 2
    return (1 / on.rps - 1 / off.rps) * cores * 1e6


def summary(work, rounds, clients, streams, cpus, clk_tck, seconds):
    """Prints every round and the medians, records the figures."""
    tick_us = 1e6 / clk_tck
    print(f"GetProduct at {clients} connections x {streams} streams, {seconds} s per run, {cpus}")
    figures = {}
    for path in ("direct", "gateway"):
        per_round = []
        for r in range(1, rounds + 1):
            on, off = (Run(work, f"{path}-{v}-{r}", tick_us, seconds) for v in ("on", "off"))
            per_round.append((on, off))
            print(
                f"{path:7} round {r}: on {on.rps:8.0f} req/s p50 {on.p50:5.2f} p99 {on.p99:5.2f} ms | "
                f"off {off.rps:8.0f} req/s p50 {off.p50:5.2f} p99 {off.p99:5.2f} ms | on/off {on.rps / off.rps:.3f}")
            usage = lambda run: (
                f"catalog-svc {run.catalog:5.2f}" + (f" gateway {run.gateway:5.2f}" if path == "gateway" else "")
                + f" h2load {run.client:5.2f}")
            print(f"                 CPU per call (us): on {usage(on)} | off {usage(off)}")
            for run, v in ((on, "on"), (off, "off")):
                if not run.ok:
                    print(f"                 {v}: {run.requests}")
        med = lambda f: statistics.median(f(on, off) for on, off in per_round)
        ratio = med(lambda on, off: on.rps / off.rps)
        figures[f"{path}_on_per_off_rps_median"] = ratio
        print(f"{path}: on/off throughput median {ratio:.3f} "
              f"(min {min(on.rps / off.rps for on, off in per_round):.3f}, max {max(on.rps / off.rps for on, off in per_round):.3f})")
        catalog = med(lambda on, off: on.catalog - off.catalog)
        figures[f"{path}_catalog_metrics_cpu_us"] = catalog
        line = (f"  CPU per call, median on / off: catalog-svc {med(lambda on, off: on.catalog):.2f} / "
                f"{med(lambda on, off: off.catalog):.2f} us (metrics {catalog:+.2f})")
        if path == "gateway":
            gateway = med(lambda on, off: on.gateway - off.gateway)
            both = med(lambda on, off: on.servers - off.servers)
            figures["gateway_gateway_metrics_cpu_us"] = gateway
            figures["gateway_metrics_cpu_us"] = both
            line += (f", gateway {med(lambda on, off: on.gateway):.2f} / {med(lambda on, off: off.gateway):.2f} us "
                     f"(metrics {gateway:+.2f}); both processes {both:+.2f} us per forwarded call")
        print(line)
        implied = med(implied_cost_us)
        figures[f"{path}_implied_metrics_us"] = implied
        print(f"  cost implied by req/s, (1/on - 1/off) x cores busy ({med(lambda on, off: on.busy):.2f}): "
              f"median {implied:+.2f} us per call; h2load {med(lambda on, off: on.client):.2f} us per call")
    figures["uncounted_calls"] = counted(work, rounds)
    figures.update(scrapes(work))
    record(work, figures)
    print(f"results in {work}")


def counted(work, rounds):
    """Compares what the "on" processes counted in each round with the calls h2load finished
    on them; returns the calls finished but not counted, over all rounds (0 when none was lost)."""
    lost = 0
    for r in range(1, rounds + 1):
        done = lambda name: h2load_counts((work / f"{name}.txt").read_text())[1]
        catalog_counted, gateway_counted = (int(n) for n in (work / f"counted-{r}").read_text().split())
        through_gateway = done(f"warm-{r}-on") + done(f"gateway-on-{r}") + 1  # + the check's call
        straight = done(f"direct-on-{r}") + 1
        for name, got, finished in (("catalog-svc", catalog_counted, straight + through_gateway),
                                    ("gateway", gateway_counted, through_gateway)):
            lost += max(0, finished - got)
            if got < finished or r == rounds:
                print(f"round {r}: {name} counted {got} GetProduct calls, h2load and the checks finished {finished}"
                      " (calls in flight when h2load stops are counted but not finished)")
    return lost


def scrapes(work):
    """Each scrape's time during the loaded run, and the latency of the calls that overlapped one."""
    table = work / "scrapes.tsv"
    if not table.exists():
        return {}
    rows = [line.split("\t") for line in table.read_text().splitlines()]
    good = [(int(s), int(e), port, int(size)) for s, e, port, status, size in rows if status == "200"]
    failed = len(rows) - len(good)
    times = sorted((e - s) / 1000 for s, e, _, _ in good)
    sizes = {port: size for _, _, port, size in good}
    all_calls = calls(work / "scraped.log")
    overlapping = sorted(d / 1000 for start, d in all_calls if any(start < e and start + d > s for s, e, _, _ in good))
    durations = sorted(d / 1000 for _, d in all_calls)
    rps = h2load_counts((work / "scraped.txt").read_text())[0]
    print(f"scrapes during a loaded run through the gateway ({rps:.0f} req/s): {len(good)} answered 200"
          f"{f', {failed} failed' if failed else ''}, bodies {', '.join(f'{p}: {b} B' for p, b in sizes.items())}; "
          f"time p50 {percentile(times, 50):.2f} ms, max {percentile(times, 100):.2f} ms")
    print(f"  calls overlapping a scrape: {len(overlapping)}, p99 {percentile(overlapping, 99):.2f} ms, "
          f"max {percentile(overlapping, 100):.2f} ms; all calls of the run: p99 {percentile(durations, 99):.2f} ms, "
          f"max {percentile(durations, 100):.2f} ms")
    return {
        "scrape_ms_max": percentile(times, 100),
        "scrape_failures": failed,
        "scrape_overlapping_call_p99_per_all_p99": percentile(overlapping, 99) / percentile(durations, 99),
    }


# The frames of the metrics' code (Shared/Telemetry's call metrics and series, the server's lookup of them).
METRICS_FRAME = re.compile(r"MethodCallMetrics|RPCCallMetrics|Histogram|Counter|AtomicCells|methodMetrics|Telemetry")


def perf_share(profile):
    """Prints the share of `profile`'s samples with a metrics frame on their stack, by that frame."""
    text = subprocess.run(["perf", "script", "-i", profile, "-F", "ip,sym"], capture_output=True, text=True, check=True).stdout
    samples = [s for s in text.split("\n\n") if s.strip()]
    under = collections.Counter()
    for sample in samples:
        frame = next((line.split(None, 1)[-1] for line in sample.strip().splitlines() if METRICS_FRAME.search(line)), None)
        if frame:
            under[frame] += 1
    total = sum(under.values())
    print(f"{total} of {len(samples)} samples ({100 * total / max(len(samples), 1):.2f}%) have a metrics frame:")
    for frame, count in under.most_common(10):
        print(f"  {count:6d}  {frame}")


def main(argv):
    if len(argv) >= 5 and argv[1] == "scrape":
        scrape(argv[2], float(argv[3]), [int(p) for p in argv[4:]])
        return 0
    if len(argv) == 9 and argv[1] == "summary":
        summary(pathlib.Path(argv[2]), int(argv[3]), argv[4], argv[5], argv[6], int(argv[7]), float(argv[8]))
        return 0
    if len(argv) == 3 and argv[1] == "perf-share":
        perf_share(argv[2])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
