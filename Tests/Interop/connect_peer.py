#!/usr/bin/env python3
"""Interop peer: a Connect client nobody here wrote (connect-python, PyPI) against the gateway.

Usage:
  connect_peer.py --port N --mail-dir DIR [--http 1.1|2|both] [--timeout S]

Calls a Storefront gateway on 127.0.0.1:N through the Connect protocol with the JSON codec,
over HTTP/1.1 and/or HTTP/2 (cleartext, prior knowledge): unary calls (POST and GET), errors
with their reason, sign-up -> verification (the token read from auth-svc's mailed .eml files
in DIR) -> sign-in, and WatchBasket server streaming that sees a change made by another call.
Prints one line per check (`ok NAME` or `FAIL NAME: details`) and ends with
`connect: P passed, F failed`; exits 0 only when nothing failed. See README.md here.

connect-python speaks protobuf messages. Its JSON codec (`proto_json=True`) writes them with
protobuf's JSON mapping, so the requests are message types declared here at run time (int32
fields, which that mapping writes as JSON numbers, as our API has them) and the responses are
`google.protobuf.Struct`, which reads any JSON object.

This file's helpers (`Checks`, `Requests`, `Shop`, the mail reader) are also used by
grpcweb_peer.py beside it.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import sys
import time
import traceback
import uuid
from pathlib import Path

try:
    import pyqwest
    from connectrpc.client import ConnectClientSync, ResponseMetadata
    from connectrpc.code import Code
    from connectrpc.errors import ConnectError
    from connectrpc.method import IdempotencyLevel, MethodInfo
    from connectrpc.protocol import ProtocolType
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory, struct_pb2
except ImportError as error:  # pragma: no cover - reported, not raised
    print(f"FAIL import: {error} (install it: python3 -m pip install connect-python)")
    print("connect: 0 passed, 1 failed")
    sys.exit(1)

PASSWORD = "amber-orchard-violin-58"
NOT_FOUND_ID = 987_654
REASON_DETAIL_TYPE = "shop.v1.ErrorReason"


# MARK: checks


class CheckFailed(Exception):
    """A check's expectation that did not hold."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


class Checks:
    """Runs named checks, prints `ok`/`FAIL` lines and the summary."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.passed = 0
        self.failed = 0

    def run(self, name: str, body) -> object:
        try:
            result = body()
        except CheckFailed as failure:
            self._fail(name, str(failure))
            return None
        except Exception as error:  # a client error is a failed check, with where it came from
            where = traceback.format_exc(limit=-3).strip().splitlines()
            self._fail(name, f"{type(error).__name__}: {error} | {' / '.join(line.strip() for line in where[-4:])}")
            return None
        self.passed += 1
        print(f"ok {name}", flush=True)
        return result if result is not None else True

    def _fail(self, name: str, details: str) -> None:
        self.failed += 1
        print(f"FAIL {name}: {' '.join(details.split())}", flush=True)

    def finish(self) -> int:
        print(f"{self.label}: {self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 else 1


# MARK: messages


class Requests:
    """Request message types for the methods the peers call, declared at run time."""

    _fields = {
        "GetProductRequest": [("id", "int32")],
        "SignUpRequest": [("email", "string"), ("password", "string")],
        "SignInRequest": [("email", "string"), ("password", "string")],
        "VerifyEmailRequest": [("token", "string")],
        "AddItemRequest": [("productId", "int32"), ("count", "int32")],
        "Empty": [],
    }
    _types = {
        "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
        "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    }

    def __init__(self) -> None:
        file = descriptor_pb2.FileDescriptorProto(name="storefront_peer.proto", package="storefront.peer", syntax="proto3")
        for message, fields in self._fields.items():
            declared = file.message_type.add(name=message)
            for number, (name, kind) in enumerate(fields, start=1):
                declared.field.add(
                    name=name, json_name=name, number=number, type=self._types[kind],
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(file)
        self.classes = {
            name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"storefront.peer.{name}"))
            for name in self._fields
        }

    def make(self, name: str, **fields):
        return self.classes[name](**fields)


def as_dict(message) -> dict:
    """A response (a Struct) as plain JSON values."""
    return json_format.MessageToDict(message)


def as_int(value) -> int | None:
    """A JSON number read through a Struct (always a float there) as an int."""
    if isinstance(value, (int, float)) and float(value).is_integer():
        return int(value)
    return None


class Shop:
    """The methods the peers call, as connect-python MethodInfo values."""

    def __init__(self, requests: Requests) -> None:
        def method(service: str, name: str, request: str, idempotency=IdempotencyLevel.UNKNOWN):
            return MethodInfo(
                name=name, service_name=service, input=requests.classes[request], output=struct_pb2.Struct,
                idempotency_level=idempotency)

        catalog, auth, basket = "shop.catalog.v1.CatalogService", "shop.auth.v1.AuthService", "shop.basket.v1.BasketService"
        self.get_product = method(catalog, "GetProduct", "GetProductRequest", IdempotencyLevel.NO_SIDE_EFFECTS)
        self.sign_up = method(auth, "SignUp", "SignUpRequest")
        self.sign_in = method(auth, "SignIn", "SignInRequest")
        self.verify_email = method(auth, "VerifyEmail", "VerifyEmailRequest")
        self.add_item = method(basket, "AddItem", "AddItemRequest")
        self.watch_basket = method(basket, "WatchBasket", "Empty")


# MARK: mail


def verification_token(mail_dir: Path, address: str, timeout: float = 10.0) -> str:
    """The token of the newest verify-email mail auth-svc wrote for `address` into `mail_dir`."""
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for path in sorted(mail_dir.glob("*.eml")) if mail_dir.is_dir() else []:
            try:
                mail = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            except OSError:
                continue
            if mail.get("X-Storefront-Kind") != "verify-email" or address.lower() not in str(mail.get("To", "")).lower():
                continue
            part = mail.get_body(preferencelist=("plain",)) or mail
            for line in part.get_content().splitlines():
                if line.strip().startswith("Token:"):
                    found.append((path.stat().st_mtime_ns, path.name, line.strip()[len("Token:"):].strip()))
        if found:
            return max(found)[2]
        if time.monotonic() >= deadline:
            raise CheckFailed(f"no verify-email mail to {address} in {mail_dir} within {timeout} s")
        time.sleep(0.05)


def fresh_email(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}@example.com"


# MARK: errors


def reason_of(error: ConnectError) -> str | None:
    """The reason in the error's `shop.v1.ErrorReason` detail, whose value is JSON bytes."""
    for detail in error.details:
        if detail.type_url.endswith("/" + REASON_DETAIL_TYPE):
            return json.loads(detail.value).get("reason")
    return None


