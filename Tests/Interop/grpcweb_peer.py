#!/usr/bin/env python3
"""Interop peer: gRPC-Web clients nobody here wrote, from PyPI, against the gateway.

Usage:
  grpcweb_peer.py --port N --mail-dir DIR [--timeout S]

Two independent gRPC-Web client implementations call a Storefront gateway on 127.0.0.1:N
with `application/grpc-web+json`:
  - sonora (its `sonora.client` gRPC-Web channel, urllib3: HTTP/1.1 only), given JSON
    serializers as a grpcio channel would be;
  - connect-python with `protocol=ProtocolType.GRPC_WEB` and its JSON codec, over HTTP/1.1 and
    HTTP/2 (cleartext, prior knowledge).
Neither sends `application/grpc-web-text`; that mode is checked with Python's http.client
from the bytes PROTOCOL-WEB.md describes (base64 of the binary frames).
Checks: unary calls, an error with its reason in the trailer frame, sign-up -> verification
(the token read from auth-svc's mail in DIR) -> sign-in, and WatchBasket server streaming that
sees a change made by another call, plus an error and a server-side deadline on a stream.
Prints one line per check (`ok NAME` / `FAIL NAME: details`) and ends with
`grpc-web: P passed, F failed`; exits 0 only when nothing failed. See README.md here.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import struct
import sys
import time
from pathlib import Path

from connect_peer import (
    PASSWORD, NOT_FOUND_ID, Checks, CheckFailed, DeadlineHeader, Requests, Shop, as_dict, as_int, expect,
    expect_error, fresh_email, transport, verification_token)

try:
    import grpc
    import sonora.aio
    import sonora.client
    import sonora.protocol
    from connectrpc.client import ConnectClientSync
    from connectrpc.code import Code
    from connectrpc.protocol import ProtocolType
except ImportError as error:  # pragma: no cover - reported, not raised
    print(f"FAIL import: {error} (install them: python3 -m pip install sonora connect-python)")
    print("grpc-web: 0 passed, 1 failed")
    sys.exit(1)

CONTENT_TYPE = "application/grpc-web+json"
TEXT_CONTENT_TYPE = "application/grpc-web-text+json"
CATALOG, AUTH, BASKET = "shop.catalog.v1.CatalogService", "shop.auth.v1.AuthService", "shop.basket.v1.BasketService"


# MARK: sonora


def encode_json(message: dict) -> bytes:
    return json.dumps(message).encode()


def decode_json(data: bytes) -> dict:
    return json.loads(data)


class SonoraRun:
    """The checks through sonora's gRPC-Web client (HTTP/1.1)."""

    def __init__(self, checks: Checks, base: str, mail_dir: Path, timeout: float) -> None:
        self.checks = checks
        self.base = base
        self.mail_dir = mail_dir
        self.timeout = timeout
        self.channel = sonora.client.insecure_web_channel(base)

    def check(self, name: str, body):
        return self.checks.run(f"sonora_h1_{name}", body)

    def metadata(self, token: str | None = None, extra=()) -> list[tuple[str, str]]:
        # sonora's channel sends `application/grpc-web+proto`; a later content-type replaces it.
        metadata = [("content-type", CONTENT_TYPE)]
        if token:
            metadata.append(("authorization", f"Bearer {token}"))
        return metadata + list(extra)

    def unary(self, service: str, method: str, request: dict, token: str | None = None, extra=()):
        """A unary call: (response, trailers). Errors raise sonora's WebRpcError."""
        call = sonora.client.UnaryUnaryCall(
            request, self.timeout, self.metadata(token, extra), f"{self.base}/{service}/{method}",
            self.channel._session, encode_json, decode_json)
        self.last_call = call
        return call(), dict(call.trailing_metadata() or [])

    def expect_error(self, body, code: grpc.StatusCode, reason: str | None) -> sonora.protocol.WebRpcError:
        """Runs `body`; expects sonora's WebRpcError of `code`, and `reason` in the trailers of
        `self.last_call`, the call `body` made last."""
        try:
            result = body()
        except sonora.protocol.WebRpcError as error:
            expect(error.code() == code, f"expected {code}, got {error.code()}: {error.details()}")
            trailers = dict(self.last_call.trailing_metadata() or [])
            if reason is not None:
                expect(trailers.get("shop-error-reason") == reason, f"trailers {trailers}; details {error.details()!r}")
            return error
        raise CheckFailed(f"expected {code}, the call succeeded: {result}")

    def run(self) -> None:
        self.check("get_product", self.get_product)
        self.check("not_found_with_reason", self.not_found)
        self.check("request_id_echoed", self.request_id)
        address = fresh_email("sonora")
        if not self.check("sign_up", lambda: self.sign_up(address)):
            return
        self.check("sign_in_unverified", lambda: self.expect_error(
            lambda: self.unary(AUTH, "SignIn", {"email": address, "password": PASSWORD}),
            grpc.StatusCode.FAILED_PRECONDITION, "EMAIL_NOT_VERIFIED"))
        if not self.check("verify_email", lambda: self.verify_email(address)):
            return
        token = self.check("sign_in", lambda: self.sign_in(address))
        if not isinstance(token, str):
            return
        self.check("watch_basket_sees_changes", lambda: self.watch_basket(token))
        self.check("watch_basket_unauthenticated", self.watch_unauthenticated)

    def get_product(self):
        response, trailers = self.unary(CATALOG, "GetProduct", {"id": 1})
        expect(response["product"]["id"] == 1 and bool(response["product"]["title"]), f"{response}")
        expect(trailers.get("grpc-status") == "0", f"trailers {trailers}")

    def not_found(self):
        error = self.expect_error(
            lambda: self.unary(CATALOG, "GetProduct", {"id": NOT_FOUND_ID}), grpc.StatusCode.NOT_FOUND, "PRODUCT_NOT_FOUND")
        expect(bool(error.details()), "no grpc-message")

    def request_id(self):
        self.unary(CATALOG, "GetProduct", {"id": 1}, extra=[("x-request-id", "grpc-web-interop-sonora")])
        headers = dict(self.last_call.initial_metadata())
        expect(headers.get("x-request-id") == "grpc-web-interop-sonora", f"headers {headers}")

    def sign_up(self, address: str):
        response, _ = self.unary(AUTH, "SignUp", {"email": address, "password": PASSWORD})
        expect(response["user"]["email"] == address, f"{response}")

    def verify_email(self, address: str):
        response, _ = self.unary(AUTH, "VerifyEmail", {"token": verification_token(self.mail_dir, address)})
        expect(response["user"]["emailVerified"] is True, f"{response}")

    def sign_in(self, address: str) -> str:
        session, _ = self.unary(AUTH, "SignIn", {"email": address, "password": PASSWORD})
        expect(session.get("tokenType") == "Bearer" and bool(session.get("accessToken")), f"{session}")
        return session["accessToken"]

    def watch(self, token: str | None):
        watch = self.channel.unary_stream(f"/{BASKET}/WatchBasket", encode_json, decode_json)
        return watch({}, timeout=self.timeout, metadata=self.metadata(token))

    def watch_basket(self, token: str):
        """Through sonora.aio (aiohttp), which hands over each message as it arrives; sonora's
        blocking client reads a response through a 16 KiB io.BufferedReader over http.client,
        which on a chunked body waits for 16 KiB or the end before giving the first message."""
        asyncio.run(self.watch_basket_async(token))

    async def watch_basket_async(self, token: str):
        async with sonora.aio.insecure_web_channel(self.base) as channel:
            watch = channel.unary_stream(f"/{BASKET}/WatchBasket", encode_json, decode_json)
            stream = watch({}, timeout=self.timeout, metadata=self.metadata(token)).__aiter__()
            try:
                first = await asyncio.wait_for(stream.__anext__(), self.timeout)
                expect(first.get("itemCount", 0) == 0, f"first basket {first}")
                await asyncio.to_thread(self.unary, BASKET, "AddItem", {"productId": 5, "count": 2}, token)
                second = await asyncio.wait_for(stream.__anext__(), self.timeout)
                expect(second.get("itemCount") == 2, f"after AddItem: {second}")
                expect([item["productId"] for item in second.get("items", [])] == [5], f"after AddItem: {second}")
                expect(second.get("version", 0) > first.get("version", 0), f"versions {first.get('version')} -> {second.get('version')}")
            finally:
                await stream.aclose()

    def watch_unauthenticated(self):
        call = self.watch(None)
        try:
            messages = list(call)
        except sonora.protocol.WebRpcError as error:
            expect(error.code() == grpc.StatusCode.UNAUTHENTICATED, f"{error}")
            trailers = dict(call.trailing_metadata() or [])
            headers = dict(call.initial_metadata() or [])
            reason = trailers.get("shop-error-reason") or headers.get("shop-error-reason")
            expect(reason == "MISSING_TOKEN", f"trailers {trailers}, headers {headers}")
            return
        raise CheckFailed(f"a watch without a token was served: {messages}")


