"""Drives Benchmarks/order-load: sign up users, then loop AddItem → PlaceOrder per worker."""
import argparse, glob, json, re, statistics, threading, time, uuid

import grpc

from figures import record


def caller(port, service):
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")

    def call(method, request, metadata=()):
        stub = channel.unary_unary(
            f"/{service}/{method}", request_serializer=lambda m: json.dumps(m).encode(),
            response_deserializer=json.loads)
        return stub(request, metadata=metadata, timeout=30)
    return call


def main():
    parser = argparse.ArgumentParser()
    for name in ["work", "auth", "catalog", "basket", "order", "seconds", "workers"]:
        parser.add_argument(f"--{name}")
    args = parser.parse_args()
    auth = caller(args.auth, "shop.auth.v1.AuthService")
    catalog = caller(args.catalog, "shop.catalog.v1.CatalogService")
    basket = caller(args.basket, "shop.basket.v1.BasketService")
    order = caller(args.order, "shop.order.v1.OrderService")
    product = catalog("GetProduct", {"id": 3})["product"]
    product["stock"] = 10_000_000
    catalog("UpsertProduct", {"product": product}, (("x-api-key", "bench-admin"),))

    tokens = []
    for index in range(int(args.workers)):
        email = f"bench-{index}-{uuid.uuid4().hex[:6]}@example.com"
        auth("SignUp", {"email": email, "password": "a long bench passphrase"})
        token = None
        for _ in range(100):
            mails = [open(f).read() for f in glob.glob(f"{args.work}/auth/mail/*.eml")]
            found = [re.search(r"Token: (\S+)", m).group(1) for m in mails if email in m]
            if found:
                token = found[0]
                break
            time.sleep(0.05)
        auth("VerifyEmail", {"token": token})
        tokens.append(auth("SignIn", {"email": email, "password": "a long bench passphrase"})["accessToken"])

    request = {
        "shippingAddress": {"name": "Bench", "line1": "1 Loop Road", "city": "Testville", "postalCode": "12345", "country": "US"},
        "payment": {"cardNumber": "4242424242424242", "expMonth": 12, "expYear": 2030, "cvc": "123"},
    }
    latencies, errors = [], []
    deadline = time.monotonic() + float(args.seconds)
    lock = threading.Lock()

    def work(token):
        metadata = (("authorization", f"Bearer {token}"),)
        while time.monotonic() < deadline:
            basket("AddItem", {"productId": 3, "count": 2}, metadata)
            started = time.monotonic()
            try:
                order("PlaceOrder", request, metadata + (("idempotency-key", uuid.uuid4().hex),))
                with lock:
                    latencies.append(time.monotonic() - started)
            except grpc.RpcError as error:
                with lock:
                    errors.append(error.code().name)

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    print(f"PlaceOrder: {len(latencies)} orders in {elapsed:.1f} s = {len(latencies) / elapsed:.1f} orders/s "
          f"({args.workers} workers, each also refilling its basket); errors: {len(errors)} {sorted(set(errors))}")
    if latencies:
        print(f"latency ms: mean {1000 * statistics.mean(latencies):.2f}  p50 {1000 * latencies[len(latencies) // 2]:.2f}  "
              f"p99 {1000 * latencies[int(len(latencies) * 0.99) - 1]:.2f}")
        record(args.work, {"orders_per_second": len(latencies) / elapsed, "error_share": len(errors) / (len(errors) + len(latencies)),
                           "p99_ms": 1000 * latencies[int(len(latencies) * 0.99) - 1]})


if __name__ == "__main__":
    main()