def expect_error(call, code: Code, reason: str | None = None, reason_sources=("detail", "header")):
    """Runs `call` inside a ResponseMetadata; expects a ConnectError of `code` whose reason is
    visible in each of `reason_sources` (the detail, the `shop-error-reason` header or trailer)."""
    with ResponseMetadata() as metadata:
        try:
            result = call()
        except ConnectError as error:
            expect(error.code == code, f"expected {code.name}, got {error.code.name}: {error.message}")
            if reason is not None:
                found = {
                    "detail": reason_of(error),
                    "header": metadata.headers().get("shop-error-reason"),
                    "trailer": metadata.trailers().get("shop-error-reason"),
                }
                for source in reason_sources:
                    expect(found[source] == reason, f"reason {reason} not in the {source}: {found}; message {error.message!r}")
            return error
    raise CheckFailed(f"expected {code.name}, the call succeeded: {result}")


# MARK: the Connect checks


def transport(version: str):
    """A pyqwest client for cleartext HTTP/1.1, or HTTP/2 with prior knowledge."""
    if version == "2":
        return pyqwest.SyncClient(pyqwest.SyncHTTPTransport(http_version=pyqwest.HTTPVersion.HTTP2))
    return pyqwest.SyncClient(pyqwest.SyncHTTPTransport(http_version=pyqwest.HTTPVersion.HTTP1))


