"""Helpers of Benchmarks/product-path: users for the write driver, a check that ours and the
Go+SQLite reference answer alike, and the summary of the interleaved rounds.

  product_path.py users   WORK AUTH_PORT COUNT INTERNAL_KEY   -> WORK/tokens.txt, one token a line
  product_path.py compare OURS_PORT REFERENCE_PORT REQUEST_DIR -> prints whether the answers match
  product_path.py compare-basket OURS_PORT REFERENCE_PORT TOKENS -> the same for one AddItem
  product_path.py compare-order BASKET_PORT ORDER_PORT REFERENCE_PORT TOKENS -> and one PlaceOrder
  product_path.py stock CATALOG_PORT COUNT STOCK ADMIN_KEY     -> products 1...COUNT get STOCK
  product_path.py summary WORK ROUNDS                          -> prints figures, writes figures.json

The summary reads WORK/<figure>-<server>-<round>.{txt,log} (h2load's output and --log-file)
and WORK/<figure>-<server>-<round>.json (the write driver's), and prints for each figure the
per-round quotient ours/reference (gateway/nghttpx) and their median. The goals it prints are
read from Benchmarks/Thresholds/product-path.json, the one place they are kept.
"""
import contextlib, io, json, pathlib, re, statistics, sys

from figures import record
import summarize

THRESHOLDS = pathlib.Path(__file__).resolve().parent.parent / "Thresholds" / "product-path.json"

# (figure name, what is measured, numerator server, denominator server, field, kind): `rps` is
# h2load's req/s, `mean_us` its mean request time, `calls` the write driver's calls/s.
FIGURES = [
    ("getproduct_16x16_per_reference_rps", "GetProduct req/s @16x16", "ours", "reference", "rps", "h2load"),
    ("listproducts_per_reference_rps", "ListProducts {} (20 of the default sort) req/s", "ours", "reference", "rps", "h2load"),
    ("listproducts_category_per_reference_rps", "ListProducts category, PRICE_ASC req/s", "ours", "reference", "rps", "h2load"),
    ("search_per_reference_rps", "ListProducts {query: jacket} req/s", "ours", "reference", "rps", "h2load"),
    ("getproduct_16x16_uncached_per_reference_rps", "GetProduct req/s @16x16, answer cache off", "uncached", "reference",
     "rps", "h2load"),
    ("listproducts_uncached_per_reference_rps", "ListProducts {} req/s, answer cache off", "uncached", "reference", "rps",
     "h2load"),
    ("search_uncached_per_reference_rps", "ListProducts {query: jacket} req/s, answer cache off", "uncached", "reference",
     "rps", "h2load"),
    ("getproduct_1x1_mean_latency_per_reference", "GetProduct mean latency @1x1", "ours", "reference", "mean_us", "h2load"),
    ("gateway_per_nghttpx_rps", "GetProduct through gateway / nghttpx", "gateway", "nghttpx", "rps", "h2load"),
    ("additem_per_reference_calls", "AddItem+RemoveItem calls/s (write driver)", "ours", "reference", "calls", "writes"),
    ("updateitemcount_per_reference_calls", "UpdateItemCount calls/s (write driver)", "ours", "reference", "calls", "writes"),
    ("placeorder_per_reference_calls", "PlaceOrder calls/s (write driver, an AddItem before each)", "ours", "reference",
     "calls", "writes"),
]


def users(work, auth_port, count, internal_key):
    """Signs up `count` users through auth-svc and writes their access tokens to WORK/tokens.txt."""
    from shop_users import caller, signed_in_users
    auth = caller(int(auth_port), "shop.auth.v1.AuthService")
    tokens = signed_in_users(auth, f"{work}/auth/mail", int(count), label="product-path", internal_key=internal_key)
    (pathlib.Path(work) / "tokens.txt").write_text("\n".join(tokens) + "\n")
    print(f"{len(tokens)} users signed in")


