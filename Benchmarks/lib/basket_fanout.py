"""Drives Benchmarks/basket-fanout: WATCHERS WatchBasket streams over USERS users, timed changes
to random users' baskets, basket-svc's memory per watcher.

Watcher `i` watches user `i % USERS`, on connection `i // STREAMS_PER_CONNECTION`; the watchers
are held by Benchmarks/fanout-watchers (Go, with --go-watchers) or by this process (grpc.aio).
Each round changes one random user's basket from a connection of its own and times the change's
answer → the last of that user's watchers receiving the new version. The client's CPU over the
rounds (this process and the Go watchers) is printed beside the figures: a client near a full
core is measuring itself, not basket-svc.
"""
import argparse, asyncio, glob, json, os, random, re, resource, statistics, time, uuid

import grpc

from figures import record
from shop_users import PASSWORD

# Streams per connection: below the 256 basket-svc advertises (Shared/RPCHTTP2/README.md).
STREAMS_PER_CONNECTION = 200
# auth-svc's SignUp burst per client address (AuthRateLimits.signUp): one forwarded address per
# this many users.
SIGN_UPS_PER_ADDRESS = 10
# Password hashes in flight at once: below auth-svc's per-address hash queue (16).
SIGN_UP_CONCURRENCY = 8
AUTH = "shop.auth.v1.AuthService"
BASKET = "shop.basket.v1.BasketService"


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def ser(message):
    return json.dumps(message).encode()


def unary(channel, service, method):
    return channel.unary_unary(f"/{service}/{method}", request_serializer=ser, response_deserializer=json.loads)


