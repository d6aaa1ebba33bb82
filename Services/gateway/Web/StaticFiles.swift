import Foundation
import RPC
import ServiceKit

/// The web storefront's files (API.md §9): `GET`/`HEAD` of the files under a root directory,
/// `/` as `index.html`, and any path without a dot (a client-side route such as
/// `/products/12`) as `index.html` too.
///
/// Every file is read once, when the gateway starts, into an immutable table keyed by its
/// path: serving is a dictionary lookup on the loop thread — no disk I/O there, and nothing
/// outside the root can be served, however a request spells its path, because only what the
/// walk found is in the table. The walk takes regular files only, skips names starting with a
/// dot, and follows a symbolic link only to a file inside the root. A root over 64 MiB or
/// 10,000 files is refused at start. Changed files are served after a restart.
struct StaticFiles: Sendable {
    /// One file, ready to send.
    struct File: Sendable {
        let body: Data
        let contentType: String
        /// A strong validator: a hash of the bytes, quoted.
        let etag: String
        let cacheControl: String
    }

    /// The most bytes, and files, a root may hold.
    static let maxTotalBytes = 64 << 20
    static let maxFileCount = 10_000
    /// SwiftPM's name for the gateway target's resources (`<package>_<target>.resources`),
    /// copied beside the executable by `swift build` and by deploy/Dockerfile.
    static let resourceBundleName = "Storefront_gateway.resources"

    /// Each file by its path from the root (`/js/app.js`), not percent-encoded.
    let files: [String: File]

    /// Reads every file under `root`, or under the storefront built into the gateway when nil.
    init(root: String?) throws {
        let directory = try root.map { URL(fileURLWithPath: $0) } ?? Self.builtInRoot()
        files = try Self.load(directory)
    }

    /// Serves `request` when it names a file (or `/`, or a client-side route); false otherwise.
    func serve(_ request: WebRequest, response: any WebResponse) -> Bool {
        guard request.path.hasPrefix("/") else { return false }
        guard let segments = Self.decodedSegments(request.path) else {
            WebEdge.sendText(response, status: 400, "Bad request path.\n")
            return true
        }
        let path = "/" + segments.joined(separator: "/")
        let file: File
        if let found = files[path.hasSuffix("/") ? path + "index.html" : path] {
            file = found
        } else if let index = files["/index.html"], !segments.contains(where: { $0.contains(".") }) {
            file = index
        } else {
            return false
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var headers = WebEdge.textHeaders
            headers.add("allow", "GET, HEAD")
            response.send(status: 405, headers: headers, body: Data("Use GET.\n".utf8))
            return true
        }
        var headers = Self.securityHeaders
        headers.add("etag", file.etag)
        headers.add("cache-control", file.cacheControl)
        if let tags = request.headers["if-none-match"], Self.matches(tags, file.etag) {
            response.send(status: 304, headers: headers, body: Data())
            return true
        }
        headers.add("content-type", file.contentType)
        // For HEAD too: the transport sends the content-length of this body, and not the body.
        response.send(status: 200, headers: headers, body: file.body)
        return true
    }

    /// What every answer carries: no sniffing, no framing, scripts and connections to this
    /// origin only (so the storefront has no inline script or style).
    static let securityHeaders: WebHeaders = [
        "x-content-type-options": "nosniff",
        "content-security-policy":
            "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
    ]

    // MARK: Requests

