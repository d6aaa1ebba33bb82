#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Sees every HTTP request the client sends — calls, streams and the token refreshes it makes
/// on its own — just before it goes out, and every response head as it arrives: to add
/// headers (an app version, a trace id) or to log, as the token guide the seed apps follow
/// does with its `URLSession` wrapper. The `authorization` header is already set.
///
/// Called on the client's own threads; an interceptor must be thread-safe and return quickly.
public protocol RequestInterceptor: Sendable {
    /// Adjusts `request` before it is sent.
    func intercept(_ request: inout URLRequest)

    /// Told the response head of `request` (status and headers) when it arrives.
    func received(_ response: HTTPURLResponse, for request: URLRequest)
}

extension RequestInterceptor {
    /// Nothing to see.
    public func received(_ response: HTTPURLResponse, for request: URLRequest) {}
}
