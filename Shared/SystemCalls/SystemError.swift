#if canImport(Glibc)
internal import Glibc
#endif

/// A failed system call: the call's name and `errno`.
package struct SystemError: Error, Equatable, CustomStringConvertible {
    /// The function that failed, e.g. `connect`.
    package let function: String
    /// The `errno` it set.
    package let errno: Int32

    /// Creates the error of `function` failing with `errno`.
    package init(function: String, errno: Int32) {
        self.function = function
        self.errno = errno
    }

    /// The C library's sentence for ``errno``, e.g. "No such file or directory".
    package var message: String { String(cString: strerror(errno)) }

    /// `function: message (errno N)`, for logs and error details.
    package var description: String { "\(function): \(message) (errno \(errno))" }
}
