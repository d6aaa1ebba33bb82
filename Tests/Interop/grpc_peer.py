#!/usr/bin/env python3
"""Third-party gRPC peer (grpcio) for the Storefront interop tests.

It proves that our Swift runtime speaks real gRPC (h2c, JSON messages, see
/work/shared/API.md section 1) by talking to a stock grpcio implementation.

Modes:
  grpc_peer.py server [--port 0]
      Serves interop.v1.EchoService on 127.0.0.1. Prints exactly one line
      "PORT <n>" on stdout once it is listening, then serves until stdin reaches
      EOF or SIGTERM/SIGINT arrives. Start it with stdin connected to a pipe.
  grpc_peer.py client --port N [--skip-health] [--timeout S]
      Runs every interop check against a server on 127.0.0.1:N. Prints one line
      per check ("ok <name>", "FAIL <name>: <details>" or
      "skip <name>: <why>"), then "interop: <passed> passed, <failed> failed".
      Exits 0 only if no check failed.
"""

import argparse
import json
import os
import queue
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

SERVICE = "interop.v1.EchoService"
MIB = 1024 * 1024
PEER_OPTIONS = [("grpc.max_receive_message_length", 8 * MIB), ("grpc.max_send_message_length", 8 * MIB)]
REASON_KEY = "shop-error-reason"
MALFORMED = "MALFORMED_MESSAGE"
REQUEST_ID = "interop-1"


