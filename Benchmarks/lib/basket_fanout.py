"""Drives Benchmarks/basket-fanout with grpc.aio: many WatchBasket streams, timed changes."""
import argparse, asyncio, glob, json, re, statistics, time, uuid

import grpc

from figures import record


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def ser(message):
    return json.dumps(message).encode()


async def main():
    parser = argparse.ArgumentParser()
    for name in ["work", "auth", "basket", "pid", "watchers", "rounds"]:
        parser.add_argument(f"--{name}")
    args = parser.parse_args()
    watchers, rounds = int(args.watchers), int(args.rounds)
    auth = grpc.aio.insecure_channel(f"127.0.0.1:{args.auth}")
    call = lambda ch, svc, m: ch.unary_unary(f"/{svc}/{m}", request_serializer=ser, response_deserializer=json.loads)
    email = f"fanout-{uuid.uuid4().hex[:6]}@example.com"
    await call(auth, "shop.auth.v1.AuthService", "SignUp")({"email": email, "password": "a long bench passphrase"})
    token = None
    while token is None:
        mails = [open(f).read() for f in glob.glob(f"{args.work}/auth/mail/*.eml")]
        found = [re.search(r"Token: (\S+)", m).group(1) for m in mails if email in m]
        token = found[0] if found else None
        await asyncio.sleep(0.05)
    await call(auth, "shop.auth.v1.AuthService", "VerifyEmail")({"token": token})
    session = await call(auth, "shop.auth.v1.AuthService", "SignIn")({"email": email, "password": "a long bench passphrase"})
    metadata = (("authorization", f"Bearer {session['accessToken']}"),)

    before = rss_kib(args.pid)
    # A local subchannel pool gives each channel its own connection (gRPC shares them otherwise).
    channels = [
        grpc.aio.insecure_channel(f"127.0.0.1:{args.basket}", options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range((watchers + 199) // 200)
    ]
    seen = [0] * watchers
    arrivals = {}
    ready = asyncio.Event()
    opened = 0

    async def watch(index):
        nonlocal opened
        stream = channels[index // 200].unary_stream(
            "/shop.basket.v1.BasketService/WatchBasket", request_serializer=ser, response_deserializer=json.loads)
        first = True
        async for basket in stream({}, metadata=metadata):
            seen[index] = basket["version"]
            arrivals.setdefault(basket["version"], []).append(time.monotonic())
            if first:
                first = False
                opened += 1
                if opened == watchers:
                    ready.set()

    tasks = [asyncio.create_task(watch(i)) for i in range(watchers)]
    await asyncio.wait_for(ready.wait(), 120)
    with_watchers = rss_kib(args.pid)
    changer = grpc.aio.insecure_channel(f"127.0.0.1:{args.basket}")
    add = call(changer, "shop.basket.v1.BasketService", "AddItem")
    update = call(changer, "shop.basket.v1.BasketService", "UpdateItemCount")
    basket = await add({"productId": 5, "count": 1}, metadata=metadata)
    item = basket["items"][0]["id"]
    await asyncio.sleep(0.5)
    spans = []
    for round_index in range(rounds):
        answered_at = time.monotonic()
        changed = await update({"itemId": item, "count": 2 + round_index % 8}, metadata=metadata)
        answered_at = time.monotonic()
        version = changed["version"]
        deadline = time.monotonic() + 10
        while min(seen) < version and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        last = max(arrivals.get(version, [answered_at]))
        spans.append(max(0.0, last - answered_at))
        await asyncio.sleep(0.05)
    late = sum(1 for value in seen if value < version)
    for task in tasks:
        task.cancel()
    spans.sort()
    print(f"{watchers} watchers on one basket over {len(channels)} connections; {rounds} changes")
    print(f"change → last watcher: mean {1000 * statistics.mean(spans):.1f} ms, p50 {1000 * spans[len(spans) // 2]:.1f} ms, "
          f"max {1000 * spans[-1]:.1f} ms; watchers behind at the end: {late}")
    print(f"basket-svc RSS: {before / 1024:.1f} MiB before, {with_watchers / 1024:.1f} MiB with the watchers "
          f"(+{(with_watchers - before) / watchers:.1f} KiB per watcher)")
    record(args.work, {"change_to_last_watcher_mean_ms": 1000 * statistics.mean(spans),
                       "change_to_last_watcher_max_ms": 1000 * spans[-1], "watchers_behind_at_end": late,
                       "rss_kib_per_watcher": (with_watchers - before) / watchers})


asyncio.run(main())
