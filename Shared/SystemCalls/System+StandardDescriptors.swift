#if canImport(Glibc)
internal import Glibc
#endif

extension System {
    /// Opens /dev/null onto each of `descriptors` that is closed (a process started with
    /// standard input, output or error closed), so that no file the process opens later takes
    /// that number: a service started without standard error would otherwise write its log
    /// lines into the first file it opened, its database. Call it before anything opens a file.
    /// Where /dev/null cannot be opened the descriptors stay as they are.
    package static func openNullOntoClosedDescriptors(_ descriptors: some Sequence<Int32>) {
        for fd in descriptors where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            guard let null = try? call("open", { open("/dev/null", O_RDWR) }) else { return }
            guard null != fd else { continue }
            _ = try? call("dup2") { dup2(null, fd) }
            close(null)
        }
    }
}