def to_json(message) -> bytes:
    """Serializes a message as compact UTF-8 JSON (non-ASCII left unescaped)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def identity(data: bytes) -> bytes:
    return data


# --------------------------------------------------------------------------- server

_MALFORMED_REQUEST = object()  # what the lenient deserializer yields for bad input


def _lenient_from_json(data: bytes):
    """Deserializer that never raises, so handlers can answer INVALID_ARGUMENT
    (grpcio itself would turn a deserializer exception into INTERNAL)."""
    try:
        value = json.loads(data)
    except ValueError:  # includes UnicodeDecodeError
        return _MALFORMED_REQUEST
    return value if isinstance(value, dict) else _MALFORMED_REQUEST


def _fail(context, code, reason, message):
    context.set_trailing_metadata(((REASON_KEY, reason),))
    context.abort(code, message)


def _field(context, request, name, kind, default):
    """Reads one request field; malformed requests and wrong types abort the call."""
    if request is _MALFORMED_REQUEST:
        _fail(context, grpc.StatusCode.INVALID_ARGUMENT, MALFORMED, "malformed JSON message")
    value = request.get(name)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        _fail(context, grpc.StatusCode.INVALID_ARGUMENT, MALFORMED, f"field {name!r} has the wrong type")
    return value


def _unary(request, context):
    text = _field(context, request, "text", str, "")
    if text.startswith("fail:"):
        _, code_name, reason = (text.split(":", 2) + ["", ""])[:3]
        code = grpc.StatusCode.__members__.get(code_name)
        if code is None or code is grpc.StatusCode.OK:
            _fail(context, grpc.StatusCode.INVALID_ARGUMENT, MALFORMED, f"unknown status code {code_name!r}")
        _fail(context, code, reason, "requested failure")
    if text == "metadata":
        text = dict(context.invocation_metadata()).get("x-request-id", "")
    return {"text": text}


def _server_stream(request, context):
    text = _field(context, request, "text", str, "")
    count = _field(context, request, "count", int, 0)
    if count < 0:
        _fail(context, grpc.StatusCode.INVALID_ARGUMENT, MALFORMED, "count must not be negative")
    for i in range(count):
        yield {"text": f"{text}-{i}"}


def _client_stream(request_iterator, context):
    texts = [_field(context, request, "text", str, "") for request in request_iterator]
    return {"text": ",".join(texts), "count": len(texts)}


def _bidi(request_iterator, context):
    for request in request_iterator:
        yield {"text": _field(context, request, "text", str, "")}


def _sleep(request, context):
    deadline = time.monotonic() + max(0, _field(context, request, "millis", int, 0)) / 1000
    while context.is_active():  # becomes False on cancellation or deadline expiry
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return {"text": "slept"}
        time.sleep(min(remaining, 0.01))
    return {"text": "cancelled"}  # never delivered: the call is already over


def serve(port: int) -> int:
    def json_handler(make, behaviour):
        return make(behaviour, request_deserializer=_lenient_from_json, response_serializer=to_json)

    handlers = {
        "Unary": json_handler(grpc.unary_unary_rpc_method_handler, _unary),
        "ServerStream": json_handler(grpc.unary_stream_rpc_method_handler, _server_stream),
        "ClientStream": json_handler(grpc.stream_unary_rpc_method_handler, _client_stream),
        "Bidi": json_handler(grpc.stream_stream_rpc_method_handler, _bidi),
        "Sleep": json_handler(grpc.unary_unary_rpc_method_handler, _sleep),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64), options=PEER_OPTIONS + [("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print(f"PORT {bound}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def watch_stdin():
        try:  # raw fd reads: a buffered sys.stdin would hold a lock at interpreter exit
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    while not stop.wait(0.1):
        pass
    server.stop(grace=0.2).wait()
    return 0


# --------------------------------------------------------------------------- client

class CheckFailed(Exception):
    pass


def expect(condition, details):
    if not condition:
        raise CheckFailed(details)


class Peer:
    """Thin wrapper around a grpcio channel: JSON (or raw byte) codecs, default
    per-call timeout, and x-request-id metadata on every call."""

    def __init__(self, channel, timeout):
        self.channel, self.timeout = channel, timeout
        self.metadata = (("x-request-id", REQUEST_ID),)

    def stub(self, kind, path, raw=False):
        factory = getattr(self.channel, kind)  # unary_unary / unary_stream / stream_unary / stream_stream
        if not path.startswith("/"):
            path = f"/{SERVICE}/{path}"
        codec = (identity, identity) if raw else (to_json, json.loads)
        return factory(path, request_serializer=codec[0], response_deserializer=codec[1])

    def call(self, kind, path, request, raw=False, timeout=None):
        return self.stub(kind, path, raw)(request, timeout=timeout or self.timeout, metadata=self.metadata)

    def unary(self, path, request, raw=False, timeout=None):
        return self.call("unary_unary", path, request, raw, timeout)


def expect_error(call, code, details=None, reason=None):
    """Runs call() and checks that it fails with the given status (and trailer)."""
    try:
        call()
    except grpc.RpcError as error:
        expect(error.code() == code, f"status {error.code().name} ({error.details()!r}), expected {code.name}")
        if details is not None:
            expect(error.details() == details, f"details {error.details()!r}, expected {details!r}")
        if reason is not None:
            trailers = dict(error.trailing_metadata() or ())
            expect(trailers.get(REASON_KEY) == reason, f"trailers {trailers!r}, expected {REASON_KEY}={reason}")
        return
    raise CheckFailed(f"call succeeded, expected {code.name}")


def check_echo(peer, text):
    got = peer.unary("Unary", {"text": text}).get("text", "")  # an empty string may be omitted
    expect(got == text, f"echoed {got[:80]!r} (length {len(got)}), expected {text[:80]!r} (length {len(text)})")


def check_requested_failure(peer, code, reason):
    expect_error(lambda: peer.unary("Unary", {"text": f"fail:{code.name}:{reason}"}),
                 code, "requested failure", reason)


def check_metadata(peer):
    got = peer.unary("Unary", {"text": "metadata"}).get("text")
    expect(got == REQUEST_ID, f"got {got!r}, expected {REQUEST_ID!r}")


def check_server_stream(peer, count):
    call = peer.call("unary_stream", "ServerStream", {"text": "s", "count": count})
    texts = [message.get("text") for message in call]
    expected = [f"s-{i}" for i in range(count)]
    expect(texts == expected, f"got {texts!r}, expected {expected!r}")
    expect(call.code() == grpc.StatusCode.OK, f"status {call.code().name}")


def check_client_stream(peer):
    got = peer.call("stream_unary", "ClientStream", iter([{"text": t} for t in "abc"]))
    expect(got == {"text": "a,b,c", "count": 3}, f"got {got!r}")


def check_bidi(peer):
    outbox, done = queue.Queue(), object()
    call = peer.call("stream_stream", "Bidi", iter(outbox.get, done))
    try:
        for i in range(4):
            outbox.put({"text": f"b{i}"})  # send one, then read its echo before sending the next
            got = next(call)
            expect(got == {"text": f"b{i}"}, f"message {i}: got {got!r}")
        outbox.put(done)  # half-close
        rest = list(call)
        expect(rest == [], f"unexpected extra messages {rest!r}")
        expect(call.code() == grpc.StatusCode.OK, f"status {call.code().name}")
    finally:
        outbox.put(done)
        call.cancel()  # no-op when the call already finished


def check_deadline(peer):
    started = time.monotonic()
    expect_error(lambda: peer.unary("Sleep", {"millis": 2000}, timeout=0.3), grpc.StatusCode.DEADLINE_EXCEEDED)
    elapsed = time.monotonic() - started
    expect(elapsed < 1.5, f"took {elapsed:.2f}s")


def check_health_protobuf(peer):
    got = peer.unary("/grpc.health.v1.Health/Check", b"", raw=True)
    expect(got == b"\x08\x01", f"got {got!r}, expected b'\\x08\\x01' (SERVING)")


def check_health_json(peer):
    got = peer.unary("/grpc.health.v1.Health/Check", {"service": ""})
    expect(got.get("status") == "SERVING", f"got {got!r}")


def check_concurrency(peer):
    texts = [f"concurrent-{i}" for i in range(50)]
    with futures.ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(lambda t: peer.unary("Unary", {"text": t}).get("text"), texts))
    wrong = [(want, got) for want, got in zip(texts, results) if want != got]
    expect(not wrong, f"{len(wrong)} mismatches, first {wrong[:1]!r}")


def check_cancellation(peer):
    call = peer.stub("unary_unary", "Sleep").future({"millis": 5000}, timeout=10, metadata=peer.metadata)
    time.sleep(0.2)
    if call.done():  # only now: call.code() blocks until the call is over
        raise CheckFailed(f"Sleep(5000) finished early with {call.code().name}")
    expect(call.cancel(), "cancel() returned False")
    expect(call.cancelled(), "call does not report cancelled")
    expect(call.code() == grpc.StatusCode.CANCELLED, f"status {call.code().name}")


S = grpc.StatusCode
CHECKS = [  # (name, needs grpc.health.v1, check(peer))
    ("unary_unicode", False, lambda p: check_echo(p, "héllo ✓ 世界")),
    ("unary_empty_text", False, lambda p: check_echo(p, "")),
    ("unary_1mib", False, lambda p: check_echo(p, "0123456789abcdef" * (MIB // 16))),
    ("unary_error_not_found", False, lambda p: check_requested_failure(p, S.NOT_FOUND, "PRODUCT_NOT_FOUND")),
    ("unary_error_invalid_argument", False, lambda p: check_requested_failure(p, S.INVALID_ARGUMENT, MALFORMED)),
    ("metadata_request_id", False, check_metadata),
    ("server_stream_5", False, lambda p: check_server_stream(p, 5)),
    ("server_stream_0", False, lambda p: check_server_stream(p, 0)),
    ("client_stream_3", False, check_client_stream),
    ("bidi_interleaved_4", False, check_bidi),
    ("deadline_exceeded", False, check_deadline),
    ("unknown_method", False, lambda p: expect_error(lambda: p.unary("Nope", {"text": "x"}), S.UNIMPLEMENTED)),
    ("unknown_service", False,
     lambda p: expect_error(lambda: p.unary("/interop.v1.NoSuchService/Unary", {"text": "x"}), S.UNIMPLEMENTED)),
    ("malformed_json", False,
     lambda p: expect_error(lambda: p.unary("Unary", b"not json", raw=True), S.INVALID_ARGUMENT, reason=MALFORMED)),
    ("health_protobuf", True, check_health_protobuf),
    ("health_json", True, check_health_json),
    ("concurrent_unary_50", False, check_concurrency),
    ("cancellation", False, check_cancellation),
]


def run_check(function, peer):
    """Runs one check; returns None on success, else what went wrong."""
    try:
        function(peer)
    except CheckFailed as error:
        return str(error)
    except grpc.RpcError as error:
        return f"unexpected status {error.code().name} ({error.details()!r})"
    except Exception as error:  # a bug in the check or the peer: still report it
        return f"{type(error).__name__}: {error}"
    return None


def run_client(port: int, skip_health: bool, timeout: float) -> int:
    passed = failed = 0
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=PEER_OPTIONS) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            print(f"FAIL connect: no connection to 127.0.0.1:{port} within {timeout}s", flush=True)
            print("interop: 0 passed, 1 failed", flush=True)
            return 1
        peer = Peer(channel, timeout)
        for name, needs_health, function in CHECKS:
            if needs_health and skip_health:
                print(f"skip {name}: --skip-health", flush=True)
                continue
            problem = run_check(function, peer)
            if problem is None:
                passed += 1
                print(f"ok {name}", flush=True)
            else:
                failed += 1
                print(f"FAIL {name}: {problem}".replace("\n", " "), flush=True)
    print(f"interop: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    server = modes.add_parser("server", help="serve interop.v1.EchoService")
    server.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = ephemeral)")
    client = modes.add_parser("client", help="run the interop checks against a server")
    client.add_argument("--port", type=int, required=True, help="server port on 127.0.0.1")
    client.add_argument("--skip-health", action="store_true", help="skip the grpc.health.v1 checks")
    client.add_argument("--timeout", type=float, default=10.0, help="per-call and connect timeout in seconds")
    args = parser.parse_args(argv)
    if args.mode == "server":
        return serve(args.port)
    return run_client(args.port, args.skip_health, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