# MARK: connect-python's gRPC-Web protocol


class ConnectGRPCWebRun:
    """The checks through connect-python with protocol=GRPC_WEB, over one HTTP version."""

    def __init__(self, checks: Checks, base: str, mail_dir: Path, version: str, timeout_ms: int) -> None:
        self.checks = checks
        self.base = base
        self.mail_dir = mail_dir
        self.tag = "h2" if version == "2" else "h1"
        self.http = transport(version)
        self.requests = Requests()
        self.shop = Shop(self.requests)
        self.timeout_ms = timeout_ms
        self.client = self.make_client(timeout_ms)

    def make_client(self, timeout_ms: int, interceptors=()):
        return ConnectClientSync(
            self.base, proto_json=True, protocol=ProtocolType.GRPC_WEB, http_client=self.http, send_compression=None,
            timeout_ms=timeout_ms, interceptors=interceptors)

    def check(self, name: str, body):
        return self.checks.run(f"connect_python_{self.tag}_{name}", body)

    def unary(self, method, request, headers=None):
        return as_dict(self.client.execute_unary(request=request, method=method, headers=headers))

    def run(self) -> None:
        self.check("get_product", self.get_product)
        self.check("not_found_with_reason", lambda: expect_error(
            lambda: self.unary(self.shop.get_product, self.requests.make("GetProductRequest", id=NOT_FOUND_ID)),
            Code.NOT_FOUND, "PRODUCT_NOT_FOUND", reason_sources=("trailer",)))
        address = fresh_email(f"grpcweb-{self.tag}")
        if not self.check("sign_up_verify_sign_in", lambda: self.sign_up_verify_sign_in(address)):
            return
        token = self.token
        self.check("watch_basket_sees_changes", lambda: self.watch_basket(token))
        self.check("watch_basket_deadline", lambda: self.watch_deadline(token))

    def get_product(self):
        product = self.unary(self.shop.get_product, self.requests.make("GetProductRequest", id=3))["product"]
        expect(as_int(product.get("id")) == 3 and bool(product.get("title")), f"{product}")

    def sign_up_verify_sign_in(self, address: str):
        user = self.unary(self.shop.sign_up, self.requests.make("SignUpRequest", email=address, password=PASSWORD))["user"]
        expect(user.get("email") == address, f"{user}")
        expect_error(
            lambda: self.unary(self.shop.sign_in, self.requests.make("SignInRequest", email=address, password=PASSWORD)),
            Code.FAILED_PRECONDITION, "EMAIL_NOT_VERIFIED", reason_sources=("trailer",))
        token = verification_token(self.mail_dir, address)
        verified = self.unary(self.shop.verify_email, self.requests.make("VerifyEmailRequest", token=token))["user"]
        expect(verified.get("emailVerified") is True, f"{verified}")
        session = self.unary(self.shop.sign_in, self.requests.make("SignInRequest", email=address, password=PASSWORD))
        expect(bool(session.get("accessToken")), f"{session}")
        self.token = session["accessToken"]

    def watch_basket(self, token: str):
        auth = {"authorization": f"Bearer {token}"}
        stream = self.client.execute_server_stream(request=self.requests.make("Empty"), method=self.shop.watch_basket, headers=auth)
        try:
            first = as_dict(next(stream))
            expect(as_int(first.get("itemCount", 0)) == 0, f"first basket {first}")
            self.unary(self.shop.add_item, self.requests.make("AddItemRequest", productId=6, count=1), headers=auth)
            second = as_dict(next(stream))
            expect(as_int(second.get("itemCount")) == 1, f"after AddItem: {second}")
        finally:
            stream.close()

    def watch_deadline(self, token: str):
        """`grpc-timeout: 800m` sent while the client itself would wait 5 s: the gateway ends the
        stream with DEADLINE_EXCEEDED in the trailer frame."""
        client = self.make_client(5000, [DeadlineHeader("grpc-timeout", "800m")])
        started = time.monotonic()
        stream = client.execute_server_stream(
            request=self.requests.make("Empty"), method=self.shop.watch_basket, headers={"authorization": f"Bearer {token}"})
        try:
            next(stream)
            expect_error(lambda: next(stream), Code.DEADLINE_EXCEEDED, reason_sources=())
        finally:
            stream.close()
        elapsed = time.monotonic() - started
        expect(0.7 < elapsed < 4, f"an 800 ms deadline ended the watch after {elapsed:.2f} s")