    /// The path's segments, percent-decoded; nil when a segment is `.` or `..`, holds a bad
    /// escape, invalid UTF-8, a NUL, a slash or a backslash once decoded.
    static func decodedSegments(_ path: String) -> [String]? {
        var segments: [String] = []
        for raw in path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard let segment = percentDecoded(raw), segment != ".", segment != "..",
                !segment.contains(where: { $0 == "\0" || $0 == "/" || $0 == "\\" })
            else { return nil }
            segments.append(segment)
        }
        return segments
    }

    /// Strict percent-decoding of a path segment (`+` stays a plus); nil on a bad escape or
    /// invalid UTF-8.
    static func percentDecoded(_ bytes: Substring.UTF8View) -> String? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            // Two hex digits exactly (`UInt8(_:radix:)` would take a sign: `%+A`).
            guard bytes.distance(from: index, to: bytes.endIndex) >= 2, let high = WebRequest.hexValue(bytes[index]),
                let low = WebRequest.hexValue(bytes[bytes.index(after: index)])
            else { return nil }
            decoded.append(high << 4 | low)
            index = bytes.index(index, offsetBy: 2)
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// Whether an `If-None-Match` value names `etag` (or is `*`); weak comparison (RFC 9110 §13.1.2).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }

    // MARK: Loading

    /// `WebRoot` in the resources SwiftPM copies beside the executable (Bundle.module's first
    /// place). Not `Bundle.module` itself: it ends the process when the resources are missing,
    /// where this says what to do.
    static func builtInRoot() throws -> URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let candidates = [Bundle.main.bundleURL, executable.deletingLastPathComponent()]
            .map { $0.appendingPathComponent(resourceBundleName).appendingPathComponent("WebRoot") }
        var isDirectory: ObjCBool = false
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path, isDirectory: &isDirectory) && isDirectory.boolValue })
        else {
            throw StartupError(
                "the built-in storefront is missing: \(resourceBundleName) must sit beside the gateway executable (swift build puts it there, deploy/Dockerfile copies it); give --web-root DIR or --no-web otherwise")
        }
        return found
    }

    /// Every servable file under `root`, read.
    static func load(_ root: URL) throws -> [String: File] {
        let top = root.resolvingSymlinksInPath()
        var files: [String: File] = [:]
        var total = 0
        var pending: [(directory: URL, path: String)] = [(top, "")]
        while let (directory, path) = pending.popLast() {
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            } catch {
                throw StartupError("cannot read the web root \(directory.path): \(error.localizedDescription)")
            }
            for name in names where !name.hasPrefix(".") {
                let url = directory.appendingPathComponent(name)
                let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
                switch attributes?[.type] as? FileAttributeType {
                case .typeDirectory?:
                    pending.append((url, path + "/" + name))
                case .typeRegular?:
                    files[path + "/" + name] = try read(url, total: &total, count: files.count)
                case .typeSymbolicLink?:
                    // Only to a regular file inside the root: a link cannot publish /etc/passwd.
                    let target = url.resolvingSymlinksInPath()
                    let inside = target.path.hasPrefix(top.path.hasSuffix("/") ? top.path : top.path + "/")
                    let targetType = (try? FileManager.default.attributesOfItem(atPath: target.path))?[.type] as? FileAttributeType
                    if inside && targetType == .typeRegular {
                        files[path + "/" + name] = try read(target, total: &total, count: files.count)
                    }
                default:
                    continue  // sockets, FIFOs (reading one would block the start), devices
                }
            }
        }
        return files
    }

    /// Reads one file, counting it against the root's bounds.
    private static func read(_ url: URL, total: inout Int, count: Int) throws -> File {
        let body: Data
        do {
            body = try Data(contentsOf: url)
        } catch {
            throw StartupError("cannot read \(url.path) of the web root: \(error.localizedDescription)")
        }
        total += body.count
        guard total <= maxTotalBytes, count < maxFileCount else {
            throw StartupError(
                "the web root holds more than \(maxTotalBytes >> 20) MiB or \(maxFileCount) files, which the gateway keeps in memory; serve large assets from elsewhere")
        }
        let type = contentType(ofExtension: url.pathExtension.lowercased())
        return File(body: body, contentType: type.name, etag: etag(of: body), cacheControl: type.cacheControl)
    }

    /// The content type of a file by its extension, and how long a browser may keep it
    /// without asking. The storefront's own code (HTML, scripts, styles) has no hashed names,
    /// so it is always revalidated (a cheap 304) — an old script never meets a new page.
    static func contentType(ofExtension pathExtension: String) -> (name: String, cacheControl: String) {
        let revalidate = "no-cache"
        let hour = "public, max-age=3600"
        switch pathExtension {
        case "html", "htm": return ("text/html; charset=utf-8", revalidate)
        case "js", "mjs": return ("text/javascript; charset=utf-8", revalidate)
        case "css": return ("text/css; charset=utf-8", revalidate)
        case "json", "map": return ("application/json", revalidate)
        case "webmanifest": return ("application/manifest+json", revalidate)
        case "txt": return ("text/plain; charset=utf-8", revalidate)
        case "xml": return ("application/xml", revalidate)
        case "svg": return ("image/svg+xml", hour)
        case "png": return ("image/png", hour)
        case "jpg", "jpeg": return ("image/jpeg", hour)
        case "gif": return ("image/gif", hour)
        case "webp": return ("image/webp", hour)
        case "avif": return ("image/avif", hour)
        case "ico": return ("image/x-icon", hour)
        case "woff2": return ("font/woff2", hour)
        case "woff": return ("font/woff", hour)
        case "wasm": return ("application/wasm", hour)
        default: return ("application/octet-stream", hour)
        }
    }

    /// A strong entity tag: FNV-1a (64 bits) of the bytes and their length, quoted.
    static func etag(of body: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return "\"\(String(hash, radix: 16))-\(String(body.count, radix: 16))\""
    }
}
