import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RPC
import Synchronization

/// The `URLSession` delegate of a ``ConnectTransport``: hands each task's response head, body
/// bytes and completion to the ``ConnectCall`` that started it, as they arrive. A session-wide
/// delegate, not a per-task one: FoundationNetworking on Linux never calls a task's own
/// delegate, and `URLSession.bytes(for:)` does not exist there.
///
/// Thread-safe: the calls by task live behind a lock (the session calls from its own queue,
/// calls register from theirs).
final class ConnectSessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// A call and the request it sent (for the interceptors' `received`).
    private struct Registration {
        let call: ConnectCall
        let request: URLRequest
    }

    private let registrations = PortableMutex<[Int: Registration]>([:])
    /// Told every response head.
    private let interceptors: [any RequestInterceptor]

    /// A delegate telling `interceptors` of each response head.
    init(interceptors: [any RequestInterceptor]) {
        self.interceptors = interceptors
    }

    /// Routes `task`'s events to `call` until it completes; before the task is resumed.
    func register(_ task: URLSessionTask, request: URLRequest, for call: ConnectCall) {
        registrations.withLock { $0[task.taskIdentifier] = Registration(call: call, request: request) }
    }

    /// Every call still open (to end them when the transport closes).
    var openCalls: [ConnectCall] { registrations.withLock { $0.values.map(\.call) } }

    /// The call `task` belongs to, while it runs.
    private func registration(of task: URLSessionTask) -> Registration? {
        registrations.withLock { $0[task.taskIdentifier] }
    }

    /// The response head: the interceptors see it, then the call.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let registration = registration(of: dataTask), let response = response as? HTTPURLResponse {
            for interceptor in interceptors { interceptor.received(response, for: registration.request) }
            registration.call.received(response)
        }
        completionHandler(.allow)
    }

    /// Body bytes, as they arrive.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        registration(of: dataTask)?.call.received(data)
    }

    /// The end of the transfer: the call ends with what arrived, or the error.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let registration = registrations.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        registration?.call.completed(with: error)
    }

    /// Refuses every redirect: the 3xx answer ends the call as an error
    /// (``ConnectErrorDecoding/redirectError(httpStatus:location:)``). Followed, a 301 or 302
    /// would turn the POST into a GET without its body, and could carry the `authorization`
    /// header to another host.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Never caches an answer: every call reaches the server.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping (CachedURLResponse?) -> Void
    ) {
        completionHandler(nil)
    }
}
