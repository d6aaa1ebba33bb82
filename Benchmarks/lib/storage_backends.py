"""Drives Benchmarks/storage-backends: for one configuration (SQLite, or PostgreSQL with N
replicas per service), sign up users, then measure AddItem and PlaceOrder.

Each worker has its own user and talks to replica `worker % N` of basket- and order-svc (the
services balance their own calls over every replica). Two phases of BENCH_SECONDS each:
  additem     loop AddItem (product 3) -> ClearBasket; AddItem calls are timed
  placeorder  loop AddItem -> PlaceOrder (a new idempotency key); PlaceOrder calls are timed
Prints one line per phase and records <label>_additem_per_second, <label>_placeorder_per_second
and their p99s in WORK/figures.json.
"""
import argparse, statistics, threading, time, uuid

import grpc

from figures import record
from shop_users import PLACE_ORDER_REQUEST, caller, signed_in_users


def ports(text):
    return [int(p) for p in text.split(",")]


def main():
    parser = argparse.ArgumentParser()
    for name in ["work", "label", "mail", "auth", "catalog", "basket", "order", "seconds", "workers"]:
        parser.add_argument(f"--{name}")
    args = parser.parse_args()
    auth = caller(ports(args.auth)[0], "shop.auth.v1.AuthService")
    catalog = caller(ports(args.catalog)[0], "shop.catalog.v1.CatalogService")
    baskets = [caller(p, "shop.basket.v1.BasketService") for p in ports(args.basket)]
    orders = [caller(p, "shop.order.v1.OrderService") for p in ports(args.order)]
    product = catalog("GetProduct", {"id": 3})["product"]
    product["stock"] = 10_000_000
    catalog("UpsertProduct", {"product": product}, (("x-api-key", "bench-admin"),))

    tokens = signed_in_users(auth, args.mail, int(args.workers), label=f"bench-{args.label}")

    request = PLACE_ORDER_REQUEST

    def phase(name, step):
        latencies, errors = [], []
        lock = threading.Lock()
        deadline = time.monotonic() + float(args.seconds)

        def work(index, token):
            metadata = (("authorization", f"Bearer {token}"),)
            basket = baskets[index % len(baskets)]
            order = orders[index % len(orders)]
            basket("ClearBasket", {}, metadata)
            while time.monotonic() < deadline:
                try:
                    took = step(basket, order, metadata)
                    with lock:
                        latencies.append(took)
                except grpc.RpcError as error:
                    with lock:
                        errors.append(error.code().name)

        started = time.monotonic()
        threads = [threading.Thread(target=work, args=(i, t)) for i, t in enumerate(tokens)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        latencies.sort()
        rate = len(latencies) / elapsed
        p99 = 1000 * latencies[max(int(len(latencies) * 0.99) - 1, 0)] if latencies else float("nan")
        print(f"{args.label:14s} {name:10s} {rate:8.1f}/s  mean {1000 * statistics.mean(latencies) if latencies else float('nan'):7.2f} ms"
              f"  p99 {p99:7.2f} ms  errors {len(errors)} {sorted(set(errors))}")
        record(args.work, {f"{args.label}_{name}_per_second": rate, f"{args.label}_{name}_p99_ms": p99})

    def add_item(basket, order, metadata):
        started = time.monotonic()
        basket("AddItem", {"productId": 3, "count": 1}, metadata)
        took = time.monotonic() - started
        basket("ClearBasket", {}, metadata)
        return took

    def place_order(basket, order, metadata):
        basket("AddItem", {"productId": 3, "count": 1}, metadata)
        started = time.monotonic()
        order("PlaceOrder", request, metadata + (("idempotency-key", uuid.uuid4().hex),))
        return time.monotonic() - started

    phase("additem", add_item)
    phase("placeorder", place_order)


if __name__ == "__main__":
    main()