def compare(ours_port, reference_port, request_dir):
    """Sends each catalog request of the run (REQUEST_DIR/*.json: {"method", "request"}) to
    both and compares the answers' bytes, page tokens aside (each side signs its own)."""
    import grpc
    differ = 0
    for path in sorted(pathlib.Path(request_dir).glob("*.json")):
        spec = json.loads(path.read_text())
        answers = []
        for port in (ours_port, reference_port):
            channel = grpc.insecure_channel(f"127.0.0.1:{port}")
            call = channel.unary_unary(f"/shop.catalog.v1.CatalogService/{spec['method']}",
                                       request_serializer=lambda m: json.dumps(m).encode(), response_deserializer=bytes)
            answer = call(spec["request"], timeout=10)
            answers.append(re.sub(rb'"nextPageToken":"[^"]*"', b'"nextPageToken":"<token>"', answer))
            channel.close()
        same = answers[0] == answers[1]
        differ += not same
        print(f"  {path.stem:10s} {spec['method']} {json.dumps(spec['request'])}: {len(answers[0])} bytes ours, "
              f"{len(answers[1])} reference: {'the same bytes (page token aside)' if same else 'DIFFERENT'}")
        if not same:
            print(f"    ours:      {answers[0][:300]!r}\n    reference: {answers[1][:300]!r}")
    return 1 if differ else 0


def compare_basket(ours_port, reference_port, tokens_file):
    """With the first user's token: clears the basket and adds product 3 twice over on each
    server, and compares the AddItem answers' bytes, the line id and time aside."""
    import grpc
    token = pathlib.Path(tokens_file).read_text().split()[0]
    metadata = (("authorization", f"Bearer {token}"),)
    answers = []
    for port in (ours_port, reference_port):
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        call = lambda method, request: channel.unary_unary(
            f"/shop.basket.v1.BasketService/{method}", request_serializer=lambda m: json.dumps(m).encode(),
            response_deserializer=bytes)(request, metadata=metadata, timeout=10)
        call("ClearBasket", {})
        answer = call("AddItem", {"productId": 3, "count": 2})
        call("ClearBasket", {})
        channel.close()
        answer = re.sub(rb'"id":"[0-9a-f-]{36}"', b'"id":"<uuid>"', answer)
        answers.append(re.sub(rb'"updatedAt":"[^"]*"', b'"updatedAt":"<time>"', answer))
    same = re.sub(rb'"version":\d+', b"", answers[0]) == re.sub(rb'"version":\d+', b"", answers[1])
    print(f"  AddItem {{productId: 3, count: 2}}: {len(answers[0])} bytes ours, {len(answers[1])} reference: "
          + ("the same bytes (line id, time and version aside)" if same else "DIFFERENT"))
    if not same:
        print(f"    ours:      {answers[0][:400]!r}\n    reference: {answers[1][:400]!r}")
    return 0 if same else 1


def unary(port, service):
    """A function calling `service`'s unary methods on 127.0.0.1:`port`: JSON requests, the
    answer's bytes."""
    import grpc
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    return lambda method, request, metadata=(): channel.unary_unary(
        f"/{service}/{method}", request_serializer=lambda m: json.dumps(m).encode(),
        response_deserializer=bytes)(request, metadata=metadata, timeout=10)


def stock(catalog_port, count, amount, admin_key):
    """Gives products 1...COUNT `amount` in stock through the admin API (UpsertProduct)."""
    catalog = unary(catalog_port, "shop.catalog.v1.CatalogService")
    for product_id in range(1, int(count) + 1):
        product = json.loads(catalog("GetProduct", {"id": product_id}))["product"]
        product["stock"] = int(amount)
        catalog("UpsertProduct", {"product": product}, (("x-api-key", admin_key),))
    print(f"products 1-{count}: {amount} in stock")


def compare_order(basket_port, order_port, reference_port, tokens_file):
    """With the first user's token: clears the basket, adds product 3 twice over and places
    the order on each side, and compares the PlaceOrder answers' bytes, order id and times aside."""
    from shop_users import PLACE_ORDER_REQUEST
    token = pathlib.Path(tokens_file).read_text().split()[0]
    metadata = (("authorization", f"Bearer {token}"),)
    answers = []
    for basket_at, order_at in ((basket_port, order_port), (reference_port, reference_port)):
        basket = unary(basket_at, "shop.basket.v1.BasketService")
        basket("ClearBasket", {}, metadata)
        basket("AddItem", {"productId": 3, "count": 2}, metadata)
        answer = unary(order_at, "shop.order.v1.OrderService")(
            "PlaceOrder", PLACE_ORDER_REQUEST, metadata + (("idempotency-key", f"compare-{basket_at}"),))
        basket("ClearBasket", {}, metadata)
        answer = re.sub(rb'"id":"[0-9a-f-]{36}"', b'"id":"<uuid>"', answer)
        answers.append(re.sub(rb'"(createdAt|updatedAt)":"[^"]*"', rb'"\1":"<time>"', answer))
    same = answers[0] == answers[1]
    print(f"  PlaceOrder of {{productId: 3, count: 2}}: {len(answers[0])} bytes ours, {len(answers[1])} reference: "
          + ("the same bytes (order id and times aside)" if same else "DIFFERENT"))
    if not same:
        print(f"    ours:      {answers[0][:500]!r}\n    reference: {answers[1][:500]!r}")
    return 0 if same else 1


