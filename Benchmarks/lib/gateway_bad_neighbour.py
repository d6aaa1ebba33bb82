"""Drives Benchmarks/gateway-bad-neighbour with grpc.aio: a client trickling forged tokens and
a victim's valid calls, both from 127.0.0.1 through the gateway."""
import argparse, asyncio, time

import grpc

from figures import record
from gateway_watch_flood import channel, reason, signed_in, unary

GOAL = 0.95  # the share of the victim's calls that must succeed


def forged(metadata):
    """The token of `metadata` with its signature changed: well formed, signed by nobody."""
    header, payload, signature = metadata[0][1].removeprefix("Bearer ").split(".")
    signature = ("B" if signature[0] == "A" else "A") + signature[1:]
    return (("authorization", f"Bearer {header}.{payload}.{signature}"),)


async def main():
    parser = argparse.ArgumentParser()
    for name in ["work", "gateway", "calls", "burst", "every"]:
        parser.add_argument(f"--{name}")
    args = parser.parse_args()
    calls, burst, every = int(args.calls), int(args.burst), float(args.every)
    gateway = channel(args.gateway)
    victim = await signed_in(gateway, args.work)
    bad = forged(victim)
    get_basket = unary(gateway, "/shop.basket.v1.BasketService/GetBasket")
    neighbour_answers = {}

    async def neighbour_call():
        try:
            await get_basket({}, metadata=bad, timeout=5)
            neighbour_answers["OK"] = neighbour_answers.get("OK", 0) + 1
        except grpc.aio.AioRpcError as error:
            neighbour_answers[reason(error)] = neighbour_answers.get(reason(error), 0) + 1

    for _ in range(burst):
        await neighbour_call()

    async def trickle():
        while True:
            await neighbour_call()
            await asyncio.sleep(every)

    neighbour = asyncio.create_task(trickle())
    served, refusals = 0, {}
    start = time.monotonic()
    for _ in range(calls):
        try:
            await get_basket({}, metadata=victim, timeout=5)
            served += 1
        except grpc.aio.AioRpcError as error:
            refusals[reason(error)] = refusals.get(reason(error), 0) + 1
        await asyncio.sleep(0.25)
    neighbour.cancel()
    print(f"neighbour: {burst} forged tokens at once, then one every {every:g} s; answers {neighbour_answers}")
    print(f"victim (same address, valid token): {served}/{calls} served in {time.monotonic() - start:.1f} s"
          + (f"; refused {refusals}" if refusals else ""))
    print(f"goal: at least {GOAL:.0%} served -> " + ("met" if served >= GOAL * calls else "MISSED"))
    record(args.work, {"victim_served_share": served / calls})


if __name__ == "__main__":
    asyncio.run(main())
