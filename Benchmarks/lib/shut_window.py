#!/usr/bin/env python3
"""Benchmarks/lib/shut_window.py — clients that ask and never read (issue 25, point 1).

Opens CONNECTIONS HTTP/2 connections to 127.0.0.1:PORT that announce a receive window of 0
(SETTINGS_INITIAL_WINDOW_SIZE 0, never a WINDOW_UPDATE) and start STREAMS unary calls of PATH
each, then hold them for HOLD seconds, reading (and dropping) whatever the server sends so
their connections stay up. Meanwhile a well-behaved client from another loopback address
(SOURCE, so a per-address rate limit does not count it with the flood) calls
grpc.health.v1.Health/Check every 50 ms and records each answer's latency, and the server
process PID's resident set is sampled every 100 ms. After the flood's connections close, the
resident set is watched for SETTLE seconds more, to see it come back down.

Prints one JSON object: baseline, peak and final RSS (MB), health-check latencies (p50, p99,
max, ms; failures) in all, while the server works through the flood's requests (until a
second after they were all sent) and while it holds them, and what the flood's streams got (answered OK, refused with a status,
still waiting). Loopback only, bounded in time and count; stops by itself.
"""
import argparse
import json
import selectors
import socket
import struct
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind, flags=0, stream=0, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream & 0x7FFFFFFF) + payload


def hpack_int(value):
    if value < 127:
        return bytes([value])
    out, value = [127], value - 127
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def literal(name, value):
    """A literal header field without indexing, literal name (RFC 7541 §6.2.2)."""
    name, value = name.encode(), value.encode()
    return b"\x00" + hpack_int(len(name)) + name + hpack_int(len(value)) + value


def request(stream, path, message):
    block = b"".join(literal(n, v) for n, v in [
        (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "127.0.0.1"),
        ("content-type", "application/grpc+json"), ("te", "trailers")])
    body = message.encode()
    return (frame(HEADERS, END_HEADERS, stream, block)
            + frame(DATA, END_STREAM, stream, b"\x00" + struct.pack(">I", len(body)) + body))


class FrameReader:
    """Splits a connection's bytes into frames; answers SETTINGS and PING as a client must."""

    def __init__(self, sock):
        self.sock, self.buffer = sock, b""

    def feed(self, data):
        self.buffer += data
        frames = []
        while len(self.buffer) >= 9:
            length = int.from_bytes(self.buffer[:3], "big")
            if len(self.buffer) < 9 + length:
                break
            kind, flags = self.buffer[3], self.buffer[4]
            stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
            payload = self.buffer[9:9 + length]
            self.buffer = self.buffer[9 + length:]
            if kind == SETTINGS and not flags & ACK:
                self.sock.sendall(frame(SETTINGS, ACK))
            elif kind == PING and not flags & ACK:
                self.sock.sendall(frame(PING, ACK, 0, payload))
            frames.append((kind, flags, stream, payload))
        return frames


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def health_prober(port, source, stop, latencies, failures):
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.settimeout(2)
    reader = FrameReader(sock)
    sock.sendall(PREFACE + frame(SETTINGS) + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 1 << 30)))
    stream = 1
    while not stop.is_set():
        started = time.monotonic()
        sock.sendall(request(stream, "/grpc.health.v1.Health/Check", "{}"))
        done = False
        try:
            while not done:
                data = sock.recv(65536)
                if not data:
                    failures.append("connection closed")
                    return
                for kind, flags, sid, payload in reader.feed(data):
                    if sid == stream and kind == HEADERS and flags & END_STREAM:
                        done = True
                    elif sid == stream and kind == RST_STREAM:
                        failures.append("reset")
                        done = True
        except socket.timeout:
            failures.append("timeout")
        latencies.append((started, (time.monotonic() - started) * 1000))
        stream += 2
        stop.wait(0.05)
    sock.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--probe-port", type=int)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--message", default="{}")
    parser.add_argument("--connections", type=int, default=200)
    parser.add_argument("--streams", type=int, default=250)
    parser.add_argument("--hold", type=float, default=15)
    parser.add_argument("--settle", type=float, default=40)
    parser.add_argument("--source", default="127.0.0.2")
    args = parser.parse_args()

    baseline = rss_mb(args.pid)
    peak = [baseline]
    stop_sampling = threading.Event()

    def sample():
        while not stop_sampling.is_set():
            peak[0] = max(peak[0], rss_mb(args.pid))
            stop_sampling.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stop_probe = threading.Event()
    latencies, failures = [], []
    prober = threading.Thread(
        target=health_prober, args=(args.probe_port or args.port, args.source, stop_probe, latencies, failures), daemon=True)
    prober.start()

    selector = selectors.DefaultSelector()
    readers = {}
    answered = {"headers-only": 0, "data": 0, "reset": 0, "goaway": 0}
    started = time.monotonic()
    for _ in range(args.connections):
        sock = socket.socket()
        sock.connect(("127.0.0.1", args.port))
        sock.setblocking(True)
        # SETTINGS_INITIAL_WINDOW_SIZE (4) = 0: no answer byte may be sent to us.
        payload = b"".join(request(2 * i + 1, args.path, args.message) for i in range(args.streams))
        sock.sendall(PREFACE + frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 0)) + payload)
        sock.setblocking(False)
        readers[sock.fileno()] = FrameReader(sock)
        selector.register(sock, selectors.EVENT_READ)
    opened = time.monotonic() - started
    burst_end = time.monotonic() + 1  # the server works through the flood's requests meanwhile
    while time.monotonic() - started < args.hold:
        for key, _ in selector.select(timeout=0.2):
            try:
                data = key.fileobj.recv(65536)
            except (BlockingIOError, ConnectionError):
                continue
            if not data:
                selector.unregister(key.fileobj)
                continue
            for kind, flags, _, _ in readers[key.fileobj.fileno()].feed(data):
                if kind == HEADERS and flags & END_STREAM:
                    answered["headers-only"] += 1
                elif kind == DATA:
                    answered["data"] += 1
                elif kind == RST_STREAM:
                    answered["reset"] += 1
                elif kind == GOAWAY:
                    answered["goaway"] += 1
    flood_peak = peak[0]
    for key in list(selector.get_map().values()):
        key.fileobj.close()
    stop_probe.set()
    prober.join(5)
    settle_started = time.monotonic()
    final = rss_mb(args.pid)
    while time.monotonic() - settle_started < args.settle:
        time.sleep(1)
        final = rss_mb(args.pid)
        if final < baseline + 32:
            break
    stop_sampling.set()

    def summary(samples):
        ordered = sorted(samples)

        def pct(p):
            return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))], 2) if ordered else None
        return {"count": len(ordered), "p50": pct(0.5), "p99": pct(0.99), "max": pct(1.0)}

    print(json.dumps({
        "path": args.path, "connections": args.connections, "streams_each": args.streams,
        "open_seconds": round(opened, 2),
        "rss_mb": {"baseline": round(baseline, 1), "peak": round(flood_peak, 1), "final": round(final, 1),
                   "settled_after_s": round(time.monotonic() - settle_started, 1)},
        "health_ms": summary([ms for at, ms in latencies]),
        "health_ms_burst": summary([ms for at, ms in latencies if at < burst_end]),
        "health_ms_held": summary([ms for at, ms in latencies if at >= burst_end]),
        "health_failures": len(failures),
        "flood_streams": answered,
    }))


if __name__ == "__main__":
    main()