def measurement(work, figure, server, round_, kind):
    """One run's figures: h2load's parsed row or the write driver's object; None if missing."""
    base = pathlib.Path(work) / f"{figure}-{server}-{round_}"
    if kind == "writes":
        text = base.with_suffix(".json").read_text() if base.with_suffix(".json").exists() else ""
        if not text.strip():
            return None  # the driver failed before measuring (its .err file says why)
        result = json.loads(text)
        result["ok"] = result.get("calls", 0) > 0
        return result
    if not base.with_suffix(".txt").exists():
        return None
    with contextlib.redirect_stdout(io.StringIO()):
        return summarize.parse(server, figure, str(base.with_suffix(".txt")), str(base.with_suffix(".log")))


def value(row, field):
    """The compared number of a run: calls/s of the write driver, else h2load's `field`."""
    return row.get("callsPerSecond") if field == "calls" else row.get(field)


def describe(row, kind):
    """One run's figures on one line."""
    if kind == "writes":
        errors = f", {row['errors']} errors {row['errorCodes']}" if row.get("errors") else ""
        return f"{row['callsPerSecond']:8.0f}/s p50 {row['p50Ms']:6.2f} ms p99 {row['p99Ms']:6.2f} ms{errors}"
    problems = "; ".join(row.get("problems", []))
    return (f"{row.get('rps', 0):8.0f}/s mean {row.get('mean_us') or 0:7.0f} us p99 {row.get('p99_us') or 0:7.0f} us"
            + (f" INVALID: {problems}" if problems else ""))


def summary(work, rounds):
    """Prints each figure's rounds and the median of its per-round quotients, with its goal;
    records the medians (and the write errors) in WORK/figures.json."""
    goals = {g["name"]: g for g in json.loads(THRESHOLDS.read_text())["figures"]} if THRESHOLDS.exists() else {}
    figures, write_errors = {}, 0
    for name, label, top, bottom, field, kind in FIGURES:
        quotients = []
        lines = []
        for round_ in range(1, int(rounds) + 1):
            a, b = measurement(work, name, top, round_, kind), measurement(work, name, bottom, round_, kind)
            if a is None or b is None:
                continue
            if kind == "writes":
                write_errors += a.get("errors", 0) + b.get("errors", 0)
            line = f"    round {round_}: {top} {describe(a, kind)} | {bottom} {describe(b, kind)}"
            if a.get("ok") and b.get("ok") and value(a, field) and value(b, field):
                quotients.append(value(a, field) / value(b, field))
                line += f" | {quotients[-1]:.2f}"
            lines.append(line)
        if not lines:
            continue
        print(f"{label}:")
        print("\n".join(lines))
        if not quotients:
            print("  no valid round: no figure")
            continue
        figures[name] = statistics.median(quotients)
        goal = goals.get(name)
        verdict = ""
        if goal:
            met = figures[name] >= goal["threshold"] if goal["compare"] == ">=" else figures[name] <= goal["threshold"]
            verdict = f"   goal {goal['compare']} {goal['threshold']:g}: {'MET' if met else 'NOT MET'}"
        print(f"  {name} = {figures[name]:.3f} (median of {len(quotients)}; min {min(quotients):.2f}, "
              f"max {max(quotients):.2f}){verdict}")
    if (pathlib.Path(work) / "tokens.txt").exists():  # the writes were measured
        figures["write_errors"] = write_errors
        print(f"write errors (both servers, every round): {write_errors}")
    record(work, figures)


def main(argv):
    if len(argv) == 6 and argv[1] == "users":
        users(*argv[2:])
    elif len(argv) == 5 and argv[1] == "compare":
        return compare(*argv[2:])
    elif len(argv) == 5 and argv[1] == "compare-basket":
        return compare_basket(*argv[2:])
    elif len(argv) == 6 and argv[1] == "compare-order":
        return compare_order(*argv[2:])
    elif len(argv) == 6 and argv[1] == "stock":
        stock(*argv[2:])
    elif len(argv) == 4 and argv[1] == "summary":
        summary(*argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
