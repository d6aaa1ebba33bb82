import Contracts
import Foundation
import RPC
import ServiceTestSupport
import Testing

/// Trace context end to end (issue 31): the five processes export their spans as OTLP/HTTP
/// JSON to a collector in the test (``OTLPReceiver``), and one PlaceOrder sent through the
/// gateway with the test's `traceparent` comes back as one tree of spans across them — the
/// gateway's, order-svc's and those of the services order-svc calls — each process's call
/// lines naming the same trace.
@Suite("Span export: one PlaceOrder's spans from every process form one tree")
struct SpanExportLiveTests {
    /// The process serving each service, by the `rpc.service` of a span.
    static let programs = [
        "shop.auth.v1.AuthService": "auth-svc", "shop.catalog.v1.CatalogService": "catalog-svc",
        "shop.basket.v1.BasketService": "basket-svc", "shop.order.v1.OrderService": "order-svc",
    ]
    /// PlaceOrder's span name.
    static let placeOrder = "shop.order.v1.OrderService/PlaceOrder"

    @Test("PlaceOrder with the test's traceparent: gateway, order-svc, basket-svc and catalog-svc spans in one tree under the test's span; every call made has its served span in the right process; every call line names the trace")
    func placeOrderTree() async throws {
        let receiver = try OTLPReceiver()
        let exporting = Dictionary(uniqueKeysWithValues: ServiceName.allCases.map { ($0, ["--otlp-endpoint", receiver.endpoint]) })
        try await withServiceStack(ServiceName.allCases, extraArguments: exporting) { stack in
            let traceID = Self.randomHex(bytes: 16)
            let callerSpanID = Self.randomHex(bytes: 8)
            try await Self.placeOrder(in: stack, traceparent: "00-\(traceID)-\(callerSpanID)-01")

            let spans = try await receiver.spans(within: .seconds(30)) { Self.isComplete(Self.spans($0, of: traceID)) }
            let trace = Self.spans(spans, of: traceID)
            let summary = trace.map(\.description).joined(separator: "\n")
            try Self.checkTree(trace, callerSpanID: callerSpanID, summary: summary)
            try await Self.checkCallLines(in: stack, trace: trace, traceID: traceID)
        }
    }

    // MARK: The journey

    /// Signs a shopper up through the gateway, puts a product in the basket and places the
    /// order, PlaceOrder carrying `traceparent`.
    static func placeOrder(in stack: ServiceStack, traceparent: String) async throws {
        let gateway = try stack.client(.gateway)
        let shopper = try await stack.newShopper(signingUpThrough: .gateway, calling: .gateway)
        let _: Basket = try await gateway.unary(BasketContract.addItem, AddItemRequest(productId: 2, count: 1), options: shopper.options())
        var options = shopper.options(timeout: .seconds(30))
        options.metadata.set(MetadataKey.idempotencyKey, UUID().uuidString)
        options.metadata.set(MetadataKey.traceparent, traceparent)
        let request = PlaceOrderRequest(
            shippingAddress: Address(name: "Ada Lovelace", line1: "12 Analytical Row", city: "London", postalCode: "N1 9GU", country: "GB"),
            payment: CardDetails(cardNumber: "4242424242424242", expMonth: 12, expYear: 2030, cvc: "123"))
        let order: Order = try await gateway.unary(OrderContract.placeOrder, request, options: options)
        #expect(!order.id.isEmpty)
    }

    // MARK: Checks

    /// The spans of `traceID`.
    static func spans(_ spans: [OTLPReceiver.Span], of traceID: String) -> [OTLPReceiver.Span] {
        spans.filter { $0.traceID == traceID }
    }

    /// Whether every span the checks need has come: the gateway's and order-svc's PlaceOrder
    /// served, order-svc's calls made, and a served span under every call made.
    static func isComplete(_ trace: [OTLPReceiver.Span]) -> Bool {
        let served = Set(trace.filter { $0.kind == 2 }.compactMap(\.parentSpanID))
        let made = trace.filter { $0.kind == 3 }
        return trace.contains { $0.service == "gateway" && $0.kind == 2 && $0.name == placeOrder }
            && trace.contains { $0.service == "order-svc" && $0.kind == 2 && $0.name == placeOrder }
            && made.contains { $0.service == "order-svc" } && made.allSatisfy { served.contains($0.spanID) }
    }

    /// One tree: a single root — the gateway's PlaceOrder served, under the test's span —
    /// every other span's parent in the tree; order-svc's PlaceOrder under the gateway's call;
    /// and under every call made, a served span of the method's own process.
    static func checkTree(_ trace: [OTLPReceiver.Span], callerSpanID: String, summary: String) throws {
        let byID = Dictionary(trace.map { ($0.spanID, $0) }) { first, _ in first }
        #expect(byID.count == trace.count, "span ids repeat:\n\(summary)")
        let roots = trace.filter { byID[$0.parentSpanID ?? ""] == nil }
        try #require(roots.count == 1, "not one tree (spans whose parent is not in it: \(roots)):\n\(summary)")
        let root = roots[0]
        #expect(root.parentSpanID == callerSpanID, "the root's parent is not the test's span")
        #expect(root.service == "gateway" && root.kind == 2 && root.name == placeOrder, "the root is \(root)")

        let gatewayCall = try #require(
            trace.first { $0.service == "gateway" && $0.kind == 3 && $0.name == placeOrder && $0.parentSpanID == root.spanID },
            "no PlaceOrder call from the gateway under its served span:\n\(summary)")
        let orderServed = try #require(trace.first { $0.service == "order-svc" && $0.kind == 2 && $0.name == placeOrder })
        #expect(orderServed.parentSpanID == gatewayCall.spanID, "order-svc's PlaceOrder is not under the gateway's call:\n\(summary)")

        let made = trace.filter { $0.kind == 3 }
        let calledByOrder = Set(made.filter { $0.service == "order-svc" }.compactMap { $0.attributes["rpc.service"] })
        #expect(calledByOrder.isSuperset(of: ["shop.basket.v1.BasketService", "shop.catalog.v1.CatalogService"]), "\(summary)")
        for call in made {
            let program = Self.programs[call.attributes["rpc.service"] ?? ""]
            let served = trace.filter { $0.kind == 2 && $0.parentSpanID == call.spanID }
            #expect(served.count == 1 && served.first?.service == program && served.first?.name == call.name,
                    "the call \(call) has \(served) under it, not one served span in \(program ?? "?")")
            #expect(call.parentSpanID.flatMap { byID[$0] }?.service == call.service, "the call \(call) is not under a span of its own process")
        }
    }

    /// Each process's call line of each call it served in the trace names the trace and the span.
    static func checkCallLines(in stack: ServiceStack, trace: [OTLPReceiver.Span], traceID: String) async throws {
        for span in trace where span.kind == 2 {
            let name = try #require(ServiceName(rawValue: span.service))
            let line = await (try stack.service(name)).log.first(within: .seconds(10)) { line in
                line.contains("trace-id=\(traceID)") && line.contains("span-id=\(span.spanID)") ? line : nil
            }
            #expect(line?.contains("method=/\(span.name)") == true, "\(span.service) logged no call line for \(span)")
        }
    }

    /// `bytes` random bytes as lower-case hexadecimal.
    static func randomHex(bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}
