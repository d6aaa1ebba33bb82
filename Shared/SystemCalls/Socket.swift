#if canImport(Glibc)
package import Glibc
#endif

/// One resolved socket address. A plain C value, safe to hand between threads.
package struct ResolvedAddress: Sendable {
    /// The address family, `AF_INET` or `AF_INET6`.
    package let family: Int32
    /// The address itself.
    package let storage: sockaddr_storage
    /// The bytes of ``storage`` in use.
    package let length: socklen_t
}

/// Socket set-up calls; every one goes through ``System``.
package enum Socket {
    /// Resolves an address. With `numericOnly` only literal addresses resolve (no I/O, safe on
    /// an event loop); otherwise names may read /etc/hosts or ask DNS, which blocks.
    package static func resolve(
        host: String, port: Int, passive: Bool, numericOnly: Bool = false
    ) throws(SystemError) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = (passive ? AI_PASSIVE : 0) | (numericOnly ? AI_NUMERICHOST : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SystemError(function: "getaddrinfo(\(host))", errno: status == EAI_SYSTEM ? Glibc.errno : EHOSTUNREACH)
        }
        defer { freeaddrinfo(list) }
        var results: [ResolvedAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: entry.pointee.ai_addr, count: Int(entry.pointee.ai_addrlen)))
            }
            results.append(ResolvedAddress(family: entry.pointee.ai_family, storage: storage, length: entry.pointee.ai_addrlen))
            cursor = entry.pointee.ai_next
        }
        return results
    }

    /// Opens a non-blocking listening socket and returns it with the port actually bound.
    package static func listen(host: String, port: Int, backlog: Int32 = 1024) throws(SystemError) -> (fd: Int32, port: Int) {
        guard let target = try resolve(host: host, port: port, passive: true).first else {
            throw SystemError(function: "getaddrinfo", errno: EADDRNOTAVAIL)
        }
        let fd = try System.call("socket") {
            socket(target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            var storage = target.storage
            _ = try withUnsafePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    try System.call("bind") { bind(fd, address, target.length) }
                }
            }
            _ = try System.call("listen") { Glibc.listen(fd, backlog) }
            return (fd, try localPort(fd))
        } catch {
            System.close(fd)
            throw error
        }
    }

    /// Accepts one connection; `nil` when none is waiting.
    package static func accept(_ listener: Int32) throws(SystemError) -> (fd: Int32, peer: String)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                try System.nonBlocking("accept") { Glibc.accept(listener, address, &length) }
            }
        }
        guard let fd else { return nil }
        // Glibc's module hides accept4, so the flags are set in two more calls.
        do {
            let flags = try System.call("fcntl(F_GETFL)") { fcntl(fd, F_GETFL, 0) }
            _ = try System.call("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
            _ = try System.call("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
        } catch {
            System.close(fd)
            throw error
        }
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return (fd, describe(storage))
    }

    /// Starts a non-blocking connect; the caller waits for writability and checks ``pendingError(_:)``.
    package static func startConnect(to address: ResolvedAddress) throws(SystemError) -> Int32 {
        let (family, length) = (address.family, address.length)
        let fd = try System.call("socket") {
            socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        var storage = address.storage
        do {
            _ = try withUnsafePointer(to: &storage) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    try System.call("connect") { connect(fd, address, length) }
                }
            }
        } catch where error.errno == EINPROGRESS || error.errno == EALREADY {
            // The usual outcome on a non-blocking socket: completion is reported as writability.
        } catch {
            System.close(fd)
            throw error
        }
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return fd
    }

    /// The error of a finished non-blocking connect, or `nil` on success.
    package static func pendingError(_ fd: Int32) -> SystemError? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        do {
            _ = try System.call("getsockopt") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) }
        } catch {
            return error
        }
        return value == 0 ? nil : SystemError(function: "connect", errno: value)
    }

    /// Reads into a buffer; 0 means the peer closed, `nil` means it would block.
    @inlinable
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        try System.nonBlocking("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Reads into a buffer without taking the bytes from the socket; 0 means the peer closed,
    /// `nil` means nothing is waiting.
    @inlinable
    package static func peek(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        try System.nonBlocking("recv") { recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_PEEK)) }
    }

    /// Writes from a buffer; `nil` means it would block.
    @inlinable
    package static func write(_ fd: Int32, from buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        try System.nonBlocking("send") { send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sets an integer socket option.
    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(SystemError) {
        var value = value
        _ = try System.call("setsockopt") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// The port a socket is bound to.
    private static func localPort(_ fd: Int32) throws(SystemError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                try System.call("getsockname") { getsockname(fd, address, &length) }
            }
        }
        return port(of: storage)
    }

    /// The port of an address.
    private static func port(of storage: sockaddr_storage) -> Int {
        let family = Int32(storage.ss_family)
        var storage = storage
        return withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// `host:port` text of an address, for logs.
    package static func describe(_ storage: sockaddr_storage) -> String {
        var storage = storage
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(storage.ss_family)
        let capacity = socklen_t(text.count)
        let port = port(of: storage)
        withUnsafeMutablePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    _ = inet_ntop(AF_INET6, &$0.pointee.sin6_addr, &text, capacity)
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    _ = inet_ntop(AF_INET, &$0.pointee.sin_addr, &text, capacity)
                }
            }
        }
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension ResolvedAddress {
    /// The address as numeric text, `10.0.0.5` or `fd00::5` (`getnameinfo` with
    /// `NI_NUMERICHOST`: no lookup); nil when it cannot be written.
    package var numericHost: String? {
        var storage = self.storage
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        // C interop, not a speed choice (no benchmark): getnameinfo reads a sockaddr.
        let status = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard status == 0 else { return nil }
        return String(decoding: host.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
