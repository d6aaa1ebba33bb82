import Contracts
@testable import gateway
import Logging
import RPC
import RPCHTTP2
import Testing

/// What the gateway sends upstream with a forwarded call.
@Suite("ForwardingPolicy: metadata, request id and deadlines")
struct ForwardingPolicyTests {
    func context(_ method: MethodInfo, metadata: Metadata = [:], deadline: ContinuousClock.Instant? = nil) -> ServerContext {
        ServerContext(
            method: method, metadata: metadata, deadline: deadline, requestID: "req-1", peer: "127.0.0.1:5000",
            logger: Logger(label: "test"))
    }

    @Test("the client's metadata goes up unchanged, with the call's request id")
    func metadata() {
        let incoming: Metadata = [
            "authorization": "Bearer abc", "x-api-key": "k", "idempotency-key": "once", "traceparent": "00-1-2-01",
            "x-custom": "yes",
        ]
        let options = ForwardingPolicy().options(for: context(OrderContract.placeOrder.info, metadata: incoming))
        for entry in incoming { #expect(options.metadata[entry.name] == entry.value) }
        #expect(options.requestID?.description == "req-1")
    }

    @Test("a request id the client sent is the one that goes up, once")
    func clientRequestID() {
        let incoming: Metadata = ["x-request-id": "client-7", "x-custom": "yes"]
        let forwarded = ForwardingPolicy().options(for: ServerContext(
            method: CatalogContract.getProduct.info, metadata: incoming, deadline: nil, requestID: "client-7",
            peer: "127.0.0.1:5000", logger: Logger(label: "test")))
        #expect(forwarded.requestID?.description == "client-7")
        #expect(forwarded.metadata == incoming)  // passed on as it is, not copied to change one entry
    }

    @Test("a unary call without a deadline gets the default; a stream gets none")
    func defaultDeadline() {
        let policy = ForwardingPolicy(defaultTimeout: .seconds(10))
        let before = ContinuousClock.now
        let unary: ContinuousClock.Instant? = policy.options(for: context(CatalogContract.getProduct.info)).deadline
        #expect(unary.map { $0 >= before + .seconds(10) && $0 <= .now + .seconds(10) } == true)
        #expect(policy.options(for: context(BasketContract.watchBasket.info)).deadline == nil)
        #expect(policy.options(for: context(CatalogContract.importProducts.info)).deadline == nil)
    }

    @Test("the default deadline counts from the call's arrival, not from when it is forwarded")
    func defaultDeadlineFromArrival() {
        let policy = ForwardingPolicy(defaultTimeout: .seconds(10))
        let arrival = ContinuousClock.now - .seconds(3)
        let late = ServerContext(
            method: CatalogContract.getProduct.info, metadata: [:], deadline: nil, requestID: "req-1", peer: "127.0.0.1:5000",
            logger: Logger(label: "test"), arrival: arrival)
        #expect(policy.options(for: late).deadline == arrival + .seconds(10))
    }

    @Test("the client's own deadline is kept, shorter or longer than the default")
    func clientDeadline() {
        let policy = ForwardingPolicy(defaultTimeout: .seconds(10))
        for deadline in [ContinuousClock.now + .seconds(2), .now + .seconds(60)] {
            #expect(policy.options(for: context(CatalogContract.getProduct.info, deadline: deadline)).deadline == deadline)
            #expect(policy.options(for: context(BasketContract.watchBasket.info, deadline: deadline)).deadline == deadline)
        }
    }

    @Test("to a service counting clients by address, the client's host and the internal key replace what the client sent")
    func vouchingForClients() {
        let incoming: Metadata = [
            "authorization": "Bearer abc", "x-api-key": "guess", "x-forwarded-for": "192.0.2.1, 10.0.0.1", "x-custom": "yes",
        ]
        let policy = ForwardingPolicy().vouchingForClients(with: "internal-key")
        for (peer, host) in [("203.0.113.7:5000", "203.0.113.7"), ("[2001:db8::5]:443", "2001:db8::5")] {
            let options = policy.options(for: ServerContext(
                method: AuthContract.signUp.info, metadata: incoming, deadline: nil, requestID: "req-1", peer: peer,
                logger: Logger(label: "test")))
            #expect(options.metadata.values(of: "x-forwarded-for") == [host])
            #expect(options.metadata.values(of: "x-api-key") == ["internal-key"])
            #expect(options.metadata["authorization"] == "Bearer abc")
            #expect(options.metadata["x-custom"] == "yes")
        }
        // Other upstreams get the client's list as it is, and the call is the gateway span's child.
        let served = context(CatalogContract.getProduct.info, metadata: incoming)
        let forwarded = ForwardingPolicy().options(for: served)
        #expect(forwarded.metadata == incoming)
        #expect(forwarded.trace == served.trace)
    }

    @Test("a composed call carries only identity, request id and trace context")
    func composed() {
        let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let incoming: Metadata = ["authorization": "Bearer abc", "x-api-key": "k", "traceparent": traceparent]
        let served = context(StorefrontContract.getHome.info, metadata: incoming)
        let options = ForwardingPolicy().composedOptions(for: served)
        #expect(options.metadata["authorization"] == "Bearer abc")
        // The trace travels as the gateway's span, whose child each upstream call is — not as
        // the client's header copied.
        #expect(options.metadata["traceparent"] == nil)
        #expect(options.trace == served.trace)
        #expect(served.trace.parentSpanIDText == "00f067aa0ba902b7")
        #expect(options.requestID?.description == "req-1")
        #expect(options.metadata["x-api-key"] == nil)
        #expect(options.deadline != nil)
    }
}
