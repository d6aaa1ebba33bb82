"""Drives Benchmarks/order-load: sign up users, then loop AddItem → PlaceOrder per worker."""
import argparse, statistics, threading, time, uuid

import grpc

from figures import record
from shop_users import PLACE_ORDER_REQUEST, caller, signed_in_users


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

    tokens = signed_in_users(auth, f"{args.work}/auth/mail", int(args.workers))

    request = PLACE_ORDER_REQUEST
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