def process_cpu(pid):
    """Seconds of CPU process `pid` has used (user and system)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def client_cpu():
    """Seconds of CPU this process (the whole client) has used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def signed_in_users(auth_port, mail_directory, count, internal_key):
    """`count` verified, signed-in users' access tokens. SignUp is limited per client address,
    so each group of SIGN_UPS_PER_ADDRESS users comes from its own forwarded address (auth-svc
    trusts `x-forwarded-for` from a caller holding the internal key, as it does the gateway)."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{auth_port}")
    sign_up, verify, sign_in = (unary(channel, AUTH, m) for m in ("SignUp", "VerifyEmail", "SignIn"))
    label = uuid.uuid4().hex[:6]
    emails = [f"fanout-{label}-{i}@example.com" for i in range(count)]
    gate = asyncio.Semaphore(SIGN_UP_CONCURRENCY)

    def from_address(index):
        group = index // SIGN_UPS_PER_ADDRESS
        return (("x-api-key", internal_key), ("x-forwarded-for", f"10.{group // 65536 % 256}.{group // 256 % 256}.{group % 256}"))

    async def step(call, request, index):
        async with gate:
            return await call(request, metadata=from_address(index), timeout=60)

    await asyncio.gather(*(step(sign_up, {"email": e, "password": PASSWORD}, i) for i, e in enumerate(emails)))
    tokens, deadline = {}, time.monotonic() + 60
    while len(tokens) < count and time.monotonic() < deadline:
        for path in glob.glob(f"{mail_directory}/*.eml"):
            text = open(path).read()
            for email in emails:
                if email in text and email not in tokens:
                    tokens[email] = re.search(r"Token: (\S+)", text).group(1)
        await asyncio.sleep(0.1)
    await asyncio.gather(*(step(verify, {"token": tokens[e]}, i) for i, e in enumerate(emails)))
    sessions = await asyncio.gather(*(step(sign_in, {"email": e, "password": PASSWORD}, i) for i, e in enumerate(emails)))
    await channel.close()
    return [s["accessToken"] for s in sessions]


class PythonWatchers:
    """WATCHERS WatchBasket streams in this process (grpc.aio), and when each version of each
    user reached each of its watchers (time.time())."""

    def __init__(self, port, tokens, count):
        self.tokens, self.count = tokens, count
        # A local subchannel pool gives each channel its own connection (gRPC shares them otherwise).
        self.channels = [
            grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])
            for _ in range((count + STREAMS_PER_CONNECTION - 1) // STREAMS_PER_CONNECTION)]
        self.seen = [0] * count
        self.arrivals = {}  # (user, version) -> times
        self.opened = 0
        self.ready = asyncio.Event()
        self.tasks = [asyncio.create_task(self.watch(i)) for i in range(count)]

    def watchers_of(self, user):
        return range(user, self.count, len(self.tokens))

    async def watch(self, index):
        user = index % len(self.tokens)
        stream = self.channels[index // STREAMS_PER_CONNECTION].unary_stream(
            f"/{BASKET}/WatchBasket", request_serializer=ser, response_deserializer=json.loads)
        first = True
        async for basket in stream({}, metadata=(("authorization", f"Bearer {self.tokens[user]}"),)):
            self.seen[index] = basket["version"]
            self.arrivals.setdefault((user, basket["version"]), []).append(time.time())
            if first:
                first = False
                self.opened += 1
                if self.opened == self.count:
                    self.ready.set()

    def behind(self, user, version):
        return sum(1 for i in self.watchers_of(user) if self.seen[i] < version)

    def last_arrival(self, user, version):
        """When the last watcher of `user` got `version`; None while one has not."""
        return None if self.behind(user, version) else max(self.arrivals.get((user, version), [0.0]))

    def cpu(self):
        return 0.0  # counted in this process's own

    def close(self):
        for task in self.tasks:
            task.cancel()


class GoWatchers:
    """WATCHERS WatchBasket streams held by Benchmarks/fanout-watchers (Go), which reports when
    the last watcher of a user got each version (`arrived U V T`, T in time.time_ns())."""

    def __init__(self, binary, port, tokens, count, work):
        self.tokens, self.count = tokens, count
        self.arrived = {}  # (user, version) -> time.time() seconds
        self.ready = asyncio.Event()
        self.tokens_file = f"{work}/tokens.txt"
        with open(self.tokens_file, "w") as file:
            file.write("\n".join(tokens) + "\n")
        self.start = (binary, "-addr", f"127.0.0.1:{port}", "-tokens", self.tokens_file,
                      "-watchers", str(count), "-per-conn", str(STREAMS_PER_CONNECTION))
        self.process = None
        self.reader = asyncio.create_task(self.read())

    async def read(self):
        self.process = await asyncio.create_subprocess_exec(*self.start, stdout=asyncio.subprocess.PIPE)
        async for line in self.process.stdout:
            words = line.split()
            if words == [b"ready"]:
                self.ready.set()
            elif words[:1] == [b"arrived"]:
                self.arrived[(int(words[1]), int(words[2]))] = int(words[3]) / 1e9

    def watchers_of(self, user):
        return range(user, self.count, len(self.tokens))

    def behind(self, user, version):
        return 0 if (user, version) in self.arrived else len(self.watchers_of(user))

    def last_arrival(self, user, version):
        return self.arrived.get((user, version))

    def cpu(self):
        return process_cpu(self.process.pid)

    def close(self):
        self.process.kill()
        self.reader.cancel()


async def changes(port, watchers, tokens, rounds):
    """ROUNDS changes to random users' baskets, one at a time: each change's answer → the last of
    its user's watchers holding the new version, and its request's start → the same, in seconds;
    and how many watchers of a changed user were behind when the changes stopped."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    add, update = unary(channel, BASKET, "AddItem"), unary(channel, BASKET, "UpdateItemCount")
    items, last_version, spans, from_sent = {}, {}, [], []
    chooser = random.Random(32)
    for _ in range(rounds):
        user = chooser.randrange(len(tokens))
        metadata = (("authorization", f"Bearer {tokens[user]}"),)
        sent_at = time.time()
        if user in items:
            # Another count each time (1...10, never the one it has): an unchanged basket keeps its version.
            item, count = items[user]
            changed = await update({"itemId": item, "count": count % 10 + 1}, metadata=metadata, timeout=30)
        else:
            changed = await add({"productId": 5, "count": 1}, metadata=metadata, timeout=30)
        line = changed["items"][0]
        items[user] = (line["id"], line["count"])
        answered_at = time.time()
        version = changed["version"]
        last_version[user] = version
        deadline = answered_at + 10
        while (last := watchers.last_arrival(user, version)) is None and time.time() < deadline:
            await asyncio.sleep(0.0005)
        last = last or deadline
        spans.append(max(0.0, last - answered_at))
        from_sent.append(last - sent_at)
        await asyncio.sleep(0.02)
    await channel.close()
    return spans, from_sent, sum(watchers.behind(user, version) for user, version in last_version.items())