class ConnectRun:
    """Every check over one HTTP version."""

    def __init__(self, checks: Checks, base: str, mail_dir: Path, version: str, timeout_ms: int) -> None:
        self.checks = checks
        self.base = base
        self.mail_dir = mail_dir
        self.version = version
        self.tag = "h2" if version == "2" else "h1"
        self.timeout_ms = timeout_ms
        self.http = transport(version)
        self.requests = Requests()
        self.shop = Shop(self.requests)
        # No request compression: the gateway speaks identity only (see README.md here).
        self.client = ConnectClientSync(
            base, proto_json=True, protocol=ProtocolType.CONNECT, http_client=self.http,
            send_compression=None, timeout_ms=timeout_ms)

    def check(self, name: str, body):
        return self.checks.run(f"{self.tag}_{name}", body)

    def unary(self, method, request, headers=None, timeout_ms=None, use_get=False, client=None):
        return (client or self.client).execute_unary(
            request=request, method=method, headers=headers, timeout_ms=timeout_ms, use_get=use_get)

    def run(self) -> None:
        self.check("transport", self.transport_version)
        self.check("get_product", self.get_product)
        self.check("get_product_by_get", self.get_product_by_get)
        self.check("not_found_with_reason", self.not_found)
        self.check("request_id_echoed", self.request_id)
        self.check("gzip_request_answered", self.gzip_request)
        email_address = fresh_email(f"connect-{self.tag}")
        if not self.check("sign_up", lambda: self.sign_up(email_address)):
            return
        self.check("sign_in_unverified", lambda: self.sign_in_unverified(email_address))
        if not self.check("verify_email", lambda: self.verify_email(email_address)):
            return
        self.check("sign_in_wrong_password", lambda: self.sign_in_wrong_password(email_address))
        token = self.check("sign_in", lambda: self.sign_in(email_address))
        if not isinstance(token, str):
            return
        self.check("watch_basket_sees_changes", lambda: self.watch_basket(token))
        self.check("watch_basket_unauthenticated", self.watch_unauthenticated)
        self.check("watch_basket_deadline", lambda: self.watch_deadline(token))

    # unary

    def transport_version(self):
        expected = pyqwest.HTTPVersion.HTTP2 if self.version == "2" else pyqwest.HTTPVersion.HTTP1
        with self.http.stream("GET", f"{self.base}/healthz", timeout=self.timeout_ms / 1000) as response:
            body = b"".join(bytes(chunk) for chunk in response.content)
            expect(response.status == 200, f"/healthz answered {response.status}: {body!r}")
            expect(response.http_version == expected, f"/healthz came over {response.http_version}, not {expected}")

    def get_product(self):
        product = as_dict(self.unary(self.shop.get_product, self.requests.make("GetProductRequest", id=1)))["product"]
        expect(as_int(product.get("id")) == 1, f"product {product}")
        expect(bool(product.get("title")), f"no title: {product}")
        expect(as_int(product.get("price", {}).get("amount")) is not None, f"price {product.get('price')}")

    def get_product_by_get(self):
        with ResponseMetadata() as metadata:
            product = as_dict(self.unary(
                self.shop.get_product, self.requests.make("GetProductRequest", id=2), use_get=True))["product"]
        expect(as_int(product.get("id")) == 2, f"product {product}")
        cache = metadata.headers().get("cache-control") or ""
        expect("public" in cache or "max-age" in cache, f"a public catalog read without caching: cache-control {cache!r}")

    def not_found(self):
        error = expect_error(
            lambda: self.unary(self.shop.get_product, self.requests.make("GetProductRequest", id=NOT_FOUND_ID)),
            Code.NOT_FOUND, "PRODUCT_NOT_FOUND")
        expect(bool(error.message), "no message")

    def request_id(self):
        request_id = f"connect-interop-{self.tag}"
        with ResponseMetadata() as metadata:
            self.unary(self.shop.get_product, self.requests.make("GetProductRequest", id=1), headers={"x-request-id": request_id})
        expect(metadata.headers().get("x-request-id") == request_id, f"headers {dict(metadata.headers().items())}")

    def gzip_request(self):
        """connect-python compresses requests with gzip unless told not to. The gateway may take
        them, or refuse them as the spec says (unimplemented, naming what it accepts)."""
        stock = ConnectClientSync(self.base, proto_json=True, http_client=self.http, timeout_ms=self.timeout_ms)
        try:
            product = as_dict(self.unary(self.shop.get_product, self.requests.make("GetProductRequest", id=1), client=stock))
            expect(as_int(product["product"].get("id")) == 1, f"{product}")
        except ConnectError as error:
            expect(error.code == Code.UNIMPLEMENTED, f"gzip refused as {error.code.name}: {error.message}")
            expect(reason_of(error) == "UNSUPPORTED_ENCODING", f"reason {reason_of(error)}: {error.message}")

    def sign_up(self, address: str):
        user = as_dict(self.unary(self.shop.sign_up, self.requests.make("SignUpRequest", email=address, password=PASSWORD)))["user"]
        expect(user.get("email") == address, f"user {user}")
        expect(not user.get("emailVerified", False), f"verified before verifying: {user}")

    def sign_in_unverified(self, address: str):
        expect_error(
            lambda: self.unary(self.shop.sign_in, self.requests.make("SignInRequest", email=address, password=PASSWORD)),
            Code.FAILED_PRECONDITION, "EMAIL_NOT_VERIFIED")

    def verify_email(self, address: str):
        token = verification_token(self.mail_dir, address)
        user = as_dict(self.unary(self.shop.verify_email, self.requests.make("VerifyEmailRequest", token=token)))["user"]
        expect(user.get("emailVerified") is True, f"user {user}")

    def sign_in_wrong_password(self, address: str):
        expect_error(
            lambda: self.unary(self.shop.sign_in, self.requests.make("SignInRequest", email=address, password="not-" + PASSWORD)),
            Code.UNAUTHENTICATED, "INVALID_CREDENTIALS")

    def sign_in(self, address: str) -> str:
        session = as_dict(self.unary(self.shop.sign_in, self.requests.make("SignInRequest", email=address, password=PASSWORD)))
        expect(session.get("tokenType") == "Bearer" and bool(session.get("accessToken")), f"session {session}")
        expect(session.get("user", {}).get("email") == address, f"session user {session.get('user')}")
        return session["accessToken"]

    # server streaming

    def watch_basket(self, token: str):
        auth = {"authorization": f"Bearer {token}"}
        stream = self.client.execute_server_stream(
            request=self.requests.make("Empty"), method=self.shop.watch_basket, headers=auth, timeout_ms=self.timeout_ms)
        try:
            first = as_dict(next(stream))
            expect(as_int(first.get("itemCount", 0)) == 0, f"first basket {first}")
            for product_id, count in ((3, 2), (4, 1)):
                self.unary(self.shop.add_item, self.requests.make("AddItemRequest", productId=product_id, count=count), headers=auth)
            seen = [first]
            while as_int(seen[-1].get("itemCount", 0)) != 3:
                seen.append(as_dict(next(stream)))
                expect(len(seen) <= 4, f"too many updates: {seen}")
            ids = sorted(as_int(item.get("productId")) for item in seen[-1].get("items", []))
            expect(ids == [3, 4], f"last basket {seen[-1]}")
            versions = [as_int(basket.get("version", 0)) for basket in seen]
            expect(versions == sorted(versions) and versions[-1] > versions[0], f"versions {versions}")
        finally:
            stream.close()

    def watch_unauthenticated(self):
        def call():
            return list(self.client.execute_server_stream(
                request=self.requests.make("Empty"), method=self.shop.watch_basket, timeout_ms=self.timeout_ms))
        # A stream's error arrives in its end-of-stream message, the reason there as metadata.
        expect_error(call, Code.UNAUTHENTICATED, "MISSING_TOKEN", reason_sources=("detail", "trailer"))

    def watch_deadline(self, token: str):
        """The server ends a watch at the deadline it was sent (`connect-timeout-ms: 800`) while
        the client itself would wait 5 s: the error comes from the gateway's end-of-stream message."""
        client = ConnectClientSync(
            self.base, proto_json=True, protocol=ProtocolType.CONNECT, http_client=self.http, send_compression=None,
            timeout_ms=5000, interceptors=[DeadlineHeader("connect-timeout-ms", "800")])
        started = time.monotonic()
        stream = client.execute_server_stream(
            request=self.requests.make("Empty"), method=self.shop.watch_basket, headers={"authorization": f"Bearer {token}"})
        try:
            first = as_dict(next(stream))
            expect("version" in first or "itemCount" in first, f"first message {first}")
            expect_error(lambda: next(stream), Code.DEADLINE_EXCEEDED)
        finally:
            stream.close()
        elapsed = time.monotonic() - started
        expect(0.7 < elapsed < 4, f"an 800 ms deadline ended the watch after {elapsed:.2f} s")


class DeadlineHeader:
    """A connect-python interceptor that sends another deadline than the client waits for."""

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self.value = value

    def intercept_server_stream_sync(self, call_next, request, ctx):
        ctx.request_headers()[self.name] = self.value
        return call_next(request, ctx)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--mail-dir", type=Path, required=True, help="auth-svc's <data-dir>/mail")
    parser.add_argument("--http", choices=("1.1", "2", "both"), default="both")
    parser.add_argument("--timeout", type=float, default=10.0, help="each call's deadline, seconds")
    arguments = parser.parse_args()
    checks = Checks("connect")
    base = f"http://127.0.0.1:{arguments.port}"
    versions = ("1.1", "2") if arguments.http == "both" else (arguments.http,)
    for version in versions:
        ConnectRun(checks, base, arguments.mail_dir, version, int(arguments.timeout * 1000)).run()
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
