"""What the load drivers share: a JSON gRPC caller of one service, verified signed-in users, a
PlaceOrder request."""
import glob, json, re, time, uuid

import grpc

PASSWORD = "a long bench passphrase"

# A PlaceOrder request that pays with the test processor's approving card.
PLACE_ORDER_REQUEST = {
    "shippingAddress": {"name": "Bench", "line1": "1 Loop Road", "city": "Testville", "postalCode": "12345", "country": "US"},
    "payment": {"cardNumber": "4242424242424242", "expMonth": 12, "expYear": 2030, "cvc": "123"},
}


def caller(port, service):
    """A function calling `service`'s unary methods on 127.0.0.1:`port` with JSON messages."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")

    def call(method, request, metadata=()):
        stub = channel.unary_unary(
            f"/{service}/{method}", request_serializer=lambda m: json.dumps(m).encode(),
            response_deserializer=json.loads)
        return stub(request, metadata=metadata, timeout=30)
    return call


def signed_in_users(auth, mail_directory, count, label="bench", internal_key=None):
    """Signs up `count` users through `auth`, redeems each verification mail found in
    `mail_directory`, signs each in; returns their access tokens.

    auth-svc admits 10 sign-ups per client address per 30 s. With `internal_key` (auth-svc's
    SHOP_INTERNAL_API_KEY) each sign-up comes, as through the gateway, from its own address
    named in `x-forwarded-for`, so any number of users signs up at once."""
    tokens = []
    for index in range(count):
        email = f"{label}-{index}-{uuid.uuid4().hex[:6]}@example.com"
        forwarded = ()
        if internal_key is not None:
            forwarded = (("x-api-key", internal_key), ("x-forwarded-for", f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"))
        auth("SignUp", {"email": email, "password": PASSWORD}, forwarded)
        token = None
        for _ in range(200):
            mails = [open(f).read() for f in glob.glob(f"{mail_directory}/*.eml")]
            found = [re.search(r"Token: (\S+)", m).group(1) for m in mails if email in m]
            if found:
                token = found[0]
                break
            time.sleep(0.05)
        auth("VerifyEmail", {"token": token})
        tokens.append(auth("SignIn", {"email": email, "password": PASSWORD})["accessToken"])
    return tokens