# MARK: grpc-web-text, from the protocol's description


def frames(data: bytes) -> list[tuple[int, bytes]]:
    """The (flags, payload) frames of a gRPC-Web body."""
    found, offset = [], 0
    while offset < len(data):
        expect(offset + 5 <= len(data), f"a truncated frame header at {offset}: {data!r}")
        flags, length = struct.unpack(">BI", data[offset:offset + 5])
        payload = data[offset + 5:offset + 5 + length]
        expect(len(payload) == length, f"a truncated frame at {offset}: {data!r}")
        found.append((flags, payload))
        offset += 5 + length
    return found


def trailer_fields(payload: bytes) -> dict[str, str]:
    fields = {}
    for line in payload.decode("ascii").split("\r\n"):
        if line:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
    return fields


def text_call(port: int, path: str, message: dict, timeout: float) -> tuple[int, dict, list[tuple[int, bytes]]]:
    """A grpc-web-text+json call: the request frame base64-encoded, the answer decoded the same way."""
    body = base64.b64encode(struct.pack(">BI", 0, len(encode_json(message))) + encode_json(message))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", path, body=body, headers={
            "content-type": TEXT_CONTENT_TYPE, "accept": TEXT_CONTENT_TYPE, "x-grpc-web": "1", "x-user-agent": "grpc-web-peer"})
        response = connection.getresponse()
        text = response.read()
        headers = {name.lower(): value for name, value in response.getheaders()}
    finally:
        connection.close()
    # Each answer chunk may be padded base64 of its own (the spec allows it): decode per group.
    decoded, rest = b"", text.strip()
    while rest:
        end = rest.find(b"=")
        if end < 0:
            decoded, rest = decoded + base64.b64decode(rest), b""
        else:
            end += 1
            while end < len(rest) and rest[end:end + 1] == b"=":
                end += 1
            decoded, rest = decoded + base64.b64decode(rest[:end]), rest[end:]
    return response.status, headers, frames(decoded)


