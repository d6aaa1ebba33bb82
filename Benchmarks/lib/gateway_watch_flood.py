"""Drives Benchmarks/gateway-watch-flood with grpc.aio: users holding many WatchBasket streams
through the gateway, and another user's GetBasket and GetProductPage timed beside them."""
import argparse, asyncio, glob, json, re, time, uuid

import grpc

from figures import record

PASSWORD = "a long bench passphrase"
GOAL = 1.0  # seconds: every GetBasket of the victim must answer within it


def ser(message):
    return json.dumps(message).encode()


def channel(port):
    # A local subchannel pool gives each channel its own connection (gRPC shares them otherwise).
    return grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])


def unary(ch, path):
    return ch.unary_unary(path, request_serializer=ser, response_deserializer=json.loads)


def reason(error):
    for key, value in error.trailing_metadata() or ():
        if key == "shop-error-reason":
            return value
    return error.code().name


async def signed_in(gateway, work):
    """A fresh verified user's authorization metadata, signed up and in through the gateway."""
    email = f"flood-{uuid.uuid4().hex[:8]}@example.com"
    await unary(gateway, "/shop.auth.v1.AuthService/SignUp")({"email": email, "password": PASSWORD}, timeout=30)
    token = None
    while token is None:
        mails = [open(f).read() for f in glob.glob(f"{work}/auth/mail/*.eml")]
        found = [re.search(r"Token: (\S+)", m).group(1) for m in mails if email in m]
        token = found[0] if found else None
        await asyncio.sleep(0.05)
    await unary(gateway, "/shop.auth.v1.AuthService/VerifyEmail")({"token": token}, timeout=30)
    session = await unary(gateway, "/shop.auth.v1.AuthService/SignIn")({"email": email, "password": PASSWORD}, timeout=30)
    return (("authorization", f"Bearer {session['accessToken']}"),)


async def timed(call, request, metadata, count):
    """`count` calls one after another: each one's seconds, or None when it failed."""
    spans, failures = [], {}
    for _ in range(count):
        start = time.monotonic()
        try:
            await call(request, metadata=metadata, timeout=12)
            spans.append(time.monotonic() - start)
        except grpc.aio.AioRpcError as error:
            spans.append(None)
            failures[reason(error)] = failures.get(reason(error), 0) + 1
        await asyncio.sleep(0.02)  # 50 calls a second at most: the gateway's rate limit per user
    return spans, failures


def summary(name, spans, failures):
    done = sorted(s for s in spans if s is not None)
    within = sum(1 for s in done if s <= GOAL)
    if not done:
        return f"{name}: no call answered; failures {failures}"
    p99 = done[min(len(done) - 1, int(len(done) * 0.99))]
    return (f"{name}: {len(done)}/{len(spans)} answered, p50 {1000 * done[len(done) // 2]:.1f} ms, "
            f"p99 {1000 * p99:.1f} ms, max {1000 * done[-1]:.1f} ms; within {GOAL:.0f} s: {within}/{len(spans)}"
            + (f"; failures {failures}" if failures else ""))


async def measure(gateway, victim, calls, label):
    get_basket = unary(gateway, "/shop.basket.v1.BasketService/GetBasket")
    page = unary(gateway, "/shop.gateway.v1.StorefrontService/GetProductPage")
    basket_spans, basket_failures = await timed(get_basket, {}, victim, calls)
    page_spans, page_failures = await timed(page, {"productId": 5}, victim, calls)
    print(summary(f"{label} GetBasket     ", basket_spans, basket_failures))
    print(summary(f"{label} GetProductPage", page_spans, page_failures))
    return basket_spans


async def main():
    parser = argparse.ArgumentParser()
    for name in ["work", "gateway", "attackers", "watches", "calls"]:
        parser.add_argument(f"--{name}")
    args = parser.parse_args()
    attackers, watches, calls = int(args.attackers), int(args.watches), int(args.calls)
    gateway = channel(args.gateway)
    users = [await signed_in(gateway, args.work) for _ in range(attackers + 1)]
    victim, attackers_metadata = users[0], users[1:]

    await measure(gateway, victim, calls, "alone         ")

    total = attackers * watches
    flood = [channel(args.gateway) for _ in range((total + 199) // 200)]
    outcome = {"open": 0, "pending": total}
    refused = {}
    settled = asyncio.Event()

    def settle():
        outcome["pending"] -= 1
        if outcome["pending"] == 0:
            settled.set()

    async def watch(index, metadata):
        stream = flood[index // 200].unary_stream(
            "/shop.basket.v1.BasketService/WatchBasket", request_serializer=ser, response_deserializer=json.loads)
        first = True
        try:
            async for _ in stream({}, metadata=metadata):
                if first:
                    first = False
                    outcome["open"] += 1
                    settle()
        except grpc.aio.AioRpcError as error:
            if first:
                refused[reason(error)] = refused.get(reason(error), 0) + 1
                settle()

    tasks = [asyncio.create_task(watch(i, attackers_metadata[i // watches])) for i in range(total)]
    try:
        await asyncio.wait_for(settled.wait(), 15)
    except asyncio.TimeoutError:
        pass  # watches past the streams of the gateway's connections wait for one to end
    print(f"{attackers} users x {watches} WatchBasket through the gateway: {outcome['open']} open, "
          f"refused {refused or 'none'}, still waiting {outcome['pending']}")
    spans = await measure(gateway, victim, calls, "beside watches")
    slow = sum(1 for s in spans if s is None or s > GOAL)
    record(args.work, {"getbasket_beside_watches_within_goal_share": (len(spans) - slow) / max(len(spans), 1)})
    print(f"goal: every GetBasket beside the watches within {GOAL:.0f} s -> "
          + ("met" if slow == 0 else f"MISSED ({slow} of {len(spans)} over or failed)"))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


if __name__ == "__main__":
    asyncio.run(main())