def quantile(ordered, q):
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def main():
    parser = argparse.ArgumentParser()
    for name in ["work", "auth", "basket", "pid", "watchers", "users", "rounds", "internal-key", "go-watchers"]:
        parser.add_argument(f"--{name}")
    args = parser.parse_args()
    count, users, rounds = int(args.watchers), int(args.users), int(args.rounds)
    if not 1 <= users <= count:
        raise SystemExit("USERS must be 1...WATCHERS")
    started = time.monotonic()
    tokens = await signed_in_users(args.auth, f"{args.work}/auth/mail", users, args.internal_key)
    print(f"{users} users signed in in {time.monotonic() - started:.1f} s", flush=True)

    before = rss_kib(args.pid)
    started = time.monotonic()
    if args.go_watchers:
        watchers = GoWatchers(args.go_watchers, args.basket, tokens, count, args.work)
    else:
        watchers = PythonWatchers(args.basket, tokens, count)
    await asyncio.wait_for(watchers.ready.wait(), 300)
    print(f"{count} watchers open in {time.monotonic() - started:.1f} s", flush=True)
    await asyncio.sleep(1)
    with_watchers = rss_kib(args.pid)

    wall, cpu, server_cpu = time.monotonic(), client_cpu() + watchers.cpu(), process_cpu(args.pid)
    spans, from_sent, late = await changes(args.basket, watchers, tokens, rounds)
    client_share = (client_cpu() + watchers.cpu() - cpu) / (time.monotonic() - wall)
    server_per_change = (process_cpu(args.pid) - server_cpu) / rounds
    watchers.close()
    spans.sort()
    mean, p50, p99, worst = (1000 * v for v in (statistics.mean(spans), quantile(spans, 0.5), quantile(spans, 0.99), spans[-1]))
    per_watcher = (with_watchers - before) / count
    connections = (count + STREAMS_PER_CONNECTION - 1) // STREAMS_PER_CONNECTION
    print(f"{count} watchers ({'Go' if args.go_watchers else 'Python'}) over {users} users ({count // users} each), "
          f"{connections} connections; {rounds} changes")
    print(f"change → last of its user's watchers: mean {mean:.1f} ms, p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
          f"max {worst:.1f} ms; watchers behind at the end: {late}")
    print(f"change sent → last of its user's watchers: mean {1000 * statistics.mean(from_sent):.1f} ms, "
          f"max {1000 * max(from_sent):.1f} ms (the change's own call included)")
    print(f"CPU over the changes: client {100 * client_share:.0f} % of a core (a client near 100 % times itself, not basket-svc); "
          f"basket-svc {1000 * server_per_change:.1f} ms per change")
    print(f"basket-svc RSS: {before / 1024:.1f} MiB before, {with_watchers / 1024:.1f} MiB with the watchers "
          f"(+{per_watcher:.1f} KiB per watcher)")
    record(args.work, {"change_to_last_watcher_mean_ms": mean, "change_to_last_watcher_p50_ms": p50,
                       "change_to_last_watcher_p99_ms": p99, "change_to_last_watcher_max_ms": worst,
                       "watchers_behind_at_end": late, "rss_kib_per_watcher": per_watcher,
                       "change_sent_to_last_watcher_mean_ms": 1000 * statistics.mean(from_sent),
                       "client_cpu_share": client_share, "server_cpu_ms_per_change": 1000 * server_per_change, "watchers": count, "users": users})


asyncio.run(main())