def text_checks(checks: Checks, port: int, timeout: float) -> None:
    def unary():
        status, headers, answer = text_call(port, f"/{CATALOG}/GetProduct", {"id": 1}, timeout)
        expect(status == 200 and headers.get("content-type", "").startswith("application/grpc-web-text"), f"{status} {headers}")
        expect(len(answer) == 2 and answer[0][0] == 0 and answer[1][0] & 0x80, f"frames {answer}")
        expect(json.loads(answer[0][1])["product"]["id"] == 1, f"{answer[0][1]!r}")
        expect(trailer_fields(answer[1][1]).get("grpc-status") == "0", f"trailers {answer[1][1]!r}")

    def not_found():
        status, headers, answer = text_call(port, f"/{CATALOG}/GetProduct", {"id": NOT_FOUND_ID}, timeout)
        fields = dict(headers)
        if answer:
            expect(answer[-1][0] & 0x80, f"the last frame is no trailer frame: {answer}")
            fields.update(trailer_fields(answer[-1][1]))
        expect(status == 200, f"status {status}")
        expect(fields.get("grpc-status") == "5" and fields.get("shop-error-reason") == "PRODUCT_NOT_FOUND", f"{fields}")

    checks.run("text_h1_get_product", unary)
    checks.run("text_h1_not_found_with_reason", not_found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mail-dir", type=Path, required=True, help="auth-svc's <data-dir>/mail")
    parser.add_argument("--timeout", type=float, default=10.0, help="each call's deadline, seconds")
    arguments = parser.parse_args()
    base = f"http://127.0.0.1:{arguments.port}"
    checks = Checks("grpc-web")
    SonoraRun(checks, base, arguments.mail_dir, arguments.timeout).run()
    for version in ("1.1", "2"):
        ConnectGRPCWebRun(checks, base, arguments.mail_dir, version, int(arguments.timeout * 1000)).run()
    text_checks(checks, arguments.port, arguments.timeout)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
