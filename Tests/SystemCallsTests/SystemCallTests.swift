import Synchronization
import SystemCalls
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The syscall wrapper: EINTR retried, errno mapped, EBADF a programmer error.
@Suite("System.call: EINTR retried, errno thrown, EBADF a programmer error")
struct SystemCallTests {
    @Test("a call failing with EINTR is made again until it succeeds")
    func retriesInterruptedCall() throws {
        var attempts = 0
        let result = try System.call("injected") { () -> Int32 in
            attempts += 1
            guard attempts > 2 else {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(attempts == 3)
    }

    @Test("any other failure is thrown once, with the call's name and errno")
    func throwsOtherFailures() {
        var attempts = 0
        #expect(throws: SystemError(function: "injected", errno: ENOENT)) {
            try System.call("injected") { () -> Int32 in
                attempts += 1
                errno = ENOENT
                return -1
            }
        }
        #expect(attempts == 1)
        #expect(SystemError(function: "open", errno: ENOENT).description == "open: No such file or directory (errno 2)")
    }

    @Test("a non-blocking call that would block gives nil, not an error")
    func wouldBlockIsNil() throws {
        let result = try System.nonBlocking("injected") { () -> Int in
            errno = EAGAIN
            return -1
        }
        #expect(result == nil)
    }

    // A death test (the precondition that stops the process on EBADF) is not possible in
    // swift-testing; the mapping that `call` and `close` apply is tested instead.
    @Test(
        "errno maps to a retry, a programmer error or a thrown error",
        arguments: [
            (EINTR, System.Failure.interrupted),
            (EBADF, .programmerError),
            (EFAULT, .programmerError),
            (ENOENT, .error(SystemError(function: "f", errno: ENOENT))),
            (EAGAIN, .error(SystemError(function: "f", errno: EAGAIN))),
        ])
    func errnoMapping(errno: Int32, expected: System.Failure) {
        #expect(System.failure(of: "f", errno: errno) == expected)
    }

    @Test("a read on a pipe interrupted by a signal (SA_RESTART off) is made again, not reported")
    func readInterruptedBySignal() async throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer {
            System.close(readEnd)
            System.close(writeEnd)
        }
        let attempts = Atomic<Int>(0)
        let reader = BlockingThread { () -> Result<UInt8, SystemError> in
            var byte: UInt8 = 0
            return Result { () throws(SystemError) in
                _ = try System.call("read") { () -> Int in
                    attempts.add(1, ordering: .relaxed)
                    return read(readEnd, &byte, 1)
                }
                return byte
            }
        }
        // Interrupt the blocked read until it has been made at least three times.
        try await Interrupter.interrupt(try await reader.threadID()) { attempts.load(ordering: .relaxed) >= 3 }
        #expect(attempts.load(ordering: .relaxed) >= 3)
        var byte: UInt8 = 42
        #expect(write(writeEnd, &byte, 1) == 1)
        #expect(try await reader.result().get() == 42)
    }

    @Test("writeAll delivers every byte in order while signals interrupt and shorten its writes")
    func writeAllUnderSignals() async throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { System.close(readEnd) }
        let bytes = (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let writer = BlockingThread { () -> Result<Void, SystemError> in
            defer { System.close(writeEnd) }
            return bytes.withUnsafeBytes { buffer in Result { () throws(SystemError) in try System.writeAll(writeEnd, buffer) } }
        }
        let reader = BlockingThread { () -> [UInt8] in
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = (try? System.call("read") { chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) } }) ?? 0
                if count == 0 { return received }
                received += chunk.prefix(count)
                usleep(20)  // slower than the writer, so its writes block in the full pipe
            }
        }
        try await Interrupter.interrupt(try await writer.threadID()) { writer.isFinished }
        try await writer.result().get()
        #expect(try await reader.result() == bytes)
    }
}
